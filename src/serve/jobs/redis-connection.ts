import { Redis, ReplyError } from 'ioredis';
import { SvcError } from '../../svc-error.js';
import { HttpError } from '../http-error.js';
import { redacted } from './job-store-location.js';

/** How long `svc start` waits for Redis to answer before it gives up. */
const CONNECT_TIMEOUT_MS = 5_000;
/** How long one command may take: past it, a request gets a 503 rather than hanging. */
const COMMAND_TIMEOUT_MS = 5_000;
/**
 * How long a closing connection waits for Redis to close its end before destroying it.
 * ioredis's default, 2 s, held every stopping server open that long (a blocked read keeps
 * its socket), and a stop has nothing left to say to Redis.
 */
const DISCONNECT_MS = 100;
/** Seconds a client told that Redis is out of reach waits before it retries. */
export const REDIS_RETRY_AFTER_SECONDS = 5;

/**
 * Connections to the Redis at `url`, each of which reconnects on its own after Redis goes away.
 * Commands made while it is away fail at once (no offline queue), which a request answers with
 * a 503: waiting for Redis would hold every client until its own time-out.
 */
export class RedisConnection {
  private readonly opened: Redis[] = [];

  private constructor(readonly url: string) {}

  /** Connects, or fails with one line naming the URL and the flag: Redis does not answer, or refuses. */
  static async open(url: string): Promise<{ connection: RedisConnection; commands: Redis }> {
    const connection = new RedisConnection(url);
    return { connection, commands: await connection.connect() };
  }

  /** Another connection to the same Redis: blocking reads and subscriptions take one each. */
  async connect(): Promise<Redis> {
    const client = new Redis(this.url, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: CONNECT_TIMEOUT_MS,
      commandTimeout: COMMAND_TIMEOUT_MS,
      disconnectTimeout: DISCONNECT_MS,
      // Back within a second of Redis coming back, at most, and never given up on.
      retryStrategy: (attempt) => Math.min(attempt * 100, 1_000),
    });
    // Reconnection errors are the state `unavailable` reports; without a listener they would be printed.
    let lastError: unknown = null;
    client.on('error', (error) => {
      lastError = error;
    });
    try {
      await client.connect();
      await client.ping();
    } catch (error) {
      client.disconnect();
      // The socket's own error (ECONNREFUSED, ENOTFOUND) says more than "Connection is closed".
      throw new SvcError('io', `--job-store ${redacted(this.url)}: cannot reach Redis (${reason(lastError ?? error)})`);
    }
    this.opened.push(client);
    return client;
  }

  /** The answer to a request that needed Redis while it is out of reach; any other error as it is. */
  unavailable(error: unknown): unknown {
    if (!isRedisAway(error)) return error;
    return new HttpError(503, 'unavailable', 'job_store_unavailable', `the job store (Redis at ${redacted(this.url)}) cannot be reached (${reason(error)}); retry shortly`, {
      headers: { 'retry-after': String(REDIS_RETRY_AFTER_SECONDS) },
    });
  }

  close(): void {
    for (const client of this.opened.splice(0)) client.disconnect();
  }
}

/**
 * Whether a command failed because Redis is out of reach (the connection closed, a time-out,
 * Redis still loading its data after a restart) rather than refused it: then it is worth retrying.
 */
export function isRedisAway(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return !(error instanceof ReplyError) || /^(LOADING|BUSY|MASTERDOWN|TRYAGAIN)/.test(error.message);
}

function reason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0] ?? message;
}
