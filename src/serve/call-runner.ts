import type { CallOptions, CallOutcome } from '../worker/worker-process.js';
import type { AppReport, EndpointReport, Value } from '../worker/protocol.js';

export type HealthState = 'STARTING' | 'READY' | 'BUSY' | 'SETUP_FAILED' | 'DEFUNCT' | 'STOPPING';

/** The states in which the service takes calls: what "healthy" and "ready" mean to orchestrators. */
export const SERVING_HEALTH_STATES: readonly HealthState[] = ['READY', 'BUSY'];

/**
 * What the gateway needs from whatever runs calls: the worker pool locally, and any
 * stand-in a test or a provider puts in its place. Keeps HTTP free of process handling.
 */
export interface CallRunner {
  readonly app: AppReport;
  readonly endpoints: readonly EndpointReport[];
  /** Throws QueueFullError when the endpoint's queue is at its bound. */
  submit(endpoint: string, args: { [parameter: string]: Value }, options: CallOptions): Promise<CallOutcome>;
  health(): { state: HealthState; workers: number; busy: number; queued: number };
}
