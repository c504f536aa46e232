import { randomUUID } from 'node:crypto';
import { signWebhook } from '../../client/webhook-signature.js';
import type { JobEnvelope, WebhookStatus } from '../jobs/job-envelope.js';
import { storedJson, type JsonTree } from '../json-chunks.js';
import type { Job } from '../jobs/job.js';
import type { Delivery, DeliveryLog, DeliveryState, Subscription } from './delivery-log.js';
import { eventsOf, firstSight, type SeenJob, type WebhookEvent } from './webhook-events.js';
import type { WebhookSecrets } from './webhook-secrets.js';
import { attemptDelivery, type Attempt, type AttemptOutcome } from './webhook-sender.js';

export interface WebhookSettings {
  /** Let webhooks reach private, loopback and link-local addresses (--webhook-allow-private). */
  allowPrivate: boolean;
  /** The wait before each retry; past the last, the event is given up on (--webhook-retry-delays). */
  retryDelaysMs: readonly number[];
  /** Longest one attempt may take (--webhook-timeout). */
  timeoutMs: number;
  /** Least time between two non-terminal events of a job (--webhook-throttle). */
  throttleMs: number;
}

export interface DispatcherParts {
  log: DeliveryLog;
  secrets: WebhookSecrets;
  settings: WebhookSettings;
  /** The job's envelope as a poll at `baseUrl` returns it. */
  envelope: (job: Job, baseUrl: string) => JobEnvelope;
  /** How long a finished subscription's status stays on its job's envelope (the jobs' TTL). */
  retentionMs: number;
  userAgent: string;
  now?: () => number;
  random?: () => number;
  attempt?: (attempt: Attempt) => Promise<AttemptOutcome>;
}

interface Tracked {
  subscription: Subscription;
  state: DeliveryState;
  /** Deliveries in the order their events happened; the first is the one being tried. */
  queue: Delivery[];
  seen: SeenJob;
  sending: boolean;
  timer: NodeJS.Timeout | null;
  /** When the last non-terminal event was sent, for the throttle. */
  lastSentAt: number;
  /** Whether its `completed` event was queued: no event comes after it. */
  completed: boolean;
}

/**
 * Delivers each job's webhook events, one at a time and in order per job, signed after
 * Standard Webhooks. Non-terminal events go at most one per `throttleMs`; while one waits,
 * a later event of its kind takes its place (the latest progress wins; a `streaming` payload
 * carries every chunk so far, so none is lost). Every event is retried on 429, 5xx and
 * network errors after `retryDelaysMs` (each ±20% so that many receivers coming back at once
 * are not hit together), a 410 stops all deliveries queued for its URL, and anything else is
 * given up on at once. The job's result stays readable by polling whatever befalls them.
 */
export class WebhookDispatcher {
  private readonly tracked = new Map<string, Tracked>();
  /** Ended subscriptions in the order they ended, to drop their status after the retention. */
  private readonly finished = new Map<string, number>();
  private stopped = false;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly attempt: (attempt: Attempt) => Promise<AttemptOutcome>;

  constructor(private readonly parts: DispatcherParts) {
    this.now = parts.now ?? Date.now;
    this.random = parts.random ?? Math.random;
    this.attempt = parts.attempt ?? attemptDelivery;
  }

  /** A job just created with a webhook: written down before its submit is answered. */
  subscribe(job: Job, request: { url: string; events: WebhookEvent[]; baseUrl: string }): void {
    this.sweep();
    const subscription: Subscription = { jobId: job.id, owner: job.owner, ...request };
    this.parts.log.subscribe(subscription);
    this.tracked.set(job.id, this.track(subscription, { status: 'pending', attempts: 0, lastEvent: null, lastError: null }, firstSight(job)));
  }

  /** Resolves once the subscriptions made so far are kept (on disk with a SQLite job store). */
  persisted(): Promise<void> {
    return this.parts.log.persisted();
  }

  /** A job that was never accepted (its queue was full). */
  unsubscribe(jobId: string): void {
    this.tracked.delete(jobId);
    this.parts.log.forget(jobId);
  }

  /**
   * Goes on with what the log kept from the last server: queued deliveries go out as they are
   * due. `jobIsOver` says which jobs ended before the restart (or are gone): their
   * subscriptions are over once their queue drains, even with a filter that left `completed`
   * out, so that the retention sweeps them.
   */
  restore(jobIsOver: (jobId: string) => boolean): void {
    const { subscriptions, deliveries } = this.parts.log.load();
    for (const { subscription, state, updatedAt } of subscriptions) {
      const tracked = this.track(subscription, state, { started: false, progressKey: JSON.stringify([0, null]), chunks: 0 });
      this.tracked.set(subscription.jobId, tracked);
      // Over once its end was delivered or given up on, its receiver said 410, or its job
      // ended: a job still running (to run again) whose queue merely drained goes on getting its events.
      if (state.lastEvent === 'completed' || state.status === 'gone' || jobIsOver(subscription.jobId)) {
        tracked.completed = true;
        this.finished.set(subscription.jobId, updatedAt);
      }
    }
    for (const delivery of deliveries) {
      const tracked = this.tracked.get(delivery.jobId);
      if (tracked === undefined) continue;
      tracked.queue.push(delivery);
      if (delivery.event === 'completed') tracked.completed = true;
      this.finished.delete(delivery.jobId);
    }
    for (const tracked of this.tracked.values()) this.pump(tracked);
  }

  /**
   * A job the restart failed without running it (the server died twice while it ran): the
   * store announces no change, so its webhook learns of the end here, and of nothing before it.
   */
  endedWhileDown(job: Job): void {
    const tracked = this.tracked.get(job.id);
    if (tracked === undefined) return;
    tracked.seen = { ...firstSight(job), chunks: job.chunks.length };
    this.observe(job);
  }

  /** Called on every change of every job (JobStore.onAnyChange). */
  observe(job: Job): void {
    const tracked = this.tracked.get(job.id);
    if (tracked === undefined || tracked.completed || tracked.state.status === 'gone') return;
    for (const event of eventsOf(job, tracked.seen)) {
      if (tracked.subscription.events.includes(event)) this.enqueue(tracked, event, job);
      // The end is the end even for a filter without `completed`: nothing follows it.
      if (event === 'completed') tracked.completed = true;
    }
    if (tracked.completed && tracked.queue.length === 0) this.finish(tracked);
  }

  /** What the job's envelope says of its webhook; undefined for a job without one. */
  status(jobId: string): WebhookStatus | undefined {
    const tracked = this.tracked.get(jobId);
    if (tracked === undefined) return undefined;
    const { subscription, state } = tracked;
    return { url: subscription.url, events: subscription.events, status: state.status, attempts: state.attempts, last_event: state.lastEvent, last_error: state.lastError };
  }

  /** Stops every timer; what was not delivered stays in the log for the next server. */
  stop(): void {
    this.stopped = true;
    for (const tracked of this.tracked.values()) if (tracked.timer !== null) clearTimeout(tracked.timer);
  }

  private track(subscription: Subscription, state: DeliveryState, seen: SeenJob): Tracked {
    return { subscription, state, queue: [], seen, sending: false, timer: null, lastSentAt: 0, completed: false };
  }

  private enqueue(tracked: Tracked, event: WebhookEvent, job: Job): void {
    const envelope = this.parts.envelope(job, tracked.subscription.baseUrl);
    // A large result goes in as the bytes it is kept as, not parsed and serialised again.
    const payload = storedJson({ ...envelope, event, ...(event === 'streaming' ? { chunks: job.chunks } : {}) } as unknown as JsonTree);
    if (event !== 'completed') {
      // One not yet being tried is replaced: its receiver would learn nothing from the older one.
      const waiting = tracked.queue.find((delivery, index) => delivery.event === event && !(index === 0 && tracked.sending));
      if (waiting !== undefined) {
        waiting.payload = payload;
        this.parts.log.replace(waiting.messageId, payload);
        return;
      }
    }
    const delivery: Delivery = { messageId: `msg_${randomUUID().replaceAll('-', '')}`, jobId: job.id, event, payload, attempts: 0, nextAt: this.now() };
    tracked.queue.push(delivery);
    this.parts.log.enqueue(delivery);
    this.pump(tracked);
  }

  private pump(tracked: Tracked): void {
    if (this.stopped || tracked.sending) return;
    if (tracked.timer !== null) clearTimeout(tracked.timer);
    tracked.timer = null;
    const head = tracked.queue[0];
    if (head === undefined) return;
    let due = head.nextAt;
    // The throttle holds progress back, not the end: once the job ended, what waits goes.
    const ending = tracked.queue.some((delivery) => delivery.event === 'completed');
    if (head.event !== 'completed' && !ending) due = Math.max(due, tracked.lastSentAt + this.parts.settings.throttleMs);
    const wait = due - this.now();
    if (wait > 0) {
      tracked.timer = setTimeout(() => {
        tracked.timer = null;
        this.pump(tracked);
      }, wait);
      tracked.timer.unref();
      return;
    }
    void this.send(tracked, head);
  }

  private async send(tracked: Tracked, delivery: Delivery): Promise<void> {
    tracked.sending = true;
    // Not written down: after a restart, an attempt under way is one still to make.
    tracked.state.status = delivery.attempts > 0 ? 'retrying' : 'delivering';
    const outcome = await this.sign(tracked.subscription.owner, delivery, (headers) =>
      this.attempt({
        url: tracked.subscription.url,
        body: delivery.payload,
        headers: { 'content-type': 'application/json', 'user-agent': this.parts.userAgent, ...headers },
        timeoutMs: this.parts.settings.timeoutMs,
        allowPrivate: this.parts.settings.allowPrivate,
      }),
    );
    tracked.sending = false;
    if (this.stopped) return;
    this.settle(tracked, delivery, outcome);
    if (tracked.completed && tracked.queue.length === 0) this.finish(tracked);
    this.pump(tracked);
  }

  /** Makes the attempt with the owner's signature headers, or says why it cannot be signed. */
  private async sign(owner: string | null, delivery: Delivery, attempt: (headers: Record<string, string>) => Promise<AttemptOutcome>): Promise<AttemptOutcome> {
    let secrets: string[];
    try {
      secrets = this.parts.secrets.signingSecrets(owner);
    } catch (error) {
      // The secrets file went bad while serving: the event is retried, and goes once it is put right.
      return { kind: 'retry', error: (error as Error).message };
    }
    if (secrets.length === 0) return { kind: 'rejected', error: 'no webhook secret for this API key: svc webhook-secret makes one' };
    const timestamp = Math.floor(this.now() / 1000);
    return attempt({
      'webhook-id': delivery.messageId,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': signWebhook(secrets, delivery.messageId, timestamp, delivery.payload),
    });
  }

  private settle(tracked: Tracked, delivery: Delivery, outcome: AttemptOutcome): void {
    const attempts = delivery.attempts + 1;
    const base = { attempts, lastEvent: delivery.event };
    switch (outcome.kind) {
      case 'delivered':
        this.drop(tracked, delivery);
        if (delivery.event !== 'completed') tracked.lastSentAt = this.now();
        this.setState(tracked, { ...base, status: tracked.queue.length === 0 ? 'delivered' : 'pending', lastError: null });
        return;
      case 'retry': {
        const delay = this.parts.settings.retryDelaysMs[delivery.attempts];
        if (delay === undefined) {
          this.drop(tracked, delivery);
          this.setState(tracked, { ...base, status: 'failed', lastError: `${outcome.error} (gave up on the ${delivery.event} event after ${attempts} attempts)` });
          return;
        }
        delivery.attempts = attempts;
        delivery.nextAt = this.now() + Math.round(delay * (0.8 + 0.4 * this.random()));
        this.parts.log.attempted(delivery.messageId, attempts, delivery.nextAt);
        this.setState(tracked, { ...base, status: 'retrying', lastError: outcome.error });
        return;
      }
      case 'gone':
        // 410 Gone: the receiver says it wants nothing more, for this job or any other.
        for (const other of this.tracked.values()) {
          if (other.subscription.url !== tracked.subscription.url) continue;
          // Another job's attempt under way settles by itself.
          for (const queued of [...other.queue]) if (!(other.sending && queued === other.queue[0])) this.drop(other, queued);
          other.completed = true;
          this.setState(other, { ...(other === tracked ? base : {}), status: 'gone', lastError: outcome.error });
          this.finish(other);
        }
        return;
      case 'rejected':
        this.drop(tracked, delivery);
        this.setState(tracked, { ...base, status: 'failed', lastError: outcome.error });
    }
  }

  private drop(tracked: Tracked, delivery: Delivery): void {
    const index = tracked.queue.indexOf(delivery);
    if (index >= 0) tracked.queue.splice(index, 1);
    this.parts.log.done(delivery.messageId);
  }

  private setState(tracked: Tracked, changes: Partial<DeliveryState>): void {
    Object.assign(tracked.state, changes);
    this.parts.log.state(tracked.subscription.jobId, tracked.state);
  }

  private finish(tracked: Tracked): void {
    this.finished.delete(tracked.subscription.jobId);
    this.finished.set(tracked.subscription.jobId, this.now());
  }

  /** Forgets the status of subscriptions that ended longer ago than the retention, oldest first. */
  private sweep(): void {
    const cutoff = this.now() - this.parts.retentionMs;
    for (const [jobId, endedAt] of this.finished) {
      if (endedAt > cutoff) break;
      this.finished.delete(jobId);
      this.tracked.delete(jobId);
      this.parts.log.forget(jobId);
    }
  }
}
