import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { JobStore } from '../../src/serve/jobs/job-store.js';
import { toEnvelope } from '../../src/serve/jobs/job-envelope.js';
import { MEMORY_DELIVERY_LOG } from '../../src/serve/webhooks/delivery-log.js';
import { WebhookDispatcher, type WebhookSettings } from '../../src/serve/webhooks/webhook-dispatcher.js';
import { WebhookSecrets } from '../../src/serve/webhooks/webhook-secrets.js';

const closers: Array<() => void> = [];
afterEach(() => closers.splice(0).forEach((close) => close()));

/** A receiver on loopback that holds each answer `delayMs`, as a slow receiver does, and keeps the payloads. */
async function slowReceiver(delayMs: number) {
  const payloads: any[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk));
    request.on('end', () => {
      payloads.push(JSON.parse(body));
      setTimeout(() => response.end('ok'), delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => server.close());
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, payloads };
}

function dispatcherFor(store: JobStore, settings: Partial<WebhookSettings> = {}) {
  const secrets = new WebhookSecrets(join(mkdtempSync(join(tmpdir(), 'svc-hooks-unit-')), 'secrets.json'));
  secrets.rotate(null);
  const dispatcher = new WebhookDispatcher({
    log: MEMORY_DELIVERY_LOG,
    secrets,
    settings: { allowPrivate: true, retryDelaysMs: [], timeoutMs: 5_000, throttleMs: 0, ...settings },
    envelope: (job, baseUrl) => toEnvelope(job, baseUrl, { service_id: 'test', version: '0', hardware: 'cpu' }),
    retentionMs: 60_000,
    userAgent: 'test',
  });
  store.onAnyChange((job) => dispatcher.observe(job));
  closers.push(() => dispatcher.stop());
  return dispatcher;
}

async function until(test: () => boolean): Promise<void> {
  for (let tries = 0; !test(); tries++) {
    if (tries > 400) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('the webhook dispatcher', () => {
  it('coalesces progress that comes while a delivery is under way: the receiver gets the latest, not every step', async () => {
    const receiver = await slowReceiver(300);
    const store = new JobStore({ ttlMs: 60_000, maxRetained: 100, maxRetainedBytes: 2 ** 20 });
    const dispatcher = dispatcherFor(store);
    const job = store.create('/run', null);
    dispatcher.subscribe(job, { url: receiver.url, events: ['started', 'progress', 'completed'], baseUrl: 'http://svc' });
    store.move(job, 'PROCESSING');
    for (let step = 1; step <= 10; step++) store.update(job, { progress: step / 10, message: `step ${step}` });
    store.move(job, 'FINISHED', { result: 'done' });
    await until(() => receiver.payloads.some((payload) => payload.event === 'completed'));

    expect(receiver.payloads.map((payload) => [payload.event, payload.message])).toEqual([
      ['started', null],
      ['progress', 'step 10'],
      ['completed', 'step 10'],
    ]);
    await until(() => dispatcher.status(job.id)?.status === 'delivered');
  });

  it('holds non-terminal events to one per --webhook-throttle, but not the end', async () => {
    const receiver = await slowReceiver(0);
    const store = new JobStore({ ttlMs: 60_000, maxRetained: 100, maxRetainedBytes: 2 ** 20 });
    const job = store.create('/run', null);
    const started = Date.now();
    const dispatcher = dispatcherFor(store, { throttleMs: 400 });
    dispatcher.subscribe(job, { url: receiver.url, events: ['progress', 'completed'], baseUrl: 'http://svc' });
    store.move(job, 'PROCESSING');
    store.update(job, { progress: 0.5 });
    await until(() => receiver.payloads.length === 1);
    store.update(job, { progress: 0.6 });
    store.update(job, { progress: 0.7 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(receiver.payloads).toHaveLength(1); // 0.7 waits for the throttle
    await until(() => receiver.payloads.length === 2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(380);
    expect(receiver.payloads[1].progress).toBe(0.7);
    store.update(job, { progress: 0.8 });
    store.move(job, 'FINISHED', { result: 1 });
    // Ended: what waits goes at once, progress then completed.
    const ended = Date.now();
    await until(() => receiver.payloads.length === 4);
    expect(Date.now() - ended).toBeLessThan(300);
    expect(receiver.payloads.slice(2).map((payload) => payload.event)).toEqual(['progress', 'completed']);
  });
});
