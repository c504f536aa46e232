import type { CallOutcome } from '../worker/worker-process.js';
import { HttpError } from './http-error.js';

type Crash = Extract<CallOutcome, { kind: 'crashed' }>;

/**
 * A worker that died mid-call. Its last stderr lines (already in svc's log) may come from
 * other clients' calls and svc's own internals, so a client sees them only with --debug.
 */
export function crashFailure(outcome: Crash, debug: boolean): HttpError {
  if (outcome.stoppedByShutdown) {
    return new HttpError(503, 'unavailable', 'server_shutdown', 'the server stopped, and its grace period ended during this call; send it again');
  }
  return new HttpError(500, 'worker_crashed', 'worker_crashed', crashDescription(outcome, debug));
}

export function crashDescription({ message, stderrTail }: Crash, debug: boolean): string {
  return debug && stderrTail.length > 0 ? `${message}; its last stderr lines:\n${stderrTail.join('\n')}` : message;
}
