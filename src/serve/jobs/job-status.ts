/**
 * The job statuses of the hosted inference API and the one table of legal moves between
 * them. Everything that changes a job's status goes through `assertTransition`, so an
 * illegal move is a bug a test catches, never a silently inconsistent envelope.
 */
export const JOB_STATUSES = [
  'PENDING',
  'QUEUED',
  'PROCESSING',
  'STREAMING',
  'FINISHED',
  'FAILED',
  'TIMEOUT',
  'CANCELLED',
  'UNKNOWN',
] as const;

export type JobStatus = (typeof JOB_STATUSES)[number];

export const TERMINAL_STATUSES: ReadonlySet<JobStatus> = new Set(['FINISHED', 'FAILED', 'TIMEOUT', 'CANCELLED']);

const ENDINGS: readonly JobStatus[] = ['FAILED', 'TIMEOUT', 'CANCELLED'];

/**
 * PENDING: accepted, not yet in a queue. QUEUED: waiting for a worker. PROCESSING: running.
 * STREAMING: a generator has sent its first chunk. UNKNOWN is what a client shows for a
 * status it cannot read; the server never moves a job into or out of it.
 */
export const TRANSITIONS: Readonly<Record<JobStatus, readonly JobStatus[]>> = {
  PENDING: ['QUEUED', 'PROCESSING', ...ENDINGS],
  QUEUED: ['PROCESSING', ...ENDINGS],
  PROCESSING: ['STREAMING', 'FINISHED', ...ENDINGS],
  STREAMING: ['FINISHED', ...ENDINGS],
  FINISHED: [],
  FAILED: [],
  TIMEOUT: [],
  CANCELLED: [],
  UNKNOWN: [],
};

export class IllegalTransitionError extends Error {
  override readonly name = 'IllegalTransitionError';

  constructor(
    readonly from: JobStatus,
    readonly to: JobStatus,
  ) {
    super(`a job cannot move from ${from} to ${to}`);
  }
}

export function canTransition(from: JobStatus, to: JobStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

export function assertTransition(from: JobStatus, to: JobStatus): void {
  if (!canTransition(from, to)) throw new IllegalTransitionError(from, to);
}

export function isTerminal(status: JobStatus): boolean {
  return TERMINAL_STATUSES.has(status);
}
