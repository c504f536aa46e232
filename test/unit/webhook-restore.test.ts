import { describe, expect, it } from 'vitest';
import { MEMORY_DELIVERY_LOG, type DeliveryLog, type Subscription } from '../../src/serve/webhooks/delivery-log.js';
import { WebhookDispatcher } from '../../src/serve/webhooks/webhook-dispatcher.js';
import { WebhookSecrets } from '../../src/serve/webhooks/webhook-secrets.js';
import type { Job } from '../../src/serve/jobs/job.js';

const subscription = (jobId: string): Subscription => ({ jobId, owner: null, url: 'https://hooks.example/in', events: ['started'], baseUrl: 'http://svc' });

/** A log as a restarted server finds it: one subscription whose filter left `completed` out, its last event delivered. */
function keptLog(forgotten: string[]): DeliveryLog {
  return {
    ...MEMORY_DELIVERY_LOG,
    forget: (jobId) => forgotten.push(jobId),
    load: () => ({
      subscriptions: [{ subscription: subscription('ended-job'), state: { status: 'delivered', attempts: 1, lastEvent: 'started', lastError: null }, updatedAt: 1_000 }],
      deliveries: [],
    }),
  };
}

function dispatcherAt(clock: { now: number }, log: DeliveryLog): WebhookDispatcher {
  return new WebhookDispatcher({
    log,
    secrets: new WebhookSecrets('/nonexistent/webhook-secrets.json'),
    settings: { allowPrivate: false, retryDelaysMs: [], timeoutMs: 1000, throttleMs: 0 },
    envelope: () => ({}) as never,
    retentionMs: 60_000,
    userAgent: 'test',
    now: () => clock.now,
  });
}

const newJob = { id: 'next-job', owner: null, status: 'PENDING', progress: 0, message: null, chunks: [] } as unknown as Job;

describe('webhook subscriptions kept across a restart', () => {
  it("forgets one whose job ended before the restart once the retention passes, though its filter left 'completed' out", () => {
    const forgotten: string[] = [];
    const clock = { now: 2_000 };
    const dispatcher = dispatcherAt(clock, keptLog(forgotten));
    dispatcher.restore(() => true);
    expect(dispatcher.status('ended-job')).toMatchObject({ status: 'delivered' }); // still on the envelope within the retention
    clock.now = 62_000;
    dispatcher.subscribe(newJob, { url: 'https://hooks.example/in', events: ['completed'], baseUrl: 'http://svc' });
    expect(forgotten).toEqual(['ended-job']);
    expect(dispatcher.status('ended-job')).toBeUndefined();
  });

  it('keeps one whose job is still to run, as its next events are still to come', () => {
    const forgotten: string[] = [];
    const clock = { now: 2_000 };
    const dispatcher = dispatcherAt(clock, keptLog(forgotten));
    dispatcher.restore(() => false);
    clock.now = 62_000;
    dispatcher.subscribe(newJob, { url: 'https://hooks.example/in', events: ['completed'], baseUrl: 'http://svc' });
    expect(forgotten).toEqual([]);
  });
});
