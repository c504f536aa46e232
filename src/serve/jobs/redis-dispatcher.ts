import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { MOST_RUNS } from './job-recovery.js';
import type { JobRunner } from './job-runner.js';
import { PoolClosedError } from '../../worker/worker-pool.js';
import { storedJobArguments } from './job-arguments.js';
import type { JobArguments } from './job-journal.js';
import { isTerminal } from './job-status.js';
import type { Job } from './job.js';
import { isRedisAway } from './redis-connection.js';
import type { RedisJobEvents } from './redis-job-events.js';
import type { RedisLocalValues } from './redis-local-values.js';
import { NOT_ENDED, type RedisJobWrites } from './redis-job-writes.js';
import { CONSUMER_GROUP, redisKeys, type ScriptedRedis } from './redis-scripts.js';

/**
 * How long a replica holds a job it runs without renewing its lease: past it, the replica is
 * taken for dead and another one runs the job again. Renewed three times within it.
 */
export const LEASE_MS = 10_000;
const RENEW_MS = LEASE_MS / 3;
/** How long one blocking read waits for a job before it looks for lapsed leases again. */
const BLOCK_MS = 2_000;
/** How long the dispatcher waits before it reads again after Redis failed it. */
const RETRY_MS = 500;

type StreamEntry = [entryId: string, fields: string[]];

/**
 * Takes jobs from the Redis queue for this replica's workers, no more than they can start:
 * with every worker busy it reads nothing, so no replica hoards jobs another could run. A job
 * it takes is an entry pending on this replica's consumer in the stream's group; the replica
 * renews that lease while it runs the job, and acknowledges the entry as the job ends. Jobs of
 * a replica that died (its leases lapsed) are claimed (XAUTOCLAIM) and run again before new
 * ones, at most `MOST_RUNS` times in all; after that the job fails naming the crashes.
 */
export class RedisDispatcher {
  /** This replica's consumer name in the group, new on each start. */
  readonly consumer = `replica-${randomBytes(6).toString('hex')}`;
  /** The jobs this replica took, by id, until their end is written. */
  private readonly running = new Map<string, { job: Job; entryId: string }>();
  /** The jobs of those still running: what the workers are busy with. */
  private readonly busy = new Set<string>();
  private stopped = false;
  private slotFreed: (() => void) | null = null;
  private renewer: NodeJS.Timeout | null = null;
  private loop: Promise<void> | null = null;

  constructor(
    private readonly redis: ScriptedRedis,
    /** A connection of its own: a blocking read holds it. */
    private readonly blocking: Redis,
    events: RedisJobEvents,
    private readonly writes: RedisJobWrites,
    private readonly local: RedisLocalValues,
    private readonly runner: JobRunner,
    /** How many jobs this replica runs at once: its workers. */
    private readonly capacity: number,
    private readonly log: { warn: (line: string) => void },
  ) {
    // A cancel from any replica: the one running the job interrupts its call.
    events.onAny((change) => {
      const mine = this.running.get(change.id);
      if (mine && isTerminal(change.status) && !isTerminal(mine.job.status)) runner.cancel(mine.job);
    });
  }

  /** The queue entry of a job this replica runs. */
  entryOf(id: string): string | undefined {
    return this.running.get(id)?.entryId;
  }

  /** Creates the queue and its group if this is the first replica on the database. */
  static async prepare(redis: Redis): Promise<void> {
    try {
      await redis.xgroup('CREATE', redisKeys.queue, CONSUMER_GROUP, '0', 'MKSTREAM');
    } catch (error) {
      if (!/BUSYGROUP/.test((error as Error).message)) throw error;
    }
  }

  /** Starts taking jobs; once (a reload's new pool is fed by the same dispatcher, through the pool switch). */
  start(): void {
    if (this.loop !== null) return;
    this.renewer = setInterval(() => void this.renew(), RENEW_MS);
    this.renewer.unref();
    this.loop = this.takeJobs();
  }

  /** Takes no more jobs; those running go on (the pool's shutdown ends them), their leases renewed. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.slotFreed?.();
    // A blocking read would hold the loop for up to BLOCK_MS.
    this.blocking.disconnect();
    await this.loop;
  }

  /** Stops renewing leases: what is still running is another replica's to run again. */
  release(): void {
    if (this.renewer) clearInterval(this.renewer);
  }

  private async takeJobs(): Promise<void> {
    let lastClaim = 0;
    while (!this.stopped) {
      const free = this.capacity - this.busy.size;
      if (free <= 0) {
        await new Promise<void>((resolve) => {
          this.slotFreed = resolve;
        });
        this.slotFreed = null;
        continue;
      }
      try {
        let entries: StreamEntry[] = [];
        if (Date.now() - lastClaim >= RENEW_MS) {
          lastClaim = Date.now();
          const claimed = (await this.redis.xautoclaim(redisKeys.queue, CONSUMER_GROUP, this.consumer, LEASE_MS, '0-0', 'COUNT', free)) as [string, StreamEntry[]];
          entries = claimed[1].filter((entry) => entry !== null && entry[1] !== null);
        }
        if (entries.length === 0) {
          const read = (await this.blocking.xreadgroup(
            'GROUP', CONSUMER_GROUP, this.consumer, 'COUNT', free, 'BLOCK', BLOCK_MS, 'STREAMS', redisKeys.queue, '>',
          )) as Array<[string, StreamEntry[]]> | null;
          entries = read?.[0]?.[1] ?? [];
        }
        for (const [entryId, fields] of entries) await this.take(entryId, fields[fields.indexOf('id') + 1] ?? '');
      } catch (error) {
        if (this.stopped) break;
        if (/NOGROUP/.test((error as Error).message)) {
          // Redis came back without its data (no appendonly): the queue starts again empty.
          this.log.warn('Redis lost the job queue (was it restarted without persistence? docs/scaling.md): creating it again');
          await RedisDispatcher.prepare(this.redis).catch(() => {});
        } else if (!isRedisAway(error)) {
          this.log.warn(`reading the Redis job queue failed: ${(error as Error).message}`);
        }
        await delay(RETRY_MS);
      }
    }
  }

  private async take(entryId: string, id: string): Promise<void> {
    const key = redisKeys.job(id);
    // Read from Redis only when this replica did not accept the job itself; large ones beside the script.
    const kept = this.local.takeArguments(id);
    const taken = (await this.redis.svcTake(key, redisKeys.queue, CONSUMER_GROUP, entryId, kept === undefined ? '1' : '0')) as [string, number, string, string] | null;
    if (taken === null) return;
    const [json, runs, , smallArgs] = taken;
    const args = kept ?? (smallArgs !== '' ? (JSON.parse(smallArgs) as JobArguments) : await this.largeArguments(key));
    // Gone between the two reads: it ended and expired meanwhile.
    if (args === null) return;
    const job = JSON.parse(json) as Job;
    this.running.set(id, { job, entryId });
    this.busy.add(id);
    if (runs > MOST_RUNS) {
      this.writes.move(job, 'FAILED', {
        error: {
          type: 'ServerCrashed',
          message: `the replica running this job stopped (a crash, kill -9 or the machine going down) ${MOST_RUNS} times: it is not run again; submit it again`,
        },
      });
      this.ended(id);
      return;
    }
    if (runs > 1) {
      // Taken back from a replica that died while it ran: from the start, as the sqlite store does.
      Object.assign(job, { status: 'QUEUED', progress: 0, message: 'queued again: the replica running it stopped', chunks: [], startedAt: null });
      await this.writes.write(job, NOT_ENDED, { chunks: 'reset' });
    }
    try {
      this.runner.start(job, args, () => this.ended(id));
    } catch (error) {
      if (error instanceof PoolClosedError) return this.giveBack(id, entryId);
      this.writes.move(job, 'FAILED', { error: { type: 'NotRunnable', message: `this replica could not run the job: ${(error as Error).message}` } });
      this.ended(id);
    }
  }

  /** A job's arguments of LARGE_VALUE_BYTES or more, read as bytes: its long strings go to the worker as they are. */
  private async largeArguments(key: string): Promise<JobArguments | null> {
    const stored = await this.redis.hgetBuffer(key, 'args');
    return stored === null ? null : storedJobArguments(stored);
  }

  /** Puts a job this replica took but cannot run (its pool is stopping) back at the end of the queue, for another. */
  private async giveBack(id: string, entryId: string): Promise<void> {
    this.running.delete(id);
    this.busy.delete(id);
    await this.redis
      .multi()
      .hincrby(redisKeys.job(id), 'runs', -1)
      .xadd(redisKeys.queue, '*', 'id', id)
      .xack(redisKeys.queue, CONSUMER_GROUP, entryId)
      .xdel(redisKeys.queue, entryId)
      .exec();
  }

  private ended(id: string): void {
    this.busy.delete(id);
    // The entry is acknowledged with the job's end (redis-job-writes.ts), then forgotten here.
    void this.writes.settled().then(() => this.running.delete(id));
    this.slotFreed?.();
  }

  private async renew(): Promise<void> {
    if (this.running.size === 0) return;
    try {
      await this.redis.svcRenew(redisKeys.queue, CONSUMER_GROUP, this.consumer, ...[...this.running.values()].map(({ entryId }) => entryId));
    } catch {
      // Redis is away: the leases are renewed on the next turn, well within LEASE_MS.
    }
  }
}
