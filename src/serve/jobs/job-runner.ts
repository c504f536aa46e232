import type { CallOutcome } from '../../worker/worker-process.js';
import { CallCancel } from '../../worker/cancel-signal.js';
import { QueueFullError } from '../../worker/worker-pool.js';
import type { CallBackend } from '../call-backend.js';
import { isTerminal } from './job-status.js';
import { callOf, releaseJobArguments } from './job-arguments.js';
import { releaseLongStrings } from '../released-buffers.js';
import type { JobMediaFiles } from './job-media-files.js';
import { removeStagedFiles, removeStagedFilesNow } from '../../worker/transit-files.js';
import type { JobArguments } from './job-journal.js';
import type { JobStore } from './job-store.js';
import type { Job } from './job.js';
import { crashDescription } from '../worker-crash.js';
import { timeoutMsFor } from '../call-timeout.js';
import { generatorResult } from '../generator-result.js';

export interface JobRunnerOptions {
  /** Longest a job may run once it has started, by endpoint path; `defaultTimeoutMs` otherwise. */
  timeoutsMs: ReadonlyMap<string, number>;
  defaultTimeoutMs: number;
  /** Include Python tracebacks in job errors. */
  debug: boolean;
  /** Where a job's media base64 is decoded to for its worker (job-media-files.ts); absent, the worker decodes it. */
  media?: JobMediaFiles;
}

/** Where a running job's changes go: the store of this server, or Redis (redis-job-writes.ts). */
export type JobMoves = Pick<JobStore, 'move' | 'update' | 'keepForNextStart'>;

/** Why a job's call was aborted, which decides the status it ends in. */
type AbortReason = 'cancelled' | 'timeout';

/**
 * Runs jobs on the call runner (the worker pool) and moves them through their statuses:
 * QUEUED when accepted by the pool, PROCESSING when a worker takes the call, STREAMING
 * with the first chunk, then one terminal status. Every accepted job ends: a call the pool
 * drops (shutdown) fails the job with a message saying so.
 */
export class JobRunner {
  /** Each running job's cancel, and why it was aborted (null: not yet). */
  private readonly cancels = new Map<string, { cancel: CallCancel; reason: AbortReason | null }>();
  /** Recovered jobs the queue had no room for yet: each job that ends makes room for the next. */
  private readonly backlog: Array<{ job: Job; args: JobArguments }> = [];

  constructor(
    private readonly store: JobMoves,
    private readonly runner: Pick<CallBackend, 'submit'>,
    private readonly options: JobRunnerOptions,
  ) {}

  /** Queues the call; throws the pool's QueueFullError (before the job is visible) when full. */
  start(job: Job, args: JobArguments, onEnd: () => void = () => {}): void {
    const abort = { cancel: new CallCancel(), reason: null as AbortReason | null };
    this.cancels.set(job.id, abort);
    let timer: NodeJS.Timeout | undefined;
    let outcome: Promise<CallOutcome>;
    const call = callOf(args);
    const { longStrings, stagedFiles } = this.options.media?.stage(job.endpoint, call.callArguments, call.longStrings) ?? { longStrings: call.longStrings, stagedFiles: [] };
    try {
      outcome = this.runner.submit(job.endpoint, call.callArguments, {
        id: job.id,
        longStrings,
        signal: abort.cancel,
        // The store's writes for the job (PROCESSING now, QUEUED below) need not delay its run.
        sendAtOnce: true,
        onStart: () => {
          if (isTerminal(job.status)) return;
          this.store.move(job, 'PROCESSING');
          timer = setTimeout(() => this.abort(job, 'timeout'), timeoutMsFor(job.endpoint, this.options));
          timer.unref();
        },
        onProgress: (progress, message) => {
          if (isTerminal(job.status)) return;
          this.store.update(job, { progress: progress ?? job.progress, message: message ?? job.message });
        },
        onChunk: (value) => {
          if (isTerminal(job.status)) return;
          job.chunks.push(value);
          if (job.status === 'PROCESSING') this.store.move(job, 'STREAMING');
          else this.store.update(job, {});
        },
      });
    } catch (error) {
      this.cancels.delete(job.id);
      removeStagedFilesNow(stagedFiles);
      throw error;
    }
    // A free worker may already have taken the call (PENDING -> PROCESSING) inside submit.
    if (job.status === 'PENDING') this.store.move(job, 'QUEUED');
    void outcome.then((result) => {
      if (stagedFiles.length > 0) void removeStagedFiles(stagedFiles);
      clearTimeout(timer);
      this.cancels.delete(job.id);
      this.finish(job, result, abort.reason);
      if (isTerminal(job.status)) {
        // A job is kept after its end, long enough for what it holds to outlive the young
        // collections that would free it (released-buffers.ts): its arguments' bytes go now.
        releaseJobArguments(args);
        releaseLongStrings(longStrings);
      }
      onEnd();
      if (this.backlog.length > 0) this.runBacklog();
    });
  }

  /**
   * Runs the jobs a journal kept across a restart, in the order they came, once the pool
   * serves. A job whose endpoint the service no longer has, or that the pool refuses
   * otherwise (it is stopping), fails saying so.
   */
  resume(jobs: ReadonlyArray<{ job: Job; args: JobArguments }>): void {
    this.backlog.push(...jobs);
    this.runBacklog();
  }

  private runBacklog(): void {
    for (let next = this.backlog[0]; next !== undefined; next = this.backlog[0]) {
      if (!isTerminal(next.job.status)) {
        try {
          this.start(next.job, next.args);
        } catch (error) {
          if (error instanceof QueueFullError) return;
          this.store.move(next.job, 'FAILED', { error: { type: 'NotRunnable', message: `the job could not be run again after the server restarted: ${(error as Error).message}` } });
        }
      }
      this.backlog.shift();
    }
  }

  /**
   * Cancels a job: a queued one leaves the queue, a running one is interrupted in its
   * worker (killed after the grace period). The job reads CANCELLED at once; an ended job
   * is left as it is.
   */
  cancel(job: Job): void {
    if (isTerminal(job.status)) return;
    this.abort(job, 'cancelled');
    this.store.move(job, 'CANCELLED', { message: 'cancelled by the client' });
  }

  private abort(job: Job, reason: AbortReason): void {
    const abort = this.cancels.get(job.id);
    if (!abort || abort.reason !== null) return;
    abort.reason = reason;
    abort.cancel.abort();
    if (reason === 'timeout' && !isTerminal(job.status)) {
      const limit = timeoutMsFor(job.endpoint, this.options) / 1000;
      this.store.move(job, 'TIMEOUT', {
        error: { type: 'Timeout', message: `the job ran longer than its time-out of ${limit} s` },
      });
    }
  }

  private finish(job: Job, outcome: CallOutcome, abortReason: AbortReason | null): void {
    if (isTerminal(job.status)) return;
    switch (outcome.kind) {
      case 'result':
        this.store.move(job, 'FINISHED', { result: job.streams ? generatorResult(outcome.value) : (outcome.json ?? outcome.value), progress: 1 });
        return;
      case 'error': {
        const { type, message, traceback } = outcome.error;
        this.store.move(job, 'FAILED', { error: { type, message, ...(this.options.debug ? { traceback } : {}) } });
        return;
      }
      case 'crashed':
        if (outcome.stoppedByShutdown && this.store.keepForNextStart(job, 'the server stopped while this job ran: it runs again when the server starts again')) return;
        this.store.move(job, 'FAILED', {
          error: outcome.stoppedByShutdown
            ? { type: 'ServerShutdown', message: 'the server stopped, and its grace period ended while this job ran; submit it again' }
            : { type: 'WorkerCrashed', message: crashDescription(outcome, this.options.debug) },
        });
        return;
      case 'cancelled':
        // Not asked for by the client or a time-out: the pool dropped the call while stopping.
        if (abortReason !== 'cancelled' && this.store.keepForNextStart(job, 'the server is stopping: this job runs when it starts again')) return;
        this.store.move(job, abortReason === 'cancelled' ? 'CANCELLED' : 'FAILED', {
          error: abortReason === 'cancelled' ? null : { type: 'ServerShutdown', message: 'the server stopped before this job could run; submit it again' },
        });
    }
  }
}
