import type { JobArguments } from './job-journal.js';
import type { StoreLimits } from './key-share.js';
import type { Job } from './job.js';

/** A call to run as a job, as the endpoint route read it. */
export interface JobSubmission {
  endpoint: string;
  /** The API key's id; null when auth is off. */
  owner: string | null;
  /** Whether the endpoint is a generator. */
  streams: boolean;
  args: JobArguments;
  /** How many API keys the server has: with two or more, each gets its share (key-share.ts). */
  keyCount: number;
  /** Told of the job once it exists, before it can start (a webhook subscribes then). */
  created?: (job: Job) => void;
  /** Told of a job `created` announced that was then refused after all (its queue was full). */
  discarded?: (job: Job) => void;
}

/** The unread results a store holds against its limits (`GET /health`). */
export interface JobStoreUsage extends StoreLimits {
  unread: number;
  unreadBytes: number;
  /** Whether they fill it: new jobs are refused then. */
  full: boolean;
}

/**
 * Where jobs are kept, queued and followed: what the job routes, the endpoint routes, the
 * health route and a stopping server ask of the jobs, whichever backend keeps them. One server's
 * memory (optionally written through to SQLite: local-jobs.ts), or Redis shared by many
 * replicas (redis-jobs.ts). A `Job` a method returns is the job as it was then; `waitUntilEnded`
 * and `watch` give later states.
 */
export interface JobBackend {
  /**
   * Accepts a job and queues its call; resolves once it is kept where a crash does not lose it.
   * Throws an HttpError for a key over its share (429) or a store full of unread results or
   * out of reach (503), and the pool's QueueFullError or PoolClosedError. `onEnd` runs once
   * the job has ended (it frees the files staged for it).
   */
  submit(submission: JobSubmission, onEnd: () => void): Promise<Job>;
  /**
   * `submit`, then `waitUntilEnded` (`Prefer: wait`): resolves with the job as it is when it
   * ended or `timeoutMs` passed, kept where a crash does not lose it. A backend may keep it
   * only then, in one write: until the submit is answered no client holds the job's id.
   */
  submitAndWait(submission: JobSubmission, onEnd: () => void, timeoutMs: number): Promise<Job>;
  /** The job, when it exists, has not expired and belongs to `owner`; an ended one counts as read. */
  find(id: string, owner: string | null): Promise<Job | undefined>;
  /** The job once it has ended, or as it is when `timeoutMs` has passed. */
  waitUntilEnded(job: Job, timeoutMs: number): Promise<Job>;
  /** Calls `listener` with each later state of the job until the returned function is called. */
  watch(job: Job, listener: (job: Job) => void): () => void;
  /** Cancels the job wherever it runs or waits; returns it as it is then (an ended job stays as it was). */
  cancel(job: Job): Promise<Job>;
  usage(): Promise<JobStoreUsage>;
  /** How many jobs that ended on this server no client has read, which a stopping server waits for. */
  readonly unreadCount: number;
  /** Resolves when those have been read, or after `timeoutMs`. */
  whenEndedJobsRead(timeoutMs: number): Promise<void>;
  /**
   * At a stop, once this server's calls have ended: every `waitUntilEnded` still pending
   * resolves now, with its job as it is (a job another replica will run), so that its client
   * is answered before the server closes, and no wait holds the stopped process open.
   */
  stopWaiting(): void;
}
