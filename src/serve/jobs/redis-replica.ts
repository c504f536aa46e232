import type { CallBackend } from '../call-backend.js';
import { JobRunner, type JobRunnerOptions } from './job-runner.js';
import { RedisConnection } from './redis-connection.js';
import { RedisDispatcher } from './redis-dispatcher.js';
import { RedisJobEvents } from './redis-job-events.js';
import { RedisJobWrites } from './redis-job-writes.js';
import { RedisLocalValues } from './redis-local-values.js';
import { RedisJobs, type RedisJobsOptions } from './redis-jobs.js';
import { withScripts } from './redis-scripts.js';

/** How long a stopping replica gives Redis to take the ends of its last jobs. */
const LAST_WRITES_MS = 5_000;

export interface RedisReplicaOptions extends RedisJobsOptions {
  runner: JobRunnerOptions;
  /** How many jobs this replica runs at once: its workers. */
  workers: number;
  log: { warn: (line: string) => void };
}

/**
 * One replica's part in a job queue shared through Redis: its connections (commands, the
 * subscription, the blocking read), the backend the routes use and the dispatcher that feeds
 * its workers. Connected before any model loads, so a wrong URL fails `svc start` at once.
 */
export class RedisReplica {
  private dispatcher: RedisDispatcher | null = null;
  private writes: RedisJobWrites | null = null;

  private constructor(
    private readonly connection: RedisConnection,
    private readonly parts: Awaited<ReturnType<typeof connectAll>>,
  ) {}

  static async connect(url: string): Promise<RedisReplica> {
    const { connection, commands } = await RedisConnection.open(url);
    try {
      return new RedisReplica(connection, await connectAll(connection, commands));
    } catch (error) {
      connection.close();
      throw error;
    }
  }

  /** The backend, whose jobs run on `calls` once `start` is called. */
  jobs(calls: Pick<CallBackend, 'submit'>, options: RedisReplicaOptions): RedisJobs {
    const { commands, blocking, events } = this.parts;
    let dispatcher: RedisDispatcher | null = null;
    const local = new RedisLocalValues();
    const writes = new RedisJobWrites(commands, options.retention.ttlMs, local, (id) => dispatcher?.entryOf(id), (job, error) =>
      options.log.warn(`job ${job.id}: Redis refused its change (${(error as Error).message})`),
    );
    const runner = new JobRunner(writes, calls, options.runner);
    dispatcher = new RedisDispatcher(commands, blocking, events, writes, local, runner, options.workers, options.log);
    this.dispatcher = dispatcher;
    this.writes = writes;
    return new RedisJobs(this.connection, commands, events, writes, local, options);
  }

  /** This replica's workers take jobs from the queue from now on. */
  start(): void {
    this.dispatcher?.start();
  }

  /** Takes no more jobs: called as the server begins to stop, before its pool does. */
  async stopTaking(): Promise<void> {
    await this.dispatcher?.stop();
  }

  /** Hands the ends of the last jobs to Redis (for a while), then lets go of it. */
  async close(): Promise<void> {
    await this.stopTaking();
    this.dispatcher?.release();
    if (this.writes) await Promise.race([this.writes.settled(), new Promise((resolve) => setTimeout(resolve, LAST_WRITES_MS).unref())]);
    this.connection.close();
  }
}

async function connectAll(connection: RedisConnection, commands: Awaited<ReturnType<RedisConnection['connect']>>) {
  await RedisDispatcher.prepare(commands);
  const events = await RedisJobEvents.listen(await connection.connect());
  return { commands: withScripts(commands), blocking: await connection.connect(), events };
}
