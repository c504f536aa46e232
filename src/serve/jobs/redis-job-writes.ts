import { setTimeout as delay } from 'node:timers/promises';
import { assertTransition, isTerminal, TRANSITIONS, type JobStatus } from './job-status.js';
import type { JobChanges } from './job-store.js';
import type { Job } from './job.js';
import { isRedisAway } from './redis-connection.js';
import { CONSUMER_GROUP, redisKeys, type ScriptedRedis } from './redis-scripts.js';
import { approximateBytes } from './value-size.js';

/** How long a replica waits before it writes a job's end again while Redis is away. */
const RETRY_MS = 500;

/** A write's outcome: the job's new rev; 0 its status could not move (it ended elsewhere); -1 it is gone; -2 it changed since `rev`. */
export type WriteResult = number;

/** The statuses a job may be in when it moves to `status` (job-status.ts's table, read backwards). */
function statusesBefore(status: JobStatus): JobStatus[] {
  return (Object.keys(TRANSITIONS) as JobStatus[]).filter((from) => TRANSITIONS[from].includes(status));
}

/**
 * Writes the changes of the jobs this replica runs to Redis, the JobRunner's `store` here: the
 * job object in memory changes at once, as in the local store, and its writes go out in order,
 * one job's after another's. A job's end is written again until Redis takes it: a replica that
 * finished a job while Redis restarted keeps the result until it can hand it over (if the
 * replica dies first, the job's lease lapses and another replica runs it again). Progress and
 * chunks written while Redis is away are dropped, as the next change carries them.
 */
export class RedisJobWrites {
  private readonly pending = new Map<string, Promise<void>>();

  constructor(
    private readonly redis: ScriptedRedis,
    private readonly ttlMs: number,
    /** The queue entry of a job this replica took, acknowledged as the job ends. */
    private readonly entryOf: (id: string) => string | undefined,
    private readonly onWriteError: (job: Job, error: unknown) => void,
  ) {}

  move(job: Job, status: JobStatus, changes: JobChanges = {}): void {
    assertTransition(job.status, status);
    Object.assign(job, changes);
    job.status = status;
    if (status === 'PROCESSING') job.startedAt = Date.now();
    if (isTerminal(status)) job.finishedAt = Date.now();
    this.enqueue(job, statusesBefore(status));
  }

  update(job: Job, changes: JobChanges): void {
    Object.assign(job, changes);
    this.enqueue(job, [job.status]);
  }

  /**
   * A job this replica could not finish as it stops: back at the end of the shared queue, from
   * its start, for another replica (or the next start of one). The run it had still counts.
   */
  keepForNextStart(job: Job): boolean {
    const entryId = this.entryOf(job.id);
    Object.assign(job, { status: 'QUEUED', progress: 0, message: 'queued again: the replica running it stopped', chunks: [], startedAt: null });
    const snapshot: Job = { ...job, chunks: [] };
    this.chain(job.id, async () => {
      if ((await this.write(snapshot, ['QUEUED', 'PROCESSING', 'STREAMING']).catch(() => 0)) <= 0 || entryId === undefined) return;
      await this.redis
        .multi()
        .xadd(redisKeys.queue, '*', 'id', job.id)
        .xack(redisKeys.queue, CONSUMER_GROUP, entryId)
        .xdel(redisKeys.queue, entryId)
        .exec()
        .catch(() => undefined);
    });
    return true;
  }

  /**
   * Writes `job` as it is now if its status in Redis is one of `allowed` (and its rev `rev`, if
   * given): not through the table of moves, for a job taken back from a replica that died
   * (QUEUED again) and for a cancel from any replica.
   */
  write(job: Job, allowed: readonly JobStatus[], rev: number | null = null): Promise<WriteResult> {
    const ends = isTerminal(job.status);
    const size = ends ? approximateBytes([job.result, job.chunks, job.error?.message ?? null]) : 0;
    return this.redis.svcMove(
      redisKeys.job(job.id),
      redisKeys.unread,
      redisKeys.unreadBytes,
      redisKeys.queue,
      job.id,
      job.status,
      JSON.stringify(job),
      ` ${allowed.join(' ')} `,
      ends ? '1' : '0',
      this.ttlMs,
      job.finishedAt ?? 0,
      size,
      CONSUMER_GROUP,
      ends ? (this.entryOf(job.id) ?? '') : '',
      redisKeys.events,
      rev === null ? '' : String(rev),
    ) as Promise<WriteResult>;
  }

  /** Resolves once every change written so far has reached Redis, or been given up. */
  async settled(): Promise<void> {
    await Promise.all(this.pending.values());
  }

  private enqueue(job: Job, allowed: readonly JobStatus[]): void {
    // The job as it is now: later changes to the object are later writes.
    const snapshot: Job = { ...job, chunks: [...job.chunks] };
    const ends = isTerminal(job.status);
    this.chain(job.id, () => this.send(snapshot, allowed, ends));
  }

  /** Runs `write` after the job's earlier writes. */
  private chain(id: string, write: () => Promise<void>): void {
    const previous = this.pending.get(id) ?? Promise.resolve();
    const next = previous.then(write);
    this.pending.set(id, next);
    void next.then(() => {
      if (this.pending.get(id) === next) this.pending.delete(id);
    });
  }

  private async send(job: Job, allowed: readonly JobStatus[], ends: boolean): Promise<void> {
    for (;;) {
      try {
        await this.write(job, allowed);
        return;
      } catch (error) {
        if (!ends || !isRedisAway(error)) {
          if (!isRedisAway(error)) this.onWriteError(job, error);
          return;
        }
        await delay(RETRY_MS);
      }
    }
  }
}
