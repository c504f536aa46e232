import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noisePng, PNG_BASE64 } from '../support/images.js';
import { startSvc, type RunningSvc } from '../support/server.js';
import { REPO_ROOT } from '../support/svc.js';

// Debian's chromium, never a browser a tool downloads (see .ci/run).
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** The answer an endpoint's form shows. Its status line comes with the headers and the body after, so wait for the body. */
async function shownAnswer(endpoint: Locator): Promise<string> {
  const output = endpoint.locator('pre.output');
  await expect.poll(() => output.textContent()).not.toBe('');
  return (await output.textContent()) ?? '';
}

describe('the /docs page in a real browser', () => {
  let server: RunningSvc;
  let browser: Browser;
  // A server and a browser to start: beside the rest of the suite on two cores, that once
  // took more than vitest's 10 s for a hook.
  beforeAll(async () => {
    server = await startSvc([join(REPO_ROOT, 'examples/hello')]);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-background-networking'],
    });
  }, 60_000);
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
    await expect.poll(() => add.locator('pre.output').textContent()).toContain('"sum": 42');
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
      expect(JSON.parse(await shownAnswer(search))).toEqual({ q: '', limit: 2, tags: null });
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
      expect(await shownAnswer(endpoint)).toContain('You said: Hello');
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
      await expect.poll(() => target.logs()).toMatch(/^POST \/hello 403 \d+ms$/m); // request lines come within 50 ms
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
      expect(JSON.parse(await shownAnswer(inpaint))).toEqual({
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
      const envelope = JSON.parse(await shownAnswer(grayscale));
      expect(envelope.result).toMatchObject({ file_name: 'grayscale.png', content_type: 'image/png' });
      expect(envelope.result.content).toMatch(/^iVBORw0KGgo.*\.\.\. \(\d+ characters of base64\)$/);
      const image = grayscale.locator('.media img');
      await expect.poll(() => image.evaluate((element: any) => element.complete && element.naturalWidth)).toBeGreaterThan(0);
      expect(await grayscale.locator('.media a').getAttribute('download')).toBe('grayscale.png');
    } finally {
      await images.stop();
    }
  });

  describe('for a service documented in each docstring style', () => {
    let documented: RunningSvc;
    beforeAll(async () => {
      documented = await startSvc([join(REPO_ROOT, 'test/fixtures/docs/documented.py'), '--api-key', 'docs-key-456']);
    });
    afterAll(async () => {
      await documented?.stop();
    });

    /** The page with every endpoint open; the console's errors and the page's uncaught exceptions gather in `errors`. */
    async function openDocs(): Promise<{ page: Page; errors: string[]; endpoint: (path: string) => Locator }> {
      const page = await browser.newPage();
      const errors: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') errors.push(message.text());
      });
      page.on('pageerror', (error) => errors.push(error.message));
      await page.goto(`${documented.url}/docs`);
      await expect.poll(() => page.locator('details.endpoint').count()).toBe(4);
      for (const summary of await page.locator('details.endpoint summary').all()) await summary.click();
      return { page, errors, endpoint: (path) => page.locator(`details.endpoint[data-path="${path}"]`) };
    }
    const row = (endpoint: Locator, name: string) => endpoint.locator(`tr[data-parameter="${name}"]`);
    const cells = async (endpoint: Locator, name: string) => ({
      type: await row(endpoint, name).locator('.type').textContent(),
      required: (await row(endpoint, name).locator('.required').count()) === 1,
      default: (await row(endpoint, name).locator('.default').count()) ? await row(endpoint, name).locator('.default').textContent() : null,
      help: await row(endpoint, name).locator('.help .text').textContent(),
      choices: (await row(endpoint, name).locator('.choices').count()) ? await row(endpoint, name).locator('.choices').textContent() : null,
    });

    it("shows each parameter's type, required marker, default and docstring help, from Google, NumPy and reST docstrings", async () => {
      const { endpoint } = await openDocs();
      const speak = endpoint('/speak');
      expect(await cells(speak, 'text')).toEqual({ type: 'string', required: true, default: null, help: 'What to say. Said as written.', choices: null });
      expect(await cells(speak, 'times')).toEqual({ type: 'integer', required: false, default: 'default: 1', help: 'How many times to say it.', choices: null });
      expect(await cells(speak, 'voice')).toEqual({ type: 'Voice', required: false, default: 'default: "calm"', help: 'How it sounds.', choices: 'one of: "calm", "loud"' });
      // The Args: section is by each parameter now, not in one flattened paragraph above them.
      expect(await speak.locator('.doc').textContent()).toBe('Says a text (Google style).\n\nReturns:\n    The words said.');

      const resize = endpoint('/resize');
      expect(await cells(resize, 'width')).toEqual({ type: 'integer', required: true, default: null, help: 'The new width, in pixels.', choices: null });
      expect(await cells(resize, 'mode')).toEqual({ type: 'string', required: false, default: 'default: "fit"', help: 'Keep the aspect ratio, or fill the box.', choices: 'one of: "fit", "fill"' });
      expect(await resize.locator('.doc').textContent()).toBe('Resizes a box (NumPy style).\n\nReturns\n-------\ndict\n    The new size.');

      const label = endpoint('/label');
      expect(await cells(label, 'image')).toEqual({ type: 'file', required: true, default: null, help: 'The picture to label.', choices: null });
      expect(await cells(label, 'scale')).toEqual({ type: 'number | null', required: false, default: 'default: null', help: "How much to enlarge it; left out, it keeps its size.", choices: null });
      expect(await label.locator('.doc').textContent()).toBe("Labels an image (reST style).\n\n:returns: the label and the image's name.");

      // The same help reaches every client through /openapi.json.
      const document = (await (await fetch(`${documented.url}/openapi.json`)).json()) as any;
      expect(document.paths['/resize'].post.requestBody.content['application/json'].schema.properties.height.description).toBe('The new height, in pixels.');
    });

    it('offers an enum and a boolean as a select whose choice goes into the body it sends', async () => {
      const { endpoint } = await openDocs();
      const speak = endpoint('/speak');
      const voice = speak.locator('select[name=voice]');
      expect(await voice.locator('option').allTextContents()).toEqual(['(not sent)', 'calm', 'loud']);
      expect(await voice.inputValue()).toBe('"calm"');
      expect(await speak.locator('select[name=shout] option').allTextContents()).toEqual(['(not sent)', 'true', 'false']);
      await speak.getByLabel('text', { exact: true }).fill('hi');
      await voice.selectOption({ label: 'loud' });
      await speak.locator('select[name=shout]').selectOption({ label: 'true' });
      await speak.getByLabel('times', { exact: true }).fill('2');
      expect(JSON.parse(await speak.locator('textarea').inputValue())).toEqual({ text: 'hi', voice: 'loud', times: 2, shout: true });
      await voice.selectOption({ label: '(not sent)' });
      expect(JSON.parse(await speak.locator('textarea').inputValue())).toEqual({ text: 'hi', times: 2, shout: true });
      // Editing the body shows in the controls too.
      await speak.locator('textarea').fill('{"text": "yo", "voice": "loud"}');
      expect(await voice.inputValue()).toBe('"loud"');
      expect(await speak.getByLabel('times', { exact: true }).inputValue()).toBe('');

      await sendFromPage(speak, 'docs-key-456');
      expect(JSON.parse(await shownAnswer(speak))).toEqual({ said: 'yo', voice: 'loud' });
    });

    /** Types the key into the page and sends the endpoint's form. */
    async function sendFromPage(endpoint: Locator, key: string): Promise<void> {
      await endpoint.page().getByLabel('API key').fill(key);
      await endpoint.getByRole('button', { name: 'Send' }).click();
      await expect.poll(() => endpoint.locator('.status').textContent()).toMatch(/^200/);
    }

    it("shows a curl command that gets the page's answer: a JSON body, and a form with a file and a quote", async () => {
      const { endpoint } = await openDocs();
      const directory = await mkdtemp(join(tmpdir(), 'svc-docs-curl-'));
      try {
        const runCurl = async (snippet: string) => JSON.parse((await execa('sh', ['-c', snippet], { cwd: directory })).stdout);

        const speak = endpoint('/speak');
        await speak.getByLabel('text', { exact: true }).fill("it's <fine> & done");
        await sendFromPage(speak, 'docs-key-456');
        const curl = (await speak.locator('pre.curl').textContent()) ?? '';
        expect(curl).toContain("authorization: Bearer docs-key-456");
        expect(await runCurl(curl)).toEqual(JSON.parse(await shownAnswer(speak)));
        expect(await runCurl(curl)).toEqual({ said: "it's <fine> & done", voice: 'calm' });

        const label = endpoint('/label');
        const png = Buffer.from(PNG_BASE64, 'base64');
        await writeFile(join(directory, 'photo.png'), png);
        await label.locator('input[name=image]').setInputFiles({ name: 'photo.png', mimeType: 'image/png', buffer: png });
        await label.getByLabel('caption', { exact: true }).fill('@not-a-file; said "twice"');
        await label.getByLabel('scale', { exact: true }).fill('1.5');
        await sendFromPage(label, 'docs-key-456');
        const form = (await label.locator('pre.curl').textContent()) ?? '';
        expect(form).toContain("-F 'image=@photo.png'");
        const answer = JSON.parse(await shownAnswer(label));
        expect(answer).toEqual({ caption: '@not-a-file; said "twice"', image: 'photo.png', scale: 1.5 });
        expect(await runCurl(form)).toEqual(answer);
      } finally {
        await rm(directory, { recursive: true, force: true });
      }
    });

    it('serves its icon at /favicon.ico, and the browser console shows no error', async () => {
      const icon = await fetch(`${documented.url}/favicon.ico`);
      expect(icon.status).toBe(200);
      expect(icon.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
      expect(await icon.text()).toMatch(/^<svg /);
      const { page, errors, endpoint } = await openDocs();
      await page.goto(`${documented.url}/favicon.ico`);
      await page.goto(`${documented.url}/docs`);
      await expect.poll(() => page.locator('details.endpoint').count()).toBe(4);
      const resize = endpoint('/resize');
      await resize.locator('summary').click();
      await resize.getByLabel('width', { exact: true }).fill('10');
      await sendFromPage(resize, 'docs-key-456');
      expect(errors).toEqual([]);
    });

    it("leaves /favicon.ico to a service's endpoint there", async () => {
      const own = await startSvc([join(REPO_ROOT, 'test/fixtures/docs/own-favicon.py')]);
      try {
        expect(await (await fetch(`${own.url}/favicon.ico`)).json()).toBe("the service's own icon");
      } finally {
        await own.stop();
      }
    });

    it('shows markup from docstrings and enum values as text, and runs none of it', async () => {
      const { page, errors, endpoint } = await openDocs();
      const escape = endpoint('/escape');
      expect(await escape.locator('.doc').textContent()).toContain('<script>window.ranFromDocstring = true</script><img src=x onerror=');
      expect(await cells(escape, 'kind')).toMatchObject({ help: 'The <script>window.ranFromParameter = true</script> kind.', choices: 'one of: "<b>bold</b>", "plain"' });
      expect(await escape.locator('select[name=kind] option').allTextContents()).toEqual(['(not sent)', '<b>bold</b>', 'plain']);
      await escape.locator('select[name=kind]').selectOption({ label: '<b>bold</b>' });
      await sendFromPage(escape, 'docs-key-456');
      expect(JSON.parse(await shownAnswer(escape))).toEqual({ kind: '<b>bold</b>' });
      expect(await page.evaluate(() => [(globalThis as any).ranFromDocstring, (globalThis as any).ranFromParameter])).toEqual([undefined, undefined]);
      expect(await page.locator('script, img, b').count()).toBe(1); // the page's own script
      expect(errors).toEqual([]);
    });
  });
});
