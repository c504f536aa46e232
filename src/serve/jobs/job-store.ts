import { EventEmitter } from 'node:events';
import { assertTransition, isTerminal, type JobStatus } from './job-status.js';
import type { JobArguments, JobJournal } from './job-journal.js';
import type { RecoveryPlan } from './job-recovery.js';
import { newJob, type Job } from './job.js';
import type { KeyHolding, StoreLimits } from './key-share.js';
import { approximateBytes } from './value-size.js';

export interface RetentionPolicy {
  /** How long a job stays readable after it ends. */
  ttlMs: number;
  /** Most ended jobs kept. */
  maxRetained: number;
  /** Most memory the ended jobs' results and chunks may hold, estimated. */
  maxRetainedBytes: number;
}

/** Why no job can be taken now, and when to try again. */
export interface Refusal {
  message: string;
  retryAfterSeconds: number;
}

/** Not a job id (those are hex): the event for "no ended job is left unread". */
const ALL_READ = 'all-read';
/** Not a job id either: the event every job's change is also announced on (`onAnyChange`). */
const ANY_JOB = 'any-job';

export type JobChanges = Partial<Pick<Job, 'progress' | 'message' | 'result' | 'error'>>;

/**
 * Jobs in memory, each readable any number of times until its retention ends. Memory stays
 * bounded: running and queued jobs are bounded by the queues, ended ones by the TTL, a
 * count and a size in bytes. Beyond the count or the size, the oldest jobs a client has
 * read go first; a job no client has read is never dropped before its TTL, so when those
 * alone fill the retention, new jobs are refused (`refusal`) rather than a result lost.
 * Every status change goes through the state machine and is announced, which is what
 * waiting requests and event streams listen to. With a journal (`--job-store sqlite:`), each
 * job is also written down as it is accepted, starts, ends, is read and is forgotten, so that
 * a server started after a crash goes on where this one stopped (`restore`).
 */
export class JobStore {
  private readonly jobs = new Map<string, Job>();
  private readonly ended = new Set<string>();
  /** Ended jobs whose outcome no client has seen yet; a stopping server waits for them to be read. */
  private readonly unread = new Set<string>();
  /**
   * The unread jobs taken back from a journal: they count against the retention, but a
   * stopping server does not wait for them, as they outlive it in the journal once more.
   */
  private readonly carried = new Set<string>();
  /** The estimated size of each ended job's result and chunks. */
  private readonly sizes = new Map<string, number>();
  private retainedBytes = 0;
  private unreadBytes = 0;
  /** By owner: the jobs not ended or not read, and the unread ones' size; for each key's share. */
  private readonly holdings = new Map<string | null, KeyHolding>();
  private readonly events = new EventEmitter();
  /** Jobs a stopping server leaves to the journal: no waiting client waits for their end. */
  private readonly keptForNextStart = new Set<string>();

  constructor(
    private readonly retention: RetentionPolicy,
    private readonly now: () => number = Date.now,
    private readonly journal: JobJournal | null = null,
  ) {
    this.events.setMaxListeners(0);
  }

  /**
   * A new job, written to the journal with its arguments before the caller answers: at once
   * (`persisted`), or, when the caller waits for its end first, as it is then (`answering`).
   */
  create(endpoint: string, owner: string | null, streams = false, args: JobArguments = {}, writtenWhenAnswered = false): Job {
    this.expire();
    const job = newJob({ endpoint, streams, owner }, 'PENDING', this.now());
    if (writtenWhenAnswered) this.journal?.recordWhenAnswered(job, args);
    else this.journal?.record(job, args);
    this.jobs.set(job.id, job);
    this.hold(owner, 1, 0);
    return job;
  }

  /** Resolves once the jobs created so far are in the journal, if there is one: then a submit may be answered. */
  persisted(): Promise<void> {
    return this.journal?.persisted() ?? Promise.resolve();
  }

  /** Resolves once a job created `writtenWhenAnswered` is in the journal, as it is now. */
  answering(job: Job): Promise<void> {
    return this.journal?.answering(job.id) ?? Promise.resolve();
  }

  /**
   * Takes back what a journal kept when the last server stopped: ended jobs readable (and
   * unread) as they were, and the jobs to run again, which it returns. Called once, before
   * any job is created.
   */
  restore(plan: RecoveryPlan): RecoveryPlan['toRun'] {
    for (const id of plan.expired) this.journal?.forget(id);
    for (const { job, read } of plan.kept) {
      this.keepEnded(job, !read);
      if (!read) {
        this.carried.add(job.id);
        this.hold(job.owner, 1, this.sizes.get(job.id) ?? 0);
      }
    }
    for (const job of plan.failed) {
      this.keepEnded(job, true);
      this.hold(job.owner, 1, this.sizes.get(job.id) ?? 0);
      this.journal?.ended(job);
    }
    for (const { job } of plan.toRun) {
      this.jobs.set(job.id, job);
      this.hold(job.owner, 1, 0);
    }
    this.enforceCap();
    return plan.toRun;
  }

  /** The job, when it exists, has not expired, and belongs to this caller. */
  get(id: string, owner: string | null): Job | undefined {
    this.expire();
    const job = this.jobs.get(id);
    if (!job || job.owner !== owner) return undefined;
    if (isTerminal(job.status)) this.markRead(id);
    return job;
  }

  /** Whether the job has ended, or is not kept at all (expired, or never was). */
  hasEnded(id: string): boolean {
    const job = this.jobs.get(id);
    return job === undefined || isTerminal(job.status);
  }

  /** Forgets a job that was never accepted (its queue was full). */
  discard(job: Job): void {
    this.forget(job.id);
  }

  /** Moves a job to a new status, with the fields that go with it. */
  move(job: Job, status: JobStatus, changes: JobChanges = {}): void {
    assertTransition(job.status, status);
    Object.assign(job, changes);
    job.status = status;
    if (status === 'PROCESSING') {
      job.startedAt = this.now();
      this.journal?.started(job);
    }
    if (isTerminal(status)) {
      job.finishedAt = this.now();
      // A client waiting on the job (Prefer: wait, a stream) is told by the event below.
      if (this.events.listenerCount(job.id) === 0) {
        this.keepEnded(job, true);
        this.hold(job.owner, 0, this.sizes.get(job.id) ?? 0);
      } else {
        this.keepEnded(job, false);
        this.hold(job.owner, -1, 0);
        this.journal?.read(job.id);
      }
      this.journal?.ended(job);
    }
    this.events.emit(job.id, job);
    this.events.emit(ANY_JOB, job);
    // After the event: with no ended job retained, its watchers still hear how it ended.
    if (isTerminal(status)) this.enforceCap();
  }

  /** Changes fields without a status change (progress, messages, chunks). */
  update(job: Job, changes: JobChanges): void {
    Object.assign(job, changes);
    this.events.emit(job.id, job);
    this.events.emit(ANY_JOB, job);
  }

  /** Calls `listener` on every change of every job (webhooks follow jobs this way) until the returned function is called. */
  onAnyChange(listener: (job: Job) => void): () => void {
    this.events.on(ANY_JOB, listener);
    return () => this.events.off(ANY_JOB, listener);
  }

  /**
   * A job a stopping server leaves unended: with a journal it stays there as it is, to run at
   * the next start, and a client waiting on it is answered now with `message` (returns
   * true); without one it cannot outlive the server (returns false).
   */
  keepForNextStart(job: Job, message: string): boolean {
    if (this.journal === null) return false;
    this.keptForNextStart.add(job.id);
    this.update(job, { message });
    return true;
  }

  /** Calls `listener` on every change of the job until the returned function is called. */
  watch(job: Job, listener: (job: Job) => void): () => void {
    this.events.on(job.id, listener);
    return () => this.events.off(job.id, listener);
  }

  /** Resolves when the job has ended or `timeoutMs` has passed, whichever is first. */
  waitUntilEnded(job: Job, timeoutMs: number): Promise<void> {
    if (isTerminal(job.status) || timeoutMs <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const stop = this.watch(job, (changed) => {
        if (isTerminal(changed.status) || this.keptForNextStart.has(changed.id)) finish();
      });
      const timer = setTimeout(finish, timeoutMs);
      function finish() {
        clearTimeout(timer);
        stop();
        resolve();
      }
    });
  }

  /** Jobs queued or running: at a stop with a journal, those left for the next start. */
  get unendedCount(): number {
    return this.jobs.size - this.ended.size;
  }

  get size(): number {
    return this.jobs.size;
  }

  /**
   * Why a new job cannot be taken: the ended jobs no client has read yet fill the retention,
   * and keeping the new one's result would mean dropping one of theirs. Null when it can.
   */
  refusal(): Refusal | null {
    this.expire();
    const { maxRetained, maxRetainedBytes, ttlMs } = this.retention;
    if (this.unread.size === 0 || (this.unread.size < maxRetained && this.unreadBytes < maxRetainedBytes)) return null;
    const oldest = this.jobs.get(this.unread.values().next().value as string);
    const expiresInMs = (oldest?.finishedAt ?? this.now()) + ttlMs - this.now();
    const mebibytes = Math.ceil(this.unreadBytes / 2 ** 20);
    return {
      message: `${this.unread.size} ended job(s) with ${mebibytes} MiB of results wait to be read, as much as this server keeps (--max-jobs, --max-job-memory): read them, or retry once they expire`,
      retryAfterSeconds: Math.max(1, Math.ceil(expiresInMs / 1000)),
    };
  }

  /** What this owner's jobs hold: those queued or running, and those ended and unread. */
  holdingOf(owner: string | null): KeyHolding {
    this.expire();
    return { ...(this.holdings.get(owner) ?? { jobs: 0, unreadBytes: 0 }) };
  }

  /** Seconds until this owner's oldest unread job expires; null when it has none. */
  secondsUntilUnreadExpires(owner: string | null): number | null {
    for (const id of this.unread) {
      const job = this.jobs.get(id);
      if (job?.owner === owner) return Math.max(1, Math.ceil(((job.finishedAt ?? this.now()) + this.retention.ttlMs - this.now()) / 1000));
    }
    return null;
  }

  /** The most ended jobs, and bytes of their results, this store keeps. */
  get limits(): StoreLimits {
    return { maxRetained: this.retention.maxRetained, maxRetainedBytes: this.retention.maxRetainedBytes };
  }

  /** Its unread results, and whether they fill it: new jobs are refused then. */
  get usage(): { unread: number; unreadBytes: number; full: boolean } {
    return { unread: this.unread.size, unreadBytes: this.unreadBytes, full: this.refusal() !== null };
  }

  /** How many jobs that ended while this server ran no client has read yet. */
  get unreadCount(): number {
    return this.unread.size - this.carried.size;
  }

  /**
   * Resolves when every job that ended while this server ran has been read, or `timeoutMs`
   * has passed (those a journal carries over stay readable after a restart): a server that
   * stops right after its last job ends would leave the client polling for it with nothing.
   */
  whenEndedJobsRead(timeoutMs: number): Promise<void> {
    if (this.unreadCount === 0 || timeoutMs <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        this.events.off(ALL_READ, finish);
        resolve();
      };
      const timer = setTimeout(finish, timeoutMs);
      this.events.on(ALL_READ, finish);
    });
  }

  private keepEnded(job: Job, unread: boolean): void {
    this.jobs.set(job.id, job);
    this.ended.add(job.id);
    const size = approximateBytes([job.result, job.chunks, job.error?.message ?? null]);
    this.sizes.set(job.id, size);
    this.retainedBytes += size;
    if (unread) {
      this.unread.add(job.id);
      this.unreadBytes += size;
    }
  }

  private expire(): void {
    const cutoff = this.now() - this.retention.ttlMs;
    for (const id of this.ended) {
      const job = this.jobs.get(id);
      // `ended` is in the order jobs ended, so the first one still fresh stops the sweep.
      if (job && (job.finishedAt ?? 0) > cutoff) break;
      this.forget(id);
    }
  }

  /** Beyond the count or the size, the oldest ended jobs that a client has read go first. */
  private enforceCap(): void {
    for (const id of this.ended) {
      if (this.ended.size <= this.retention.maxRetained && this.retainedBytes <= this.retention.maxRetainedBytes) break;
      if (!this.unread.has(id)) this.forget(id);
    }
  }

  private forget(id: string): void {
    this.markRead(id);
    const job = this.jobs.get(id);
    // A job forgotten before it ended (its queue was full) holds nothing any more.
    if (job && !isTerminal(job.status)) this.hold(job.owner, -1, 0);
    this.ended.delete(id);
    this.jobs.delete(id);
    this.retainedBytes -= this.sizes.get(id) ?? 0;
    this.sizes.delete(id);
    this.events.removeAllListeners(id);
    this.journal?.forget(id);
  }

  private markRead(id: string): void {
    if (!this.unread.delete(id)) return;
    this.carried.delete(id);
    this.journal?.read(id);
    const size = this.sizes.get(id) ?? 0;
    this.unreadBytes -= size;
    this.hold(this.jobs.get(id)?.owner ?? null, -1, -size);
    if (this.unreadCount === 0) this.events.emit(ALL_READ);
  }

  private hold(owner: string | null, jobs: number, bytes: number): void {
    const holding = this.holdings.get(owner) ?? { jobs: 0, unreadBytes: 0 };
    holding.jobs += jobs;
    holding.unreadBytes += bytes;
    if (holding.jobs === 0) this.holdings.delete(owner);
    else this.holdings.set(owner, holding);
  }
}
