import type { CallOptions, CallOutcome } from '../worker/worker-process.js';
import type { HealthState } from '../worker/health-state.js';
import type { AppReport, EndpointReport, Value } from '../worker/protocol.js';

/**
 * What the gateway needs from whatever runs calls behind it: the worker pool locally, and
 * any stand-in a test or a provider puts in its place. Keeps HTTP free of process handling.
 * (The worker's python/apipod/_runtime/call_runner.py is the other end: it runs one call in Python.)
 */
export interface CallBackend {
  readonly app: AppReport;
  readonly endpoints: readonly EndpointReport[];
  /** Throws QueueFullError when the endpoint's queue is at its bound. */
  submit(endpoint: string, args: { [parameter: string]: Value }, options: CallOptions): Promise<CallOutcome>;
  health(): { state: HealthState; workers: number; busy: number; queued: number };
}
