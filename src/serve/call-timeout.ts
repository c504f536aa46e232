import type { CallCancel } from '../worker/cancel-signal.js';
import type { JobSettings } from './gateway-options.js';
import { HttpError } from './http-error.js';

type TimeoutSettings = Pick<JobSettings, 'timeoutsMs' | 'defaultTimeoutMs'>;

/** How long a call or job may run once a worker has started it: its endpoint's own time-out, else the default. */
export function timeoutMsFor(endpoint: string, settings: TimeoutSettings): number {
  return settings.timeoutsMs.get(endpoint) ?? settings.defaultTimeoutMs;
}

/**
 * Cancels a dedicated call once it has run past its time-out: `start` when a worker takes
 * it, `clear` when it ends; `timedOut` tells a cancellation of svc's own from a client's.
 */
export class CallDeadline {
  timedOut = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly cancel: CallCancel,
    private readonly timeoutMs: number,
  ) {}

  readonly start = (): void => {
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.cancel.abort();
    }, this.timeoutMs);
  };

  clear(): void {
    clearTimeout(this.timer);
  }
}

/** A dedicated call cut off at its time-out: 504, as a gateway says that what it waited on took too long. */
export function callTimedOut(endpoint: string, settings: TimeoutSettings): HttpError {
  return new HttpError(504, 'timeout', 'timeout', `the call ran longer than the time-out of ${endpoint}, ${timeoutMsFor(endpoint, settings) / 1000} s`);
}
