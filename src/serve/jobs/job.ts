import type { Value } from '../../worker/protocol.js';
import type { JobStatus } from './job-status.js';

export interface JobError {
  type: string;
  message: string;
  /** Only when the server runs with --debug. */
  traceback?: string;
}

/** One asynchronous call and everything a client can learn about it. */
export interface Job {
  readonly id: string;
  readonly endpoint: string;
  /** Whether its endpoint is a generator, whose chunks a client may follow as they come. */
  readonly streams: boolean;
  /** The API key (by its id, never the key) that created the job; null when auth is off. */
  readonly owner: string | null;
  status: JobStatus;
  progress: number | null;
  message: string | null;
  result: Value | null;
  error: JobError | null;
  /** Chunks a generator endpoint has yielded so far. */
  chunks: Value[];
  readonly createdAt: number;
  startedAt: number | null;
  finishedAt: number | null;
}
