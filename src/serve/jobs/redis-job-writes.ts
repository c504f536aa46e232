import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { storedJson, type JsonTree } from '../json-chunks.js';
import { assertTransition, isTerminal, JOB_STATUSES, type JobStatus } from './job-status.js';
import type { JobChanges } from './job-store.js';
import type { Job } from './job.js';
import { isRedisAway } from './redis-connection.js';
import type { RedisLocalValues } from './redis-local-values.js';
import { CONSUMER_GROUP, redisKeys, LARGE_VALUE_BYTES, transaction, type ScriptedRedis } from './redis-scripts.js';
import { approximateBytes } from './value-size.js';

/** How long a replica waits before it writes a job's end again while Redis is away. */
const RETRY_MS = 500;

/** A write's outcome: the job's new rev; 0 its status could not move (it ended elsewhere); -1 it is gone; -2 it changed since `rev`. */
export type WriteResult = number;

/**
 * What a write does with the job's chunks: appends those Redis does not have yet (the job
 * runs here), drops them and appends all it has (the job starts again), or leaves them (a
 * cancel from a replica that only read the job).
 */
export type ChunkWrite = 'append' | 'reset' | 'none';

/**
 * What a replica's write of a job it runs may overwrite in Redis: any status but an ending (a
 * cancel from another replica, or the end of a run elsewhere after a lapsed lease). Not only
 * the status its move comes from: a start written while Redis was away is dropped, and the
 * job's end must still land on the QUEUED that Redis kept.
 */
export const NOT_ENDED: readonly JobStatus[] = JOB_STATUSES.filter((status) => !isTerminal(status) && status !== 'UNKNOWN');

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
  /** How many chunks of each job this replica runs Redis has. */
  private readonly written = new Map<string, number>();

  constructor(
    private readonly redis: ScriptedRedis,
    private readonly ttlMs: number,
    private readonly local: RedisLocalValues,
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
    this.enqueue(job, NOT_ENDED);
  }

  update(job: Job, changes: JobChanges): void {
    Object.assign(job, changes);
    this.enqueue(job, NOT_ENDED);
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
      const moved = await this.write(snapshot, NOT_ENDED, { chunks: 'reset' }).catch(() => 0);
      this.written.delete(job.id);
      if (moved <= 0 || entryId === undefined) return;
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
  async write(
    job: Job,
    allowed: readonly JobStatus[],
    { rev = null, chunks = 'append', chunkCount = job.chunks.length }: { rev?: number | null; chunks?: ChunkWrite; chunkCount?: number } = {},
  ): Promise<WriteResult> {
    const ends = isTerminal(job.status);
    const size = ends ? approximateBytes([job.result, job.chunks, job.error?.message ?? null]) : 0;
    const from = chunks === 'append' ? (this.written.get(job.id) ?? 0) : 0;
    const added = chunks === 'none' ? [] : job.chunks.slice(from, chunkCount);
    // A large result goes to a key of its own, not through the script.
    const storedResult = ends && job.result !== null ? storedJson(job.result as JsonTree) : null;
    const resultApart = storedResult !== null && Buffer.byteLength(storedResult) >= LARGE_VALUE_BYTES ? storedResult : null;
    // Named anew for each write (two replicas may end one job), and unused without such a result.
    const incoming = resultApart === null ? redisKeys.result(job.id) : redisKeys.incomingResult(job.id, randomBytes(6).toString('hex'));
    const move = [
      redisKeys.job(job.id),
      redisKeys.unread,
      redisKeys.unreadBytes,
      redisKeys.queue,
      redisKeys.chunks(job.id),
      redisKeys.result(job.id),
      incoming,
      job.id,
      job.status,
      storedJson({ ...job, chunks: [], result: resultApart === null ? job.result : null } as unknown as JsonTree),
      ` ${allowed.join(' ')} `,
      ends ? '1' : '0',
      this.ttlMs,
      job.finishedAt ?? 0,
      size,
      CONSUMER_GROUP,
      ends ? (this.entryOf(job.id) ?? '') : '',
      redisKeys.events,
      rev === null ? '' : String(rev),
      chunks === 'reset' ? '1' : '0',
      resultApart === null ? '0' : '1',
      ...added.map((chunk) => JSON.stringify(chunk)),
    ];
    const result = (
      resultApart === null
        ? await this.redis.svcMove(...move)
        : (
            await transaction(this.redis, (multi) => {
              multi.set(incoming, resultApart, 'PX', this.ttlMs);
              return multi.svcMove(...move);
            })
          )[1]
    ) as WriteResult;
    // Redis has this replica's end of the job: nothing changes the result after it.
    if (result > 0 && resultApart !== null) this.local.keepResult(job.id, resultApart);
    if (result > 0 && chunks !== 'none') {
      if (ends) this.written.delete(job.id);
      else this.written.set(job.id, from + added.length);
    }
    return result;
  }

  /** Resolves once every change written so far has reached Redis, or been given up. */
  async settled(): Promise<void> {
    await Promise.all(this.pending.values());
  }

  private enqueue(job: Job, allowed: readonly JobStatus[]): void {
    // The job as it is now: later changes to the object are later writes. Its chunks only
    // grow (one that starts again gets a new array), so this write's are the first `chunkCount`.
    const snapshot: Job = { ...job };
    const chunkCount = job.chunks.length;
    const ends = isTerminal(job.status);
    this.chain(job.id, () => this.send(snapshot, allowed, ends, chunkCount));
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

  private async send(job: Job, allowed: readonly JobStatus[], ends: boolean, chunkCount: number): Promise<void> {
    for (;;) {
      try {
        await this.write(job, allowed, { chunkCount });
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
