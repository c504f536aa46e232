import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';
import type { JobStatus } from './job-status.js';
import { redisKeys } from './redis-scripts.js';

/** One change of a job, as the replica that made it published it. */
export interface JobChange {
  id: string;
  /** The job's change count after it: a reader that has seen this rev has nothing to fetch. */
  rev: number;
  status: JobStatus;
}

/** The event for "Redis is back: any change may have been missed". */
const RECONNECTED = 'reconnected';
/** The event every change is also told to, under no job id. */
const ANY = 'any';

/**
 * The changes of every job, heard on Redis pub/sub on one connection of this replica's own:
 * what a `Prefer: wait` or an event stream waits for, and how a cancel sent to another replica
 * reaches the one running the job. Pub/sub keeps nothing for a connection that is away, so
 * when it comes back, every listener is told to read its job again.
 */
export class RedisJobEvents {
  private readonly emitter = new EventEmitter();
  private wasReady = true;

  private constructor(subscriber: Redis) {
    this.emitter.setMaxListeners(0);
    subscriber.on('message', (_channel: string, message: string) => {
      const [id, rev, status] = message.split(' ');
      if (id === undefined || rev === undefined || status === undefined) return;
      const change = { id, rev: Number(rev), status: status as JobStatus };
      this.emitter.emit(id, change);
      this.emitter.emit(ANY, change);
    });
    subscriber.on('close', () => {
      this.wasReady = false;
    });
    // ioredis subscribes again on its own as it reconnects.
    subscriber.on('ready', () => {
      if (!this.wasReady) this.emitter.emit(RECONNECTED);
      this.wasReady = true;
    });
  }

  static async listen(subscriber: Redis): Promise<RedisJobEvents> {
    const events = new RedisJobEvents(subscriber);
    await subscriber.subscribe(redisKeys.events);
    return events;
  }

  /** Calls `listener` on each change of the job (with null after a reconnection) until the returned function is called. */
  onJob(id: string, listener: (change: JobChange | null) => void): () => void {
    const missed = () => listener(null);
    this.emitter.on(id, listener);
    this.emitter.on(RECONNECTED, missed);
    return () => {
      this.emitter.off(id, listener);
      this.emitter.off(RECONNECTED, missed);
    };
  }

  /** Calls `listener` on each change of any job. */
  onAny(listener: (change: JobChange) => void): void {
    this.emitter.on(ANY, listener);
  }
}
