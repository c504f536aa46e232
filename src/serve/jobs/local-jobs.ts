import { HttpError } from '../http-error.js';
import type { JobBackend, JobStoreUsage, JobSubmission } from './job-backend.js';
import type { JobRunner } from './job-runner.js';
import type { JobStore } from './job-store.js';
import type { Job } from './job.js';
import { keyShareRefusal } from './key-share.js';

/**
 * The jobs of one server: kept in its memory (`JobStore`, written through to SQLite with
 * `--job-store sqlite:`) and run on its own pool (`JobRunner`). The job a method returns is the
 * store's own object, which later changes update in place.
 */
export class LocalJobs implements JobBackend {
  constructor(
    private readonly store: JobStore,
    private readonly runner: JobRunner,
    /** Seconds a key over its share is told to wait when it has no unread result to expire. */
    private readonly retryAfterSeconds: number,
  ) {}

  async submit(submission: JobSubmission, onEnd: () => void): Promise<Job> {
    const job = this.accept(submission, onEnd, false);
    // Written before it is answered: a job whose id a client holds survives a crash.
    await this.keptOrDropped(job, this.store.persisted());
    return job;
  }

  async submitAndWait(submission: JobSubmission, onEnd: () => void, timeoutMs: number): Promise<Job> {
    const job = this.accept(submission, onEnd, true);
    await this.store.waitUntilEnded(job, timeoutMs);
    // Written as it is now, in one statement however far it got: no client knew its id before.
    await this.keptOrDropped(job, this.store.answering(job));
    return job;
  }

  /** A job its journal could not write (a full disk: a 503) is not accepted: stopped and forgotten. */
  private async keptOrDropped(job: Job, written: Promise<void>): Promise<void> {
    try {
      await written;
    } catch (error) {
      this.runner.cancel(job);
      this.store.discard(job);
      throw error;
    }
  }

  /** Creates the job and queues its call, or refuses it (see JobBackend.submit). */
  private accept({ endpoint, owner, streams, args, keyCount, created, discarded }: JobSubmission, onEnd: () => void, writtenWhenAnswered: boolean): Job {
    const { store } = this;
    const overShare = keyShareRefusal(store.holdingOf(owner), store.limits, keyCount);
    if (overShare !== null) {
      onEnd();
      // Its own unread results decide when it may go on; with none, its running jobs do.
      const retryAfter = store.secondsUntilUnreadExpires(owner) ?? this.retryAfterSeconds;
      throw new HttpError(429, 'too_many_requests', 'key_results_unread', overShare, { headers: { 'retry-after': String(retryAfter) } });
    }
    const refusal = store.refusal();
    if (refusal !== null) {
      onEnd();
      throw new HttpError(503, 'queue_full', 'results_unread', refusal.message, { headers: { 'retry-after': String(refusal.retryAfterSeconds) } });
    }
    const job = store.create(endpoint, owner, streams, args, writtenWhenAnswered);
    created?.(job);
    try {
      this.runner.start(job, args, onEnd);
    } catch (error) {
      discarded?.(job);
      store.discard(job);
      onEnd();
      throw error;
    }
    return job;
  }

  async find(id: string, owner: string | null): Promise<Job | undefined> {
    return this.store.get(id, owner);
  }

  async waitUntilEnded(job: Job, timeoutMs: number): Promise<Job> {
    await this.store.waitUntilEnded(job, timeoutMs);
    return job;
  }

  watch(job: Job, listener: (job: Job) => void): () => void {
    return this.store.watch(job, listener);
  }

  async cancel(job: Job): Promise<Job> {
    this.runner.cancel(job);
    return job;
  }

  async usage(): Promise<JobStoreUsage> {
    return { ...this.store.usage, ...this.store.limits };
  }

  get unreadCount(): number {
    return this.store.unreadCount;
  }

  whenEndedJobsRead(timeoutMs: number): Promise<void> {
    return this.store.whenEndedJobsRead(timeoutMs);
  }

  /** None is left by then: each job here ended with the pool, or was kept for the next start, which ends its waits. */
  stopWaiting(): void {}
}
