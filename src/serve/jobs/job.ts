import { randomFillSync } from 'node:crypto';
import type { JsonText } from '../../worker/json-text.js';
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
  /** A large one stays the worker's JSON text, written to the client and the store as it is, parsed only if read. */
  result: Value | JsonText | null;
  error: JobError | null;
  /** Chunks a generator endpoint has yielded so far. */
  chunks: Value[];
  readonly createdAt: number;
  startedAt: number | null;
  finishedAt: number | null;
}

/** A job just accepted, in `status` (PENDING until a queue has it; QUEUED where the queue is the store). */
export function newJob(fields: Pick<Job, 'endpoint' | 'streams' | 'owner'>, status: JobStatus, createdAt: number): Job {
  return {
    // 128 random bits: job URLs are unguessable, so a job id is not a way in.
    id: randomJobId(),
    ...fields,
    status,
    progress: 0,
    message: null,
    result: null,
    error: null,
    chunks: [],
    createdAt,
    startedAt: null,
    finishedAt: null,
  };
}

const ID_BYTES = 16;
const POOL_BYTES = 4096;
let idPool = Buffer.alloc(0);
let idPoolAt = 0;

/**
 * 16 random bytes as hex, sliced from a pool drawn a few kilobytes at a time, as Node draws
 * those of randomUUID: each draw from the system's generator cost a job 2-10 µs, a slice of the
 * pool ~0.1 µs. Each byte is used once.
 */
function randomJobId(): string {
  if (idPoolAt + ID_BYTES > idPool.length) {
    idPool = randomFillSync(Buffer.allocUnsafe(POOL_BYTES));
    idPoolAt = 0;
  }
  const id = idPool.toString('hex', idPoolAt, idPoolAt + ID_BYTES);
  idPoolAt += ID_BYTES;
  return id;
}
