import type { CallOutcome } from '../worker/worker-process.js';

export type Crash = Extract<CallOutcome, { kind: 'crashed' }>;

/** What a client or a job is told of a worker that died mid-call. */
export function crashDescription({ message, stderrTail }: Crash, debug: boolean): string {
  return debug && stderrTail.length > 0 ? `${message}; its last stderr lines:\n${stderrTail.join('\n')}` : message;
}
