import type { WebhookEvent } from './webhook-events.js';

/** A job's webhook, as its submit named it. */
export interface Subscription {
  jobId: string;
  /** The API key id whose secret signs the deliveries; null on a keyless server. */
  owner: string | null;
  url: string;
  events: WebhookEvent[];
  /** The origin the job's URLs in the payload use, as its submit reached the server. */
  baseUrl: string;
}

/** How a job's deliveries go, as its envelope shows it. */
export interface DeliveryState {
  status: 'pending' | 'delivering' | 'retrying' | 'delivered' | 'failed' | 'gone';
  attempts: number;
  lastEvent: WebhookEvent | null;
  lastError: string | null;
}

/** One event to deliver: its id and payload stay the same over its attempts (receivers deduplicate by the id). */
export interface Delivery {
  messageId: string;
  jobId: string;
  event: WebhookEvent;
  /** Its JSON; a large one as UTF-8 bytes, never parsed and serialised again on its way. */
  payload: string | Buffer;
  attempts: number;
  /** When the next attempt may go (ms since the epoch). */
  nextAt: number;
}

/**
 * Where deliveries are kept until they are made or given up on: a table beside the jobs in
 * the SQLite job file, so that a restart goes on delivering as it goes on running jobs; or
 * nowhere but the dispatcher's memory (`--job-store memory`), as the jobs themselves.
 */
export interface DeliveryLog {
  subscribe(subscription: Subscription): void;
  /** Resolves once the subscriptions made so far are on disk: then their submits may be answered. */
  persisted(): Promise<void>;
  enqueue(delivery: Delivery): void;
  /** A queued event's payload replaced by a later one of its kind (coalescing). */
  replace(messageId: string, payload: string | Buffer): void;
  attempted(messageId: string, attempts: number, nextAt: number): void;
  /** Made, or given up on. */
  done(messageId: string): void;
  state(jobId: string, state: DeliveryState): void;
  forget(jobId: string): void;
  /** Every subscription kept, and the deliveries still to make in the order they were queued. */
  load(): { subscriptions: Array<{ subscription: Subscription; state: DeliveryState; updatedAt: number }>; deliveries: Delivery[] };
  close(): void;
}

/** `--job-store memory`: the dispatcher's own memory is all there is, as for the jobs. */
export const MEMORY_DELIVERY_LOG: DeliveryLog = {
  subscribe: () => {},
  persisted: () => Promise.resolve(),
  enqueue: () => {},
  replace: () => {},
  attempted: () => {},
  done: () => {},
  state: () => {},
  forget: () => {},
  load: () => ({ subscriptions: [], deliveries: [] }),
  close: () => {},
};
