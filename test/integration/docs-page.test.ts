import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noisePng, PNG_BASE64 } from '../support/images.js';
import { startSvc, type RunningSvc } from '../support/server.js';
import { REPO_ROOT } from '../support/svc.js';

// Debian's chromium, never a browser a tool downloads (see .ci/run).
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

describe('the /docs page in a real browser', () => {
  let server: RunningSvc;
  let browser: Browser;
  beforeAll(async () => {
    server = await startSvc([join(REPO_ROOT, 'examples/hello')]);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-background-networking'],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('renders, lists every endpoint, and sends a request from its form', async () => {
    const page = await browser.newPage();
    await page.goto(`${server.url}/docs`);
    await expect.poll(() => page.locator('details.endpoint').count()).toBe(2);
    expect(await page.title()).toBe('Hello - API docs');
    expect(await page.locator('details.endpoint summary').allTextContents()).toEqual([
      expect.stringContaining('POST /hello'),
      expect.stringContaining('POST /add'),
    ]);

    const add = page.locator('details.endpoint[data-path="/add"]');
    await add.locator('summary').click();
    await add.locator('textarea').fill('{"a": 40, "b": 2}');
    await add.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => add.locator('pre').textContent()).toContain('"sum": 42');
    expect(await add.locator('.status').textContent()).toMatch(/^200/);
  });

  it("calls a keyed service with the key typed into the page, and a GET endpoint with its own example", async () => {
    const keyed = await startSvc([join(REPO_ROOT, 'test/fixtures/jobs/calls.py'), '--compute', 'dedicated', '--api-key', 'docs-key-123']);
    try {
      const page = await browser.newPage();
      await page.goto(`${keyed.url}/docs`);
      const search = page.locator('details.endpoint[data-path="/search"]');
      await search.locator('summary').click();
      await search.getByRole('button', { name: 'Send' }).click();
      await expect.poll(() => search.locator('.status').textContent()).toMatch(/^401/);
      await page.getByLabel('API key').fill('docs-key-123');
      await search.getByRole('button', { name: 'Send' }).click();
      await expect.poll(() => search.locator('.status').textContent()).toMatch(/^200/);
      // The prefilled example has "tags": null, which leaves the parameter to its default.
      expect(JSON.parse((await search.locator('pre').textContent()) ?? '')).toEqual({ q: '', limit: 2, tags: null });
    } finally {
      await keyed.stop();
    }
  });

  it('fills a chat endpoint with a request that asks for something, not with zeros', async () => {
    const chat = await startSvc([join(REPO_ROOT, 'examples/chat')]);
    try {
      const page = await browser.newPage();
      await page.goto(`${chat.url}/docs`);
      const endpoint = page.locator('details.endpoint[data-path="/chat"]');
      await endpoint.locator('summary').click();
      expect(JSON.parse(await endpoint.locator('textarea').inputValue())).toEqual({ messages: [{ role: 'user', content: 'Hello' }] });
      await endpoint.getByRole('button', { name: 'Send' }).click();
      await expect.poll(() => endpoint.locator('.status').textContent()).toMatch(/^200/);
      expect(await endpoint.locator('pre').textContent()).toContain('You said: Hello');
    } finally {
      await chat.stop();
    }
  });

  it('lets a page from an origin given by --cors-origin call a keyed service, and no other', async () => {
    const pages = createServer((_request, response) => response.end('<!doctype html><title>app</title>'));
    await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
    const appOrigin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
    const opened = await startSvc([join(REPO_ROOT, 'examples/hello'), '--api-key', 'cors-key-123', '--cors-origin', appOrigin]);
    const closed = await startSvc([join(REPO_ROOT, 'examples/hello'), '--api-key', 'cors-key-123']);
    try {
      const page = await browser.newPage();
      await page.goto(appOrigin);
      const callFromPage = (url: string, accept: string) =>
        page.evaluate(async ([target, type]) => {
          try {
            const response = await fetch(`${target}/hello`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', accept: type as string, authorization: 'Bearer cors-key-123' },
              body: JSON.stringify({ name: 'Page' }),
            });
            return await response.text();
          } catch (error) {
            return `blocked: ${(error as Error).name}`;
          }
        }, [url, accept]);
      const allowed = opened.url.replace('localhost', '127.0.0.1');
      expect(JSON.parse(await callFromPage(allowed, 'application/json'))).toEqual({ greeting: 'Hello, Page.' });
      // A call answered as server-sent events carries the CORS headers too.
      expect(await callFromPage(allowed, 'text/event-stream')).toContain('event: status');
      expect(await callFromPage(closed.url.replace('localhost', '127.0.0.1'), 'application/json')).toBe('blocked: TypeError');
    } finally {
      await Promise.all([opened.stop(), closed.stop()]);
      pages.close();
    }
  });

  it('keeps a page of another origin from running an endpoint with a plain form POST, which no preflight precedes', async () => {
    const target = await startSvc([join(REPO_ROOT, 'examples/hello')]);
    const action = `${target.url.replace('localhost', '127.0.0.1')}/hello`;
    const pages = createServer((_request, response) =>
      response.end(`<!doctype html><form method="post" action="${action}"><input name="name" value="Mallory"></form><script>document.forms[0].submit()</script>`),
    );
    await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
    try {
      const page = await browser.newPage();
      await page.goto(`http://127.0.0.1:${(pages.address() as AddressInfo).port}`);
      await page.waitForURL(action);
      expect(JSON.parse((await page.locator('body').textContent()) as string).error.code).toBe('origin_not_allowed');
      expect(target.logs()).toMatch(/^POST \/hello 403 \d+ms$/m);
    } finally {
      await target.stop();
      pages.close();
    }
  });

  it('uploads files from its file inputs: one file, an optional one left empty, and several for a list', async () => {
    const uploads = await startSvc([join(REPO_ROOT, 'test/fixtures/gateway/uploads.py')]);
    try {
      const page = await browser.newPage();
      await page.goto(`${uploads.url}/docs`);
      const inpaint = page.locator('details.endpoint[data-path="/inpaint"]');
      await inpaint.locator('summary').click();
      const png = (name: string) => ({ name, mimeType: 'image/png', buffer: Buffer.from(PNG_BASE64, 'base64') });
      const fileInputs = inpaint.locator('input[type=file]');
      expect(await fileInputs.evaluateAll((inputs) => inputs.map((input: any) => [input.name, input.multiple, input.accept]))).toEqual([
        ['image', false, 'image/*'],
        ['mask', false, 'image/*'],
        ['references', true, 'image/*'],
      ]);
      await inpaint.locator('input[name=image]').setInputFiles(png('photo.png'));
      await inpaint.locator('input[name=references]').setInputFiles([png('first.png'), png('second.png')]);
      await inpaint.getByRole('button', { name: 'Send' }).click();
      await expect.poll(() => inpaint.locator('.status').textContent()).toMatch(/^200/);
      const size = Buffer.from(PNG_BASE64, 'base64').length;
      expect(JSON.parse((await inpaint.locator('pre').textContent()) ?? '')).toEqual({
        image: 'photo.png',
        mask: null,
        references: [['first.png', size], ['second.png', size]],
        strength: 0.5,
      });
    } finally {
      await uploads.stop();
    }
  });

  it("follows a serverless job until it ends, and shows the image it returns, with its base64 shortened", async () => {
    const images = await startSvc([join(REPO_ROOT, 'examples/image'), '--compute', 'serverless']);
    try {
      const page = await browser.newPage();
      await page.goto(`${images.url}/docs`);
      const grayscale = page.locator('details.endpoint[data-path="/grayscale"]');
      await grayscale.locator('summary').click();
      await grayscale.locator('input[name=image]').setInputFiles({ name: 'noise.png', mimeType: 'image/png', buffer: noisePng(64, 64) });
      await grayscale.getByRole('button', { name: 'Send' }).click();
      await expect.poll(() => grayscale.locator('.status').textContent()).toBe('Job FINISHED');
      const envelope = JSON.parse((await grayscale.locator('pre').textContent()) ?? '');
      expect(envelope.result).toMatchObject({ file_name: 'grayscale.png', content_type: 'image/png' });
      expect(envelope.result.content).toMatch(/^iVBORw0KGgo.*\.\.\. \(\d+ characters of base64\)$/);
      const image = grayscale.locator('.media img');
      await expect.poll(() => image.evaluate((element: any) => element.complete && element.naturalWidth)).toBeGreaterThan(0);
      expect(await grayscale.locator('.media a').getAttribute('download')).toBe('grayscale.png');
    } finally {
      await images.stop();
    }
  });
});
