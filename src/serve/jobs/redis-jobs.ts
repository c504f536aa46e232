import { QueueFullError } from '../../worker/worker-pool.js';
import { HttpError } from '../http-error.js';
import { storedJson } from '../json-chunks.js';
import type { JobBackend, JobStoreUsage, JobSubmission } from './job-backend.js';
import { isTerminal, TERMINAL_STATUSES, type JobStatus } from './job-status.js';
import type { RetentionPolicy } from './job-store.js';
import { newJob, type Job } from './job.js';
import { JsonText } from '../../worker/json-text.js';
import type { Value } from '../../worker/protocol.js';
import { keyShare, keyShareRefusal } from './key-share.js';
import type { RedisConnection } from './redis-connection.js';
import type { JobChange, RedisJobEvents } from './redis-job-events.js';
import type { RedisLocalValues } from './redis-local-values.js';
import { NOT_ENDED, type RedisJobWrites } from './redis-job-writes.js';
import { LARGE_VALUE_BYTES, redisKeys, transaction, type ScriptedRedis } from './redis-scripts.js';

/** How often a cancel is tried again when the job changed between its read and the cancel. */
const CANCEL_ATTEMPTS = 20;

export interface RedisJobsOptions {
  retention: RetentionPolicy;
  /** Most jobs queued or running at once, across the replicas (--queue-size). */
  maxQueue: number;
  /** Seconds a refused client is told to wait when nothing better is known. */
  retryAfterSeconds: number;
}

/**
 * Jobs in Redis, shared by every replica started with the same `--job-store redis://`: a job
 * any replica accepts is in Redis before its submit is answered, any replica reads, follows
 * and cancels it, and whichever replica has a free worker runs it (redis-dispatcher.ts).
 * Changes are heard on pub/sub (redis-job-events.ts), so a client waiting on one replica for a
 * job another runs learns of its end at once. The unread results and each key's share are
 * counted in Redis, so the limits hold across replicas. Redis out of reach is a 503 naming it.
 */
export class RedisJobs implements JobBackend {
  /** The rev of each job object handed out: what a cancel expects to find. */
  private readonly revs = new WeakMap<Job, number>();
  /** How to end each `waitUntilEnded` pending now; none starts once the server stops. */
  private readonly waits = new Set<() => void>();
  private stopped = false;

  constructor(
    private readonly connection: RedisConnection,
    private readonly redis: ScriptedRedis,
    private readonly events: RedisJobEvents,
    private readonly writes: RedisJobWrites,
    private readonly local: RedisLocalValues,
    private readonly options: RedisJobsOptions,
  ) {}

  async submitAndWait(submission: JobSubmission, onEnd: () => void, timeoutMs: number): Promise<Job> {
    return this.waitUntilEnded(await this.submit(submission, onEnd), timeoutMs);
  }

  async submit({ endpoint, owner, streams, args, keyCount }: JobSubmission, onEnd: () => void): Promise<Job> {
    // In the queue as it is written: any replica may take it from then on.
    const job = newJob({ endpoint, streams, owner }, 'QUEUED', Date.now());
    const now = job.createdAt;
    const { retention } = this.options;
    const share = keyShare(retention, Math.max(keyCount, 1));
    const storedArgs = storedJson(args);
    // Kept before the submit is written: this replica's dispatcher may take the job before
    // the submit's answer is read.
    this.local.keepArguments(job.id, args, Buffer.byteLength(storedArgs));
    let answer: unknown;
    try {
      const key = redisKeys.job(job.id);
      const large = Buffer.byteLength(storedArgs) >= LARGE_VALUE_BYTES;
      const submit = [
        key,
        redisKeys.queue,
        redisKeys.unread,
        redisKeys.unreadBytes,
        redisKeys.owner(owner),
        job.id,
        JSON.stringify(job),
        job.status,
        JSON.stringify(owner),
        now,
        retention.ttlMs,
        retention.maxRetained,
        retention.maxRetainedBytes,
        keyCount,
        share.maxRetained,
        share.maxRetainedBytes,
        this.options.maxQueue,
        large ? '' : storedArgs,
      ];
      answer = large
        ? (
            await transaction(this.redis, (multi) => {
              multi.hset(key, 'args', storedArgs);
              return multi.svcSubmit(...submit);
            })
          )[1]
        : await this.redis.svcSubmit(...submit);
    } catch (error) {
      this.local.takeArguments(job.id);
      onEnd();
      throw this.connection.unavailable(error);
    }
    const [outcome, count, bytes, oldest] = answer as [string, number?, number?, string?];
    if (outcome !== 'ok') {
      this.local.takeArguments(job.id);
      onEnd();
      throw this.refusal(outcome, { count: count ?? 0, bytes: bytes ?? 0, oldestEndedAt: oldest ? Number(oldest) : null }, { endpoint, keyCount });
    }
    this.revs.set(job, 1);
    this.whenEnded(job.id, () => {
      this.local.takeArguments(job.id);
      onEnd();
    });
    return job;
  }

  async find(id: string, owner: string | null): Promise<Job | undefined> {
    return this.read(id, JSON.stringify(owner), true);
  }

  async waitUntilEnded(job: Job, timeoutMs: number): Promise<Job> {
    if (isTerminal(job.status) || timeoutMs <= 0 || this.stopped) return job;
    const ended = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => finish(false), timeoutMs);
      const stopWaiting = () => finish(false);
      this.waits.add(stopWaiting);
      const checkEnded = () => void this.hasEnded(job.id).then((ended) => ended && finish(true));
      const stop = this.events.onJob(job.id, (change) => {
        if (change === null) checkEnded();
        else if (isTerminal(change.status)) finish(true);
      });
      // It may have ended between its read and the subscription above.
      checkEnded();
      const waits = this.waits;
      function finish(done: boolean) {
        clearTimeout(timer);
        stop();
        waits.delete(stopWaiting);
        resolve(done);
      }
    });
    // Read as the client will read it: an ended job counts as read.
    return (await this.read(job.id, '', ended).catch(() => undefined)) ?? job;
  }

  watch(job: Job, listener: (job: Job) => void): () => void {
    let seen = this.revs.get(job) ?? 0;
    let known = [...job.chunks];
    let stopped = false;
    let reading = false;
    let again = false;
    // One read at a time; a change heard meanwhile is read once it is done.
    const refresh = async () => {
      if (reading) {
        again = true;
        return;
      }
      reading = true;
      try {
        do {
          again = false;
          const latest = await this.read(job.id, '', false, known).catch(() => undefined);
          if (latest !== undefined) known = latest.chunks;
          const rev = latest ? (this.revs.get(latest) ?? 0) : 0;
          if (latest === undefined || stopped || rev <= seen) continue;
          seen = rev;
          // A client that follows the job to its end has read it, as in a server's own store.
          if (isTerminal(latest.status)) void this.read(job.id, '', true, [...known]).catch(() => undefined);
          listener(latest);
        } while (again && !stopped);
      } finally {
        reading = false;
      }
    };
    const unsubscribe = this.events.onJob(job.id, (change) => {
      if (change === null || change.rev > seen) void refresh();
    });
    void refresh();
    return () => {
      stopped = true;
      unsubscribe();
    };
  }

  async cancel(job: Job): Promise<Job> {
    let current = job;
    for (let attempt = 0; attempt < CANCEL_ATTEMPTS && !isTerminal(current.status); attempt++) {
      const cancelled: Job = { ...current, status: 'CANCELLED', message: 'cancelled by the client', finishedAt: Date.now() };
      let rev: number;
      try {
        rev = await this.writes.write(cancelled, NOT_ENDED, { rev: this.revs.get(current) ?? null, chunks: 'none' });
      } catch (error) {
        throw this.connection.unavailable(error);
      }
      // The replica running it hears the change and interrupts its call (redis-dispatcher.ts).
      if (rev > 0) return cancelled;
      if (rev === -1) return current;
      current = (await this.read(job.id, '', false)) ?? current;
    }
    return current;
  }

  async usage(): Promise<JobStoreUsage> {
    const { retention } = this.options;
    try {
      const [unread, unreadBytes] = (await this.redis.svcUsage(redisKeys.unread, redisKeys.unreadBytes, Date.now(), retention.ttlMs)) as [number, number];
      const full = unread > 0 && (unread >= retention.maxRetained || unreadBytes >= retention.maxRetainedBytes);
      return { unread, unreadBytes, full, maxRetained: retention.maxRetained, maxRetainedBytes: retention.maxRetainedBytes };
    } catch (error) {
      throw this.connection.unavailable(error);
    }
  }

  /** Jobs outlive a replica in Redis: a stopping one has none of its own left to have read. */
  get unreadCount(): number {
    return 0;
  }

  async whenEndedJobsRead(): Promise<void> {}

  stopWaiting(): void {
    this.stopped = true;
    for (const stopWaiting of [...this.waits]) stopWaiting();
  }

  /**
   * The job as Redis has it now, when `owner` ('' for any) may see it; an ended one counted read
   * when `markRead`. A reader that has `known` chunks of it gets only the later ones from Redis,
   * appended to `known`, which becomes the job's (a stream of many chunks is not read over and over).
   */
  private async read(id: string, owner: string, markRead: boolean, known: Value[] = []): Promise<Job | undefined> {
    let answer: unknown;
    try {
      answer = await this.redis.svcRead(redisKeys.job(id), redisKeys.unread, redisKeys.unreadBytes, redisKeys.chunks(id), id, owner, markRead ? '1' : '0', known.length);
    } catch (error) {
      throw this.connection.unavailable(error);
    }
    if (answer === null) return undefined;
    const [json, rev, from, apart, ...chunks] = answer as [string, string, number, string, ...string[]];
    const job = JSON.parse(json) as Job;
    if (apart === 'result') {
      const kept = this.local.takeResult(id);
      const result =
        kept !== undefined
          ? typeof kept === 'string'
            ? Buffer.from(kept)
            : kept
          : await this.redis.getBuffer(redisKeys.result(id)).catch((error: unknown) => {
              throw this.connection.unavailable(error);
            });
      // Expired since the job was read: gone, as the job itself is by now.
      if (result === null) return undefined;
      job.result = new JsonText([result]);
    }
    const added = chunks.map((chunk) => JSON.parse(chunk) as Value);
    if (from > 0) {
      known.push(...added);
      job.chunks = known;
    } else {
      job.chunks = added;
    }
    this.revs.set(job, Number(rev));
    return job;
  }

  /** Whether the job has ended (or is gone); false when Redis cannot say now. */
  private async hasEnded(id: string): Promise<boolean> {
    try {
      const status = (await this.redis.hget(redisKeys.job(id), 'status')) as JobStatus | null;
      return status === null || TERMINAL_STATUSES.has(status);
    } catch {
      return false;
    }
  }

  /** Runs `onEnd` once the job has ended, on whichever replica; or once it is gone. */
  private whenEnded(id: string, onEnd: () => void): void {
    let done = false;
    const end = () => {
      if (done) return;
      done = true;
      stop();
      onEnd();
    };
    const stop = this.events.onJob(id, (change: JobChange | null) => {
      // After a reconnection its end may have been missed: Redis says.
      if (change === null) void this.hasEnded(id).then((ended) => ended && end());
      else if (TERMINAL_STATUSES.has(change.status)) end();
    });
  }

  private refusal(
    outcome: string,
    counts: { count: number; bytes: number; oldestEndedAt: number | null },
    { endpoint, keyCount }: { endpoint: string; keyCount: number },
  ): unknown {
    const { retention, retryAfterSeconds } = this.options;
    const expiresIn = counts.oldestEndedAt === null ? retryAfterSeconds : Math.max(1, Math.ceil((counts.oldestEndedAt + retention.ttlMs - Date.now()) / 1000));
    if (outcome === 'share') {
      const message = keyShareRefusal({ jobs: counts.count, unreadBytes: counts.bytes }, retention, keyCount) ?? 'this key holds its share of the job store';
      return new HttpError(429, 'too_many_requests', 'key_results_unread', message, { headers: { 'retry-after': String(expiresIn) } });
    }
    if (outcome === 'full') {
      const mebibytes = Math.ceil(counts.bytes / 2 ** 20);
      return new HttpError(
        503,
        'queue_full',
        'results_unread',
        `${counts.count} ended job(s) with ${mebibytes} MiB of results wait to be read, as much as these servers keep (--max-jobs, --max-job-memory): read them, or retry once they expire`,
        { headers: { 'retry-after': String(expiresIn) } },
      );
    }
    return new QueueFullError(endpoint, this.options.maxQueue);
  }
}
