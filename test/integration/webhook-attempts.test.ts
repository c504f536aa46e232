import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { attemptDelivery } from '../../src/serve/webhooks/webhook-sender.js';

const closers: Array<() => void> = [];
afterEach(() => closers.splice(0).forEach((close) => close()));

async function receiver(listener: RequestListener): Promise<{ port: number; hits: () => number }> {
  let hits = 0;
  const server = createServer((request, response) => {
    hits += 1;
    listener(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => {
    server.closeAllConnections();
    server.close();
  });
  return { port: (server.address() as AddressInfo).port, hits: () => hits };
}

const attempt = (url: string, allowPrivate = true, timeoutMs = 2_000) => attemptDelivery({ url, headers: { 'content-type': 'application/json' }, body: '{}', timeoutMs, allowPrivate });

describe('one webhook delivery attempt', () => {
  it('does not follow a redirect, and names where it pointed', async () => {
    const target = await receiver((_request, response) => response.end('ok'));
    const bouncer = await receiver((_request, response) => response.writeHead(307, { location: `http://127.0.0.1:${target.port}/` }).end());
    expect(await attempt(`http://127.0.0.1:${bouncer.port}/`)).toEqual({
      kind: 'rejected',
      error: `HTTP 307: redirects are not followed (Location: http://127.0.0.1:${target.port}/)`,
    });
    expect(target.hits()).toBe(0);
  });

  it('refuses a name that resolves to loopback when it connects, without the flag, and sends nothing', async () => {
    const local = await receiver((_request, response) => response.end('ok'));
    const outcome = await attempt(`http://localhost:${local.port}/`, false);
    expect(outcome).toMatchObject({ kind: 'rejected', error: expect.stringMatching(/^localhost resolves to (127\.0\.0\.1|::1), a private, loopback or link-local address$/) });
    expect(await attempt(`http://127.0.0.1:${local.port}/`, false)).toEqual({ kind: 'rejected', error: '127.0.0.1 is a private, loopback or link-local address' });
    expect(local.hits()).toBe(0);
  });

  it('gives up on a receiver that does not answer within the time-out, to be retried', async () => {
    const silent = await receiver(() => {});
    const started = Date.now();
    expect(await attempt(`http://127.0.0.1:${silent.port}/`, true, 300)).toEqual({ kind: 'retry', error: 'no answer within 0.3 s' });
    expect(Date.now() - started).toBeLessThan(1_500);
  });

  it("reads no more than 1 KiB of an error answer, however long, and quotes its start", async () => {
    let written = 0;
    const flood = await receiver((_request, response) => {
      response.writeHead(503);
      const more = () => {
        while (written < 50 * 2 ** 20 && response.write('x'.repeat(65_536))) written += 65_536;
        if (written < 50 * 2 ** 20) response.once('drain', more);
        else response.end();
      };
      more();
    });
    const outcome = await attempt(`http://127.0.0.1:${flood.port}/`);
    expect(outcome.kind).toBe('retry');
    expect((outcome as { error: string }).error).toBe(`HTTP 503: ${'x'.repeat(200)}`);
    expect(written).toBeLessThan(50 * 2 ** 20);
  });
});
