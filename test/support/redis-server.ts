import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { Redis } from 'ioredis';
import { closedPort } from './ports.js';

/** Debian's redis-server (`.ci/setup` installs it). */
const REDIS_SERVER = '/usr/bin/redis-server';

export interface RunningRedis {
  url: string;
  port: number;
  /** SIGTERM: Redis writes its append-only file and exits. */
  stop: () => Promise<void>;
  /** Starts it again on the same port, from the same directory (and so the same data). */
  restart: () => Promise<void>;
}

/**
 * A real redis-server on a free port, in a temporary directory of its own, with its data in an
 * append-only file (`--appendonly yes`, no RDB snapshots) so that a restart keeps every write.
 */
export async function startRedis(options: { bind?: string[]; password?: string } = {}): Promise<RunningRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-redis-'));
  const port = await closedPort();
  const bind = options.bind ?? ['127.0.0.1'];
  const auth = options.password === undefined ? [] : ['--requirepass', options.password];
  let child: ResultPromise | null = null;
  const launch = async () => {
    child = execa(REDIS_SERVER, ['--port', String(port), '--bind', bind.join(' '), ...auth, '--dir', dir, '--save', '', '--appendonly', 'yes', '--appendfsync', 'always'], {
      reject: false,
      buffer: false,
      stdio: 'ignore',
    });
    await untilAnswering(port, options.password);
  };
  await launch();
  const stop = async () => {
    const running = child;
    child = null;
    running?.kill('SIGTERM');
    await running;
  };
  const credentials = options.password === undefined ? '' : `:${encodeURIComponent(options.password)}@`;
  return { url: `redis://${credentials}127.0.0.1:${port}`, port, stop, restart: launch };
}

async function untilAnswering(port: number, password: string | undefined): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const client = new Redis({ port, host: '127.0.0.1', password, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.ping();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      client.disconnect();
    }
  }
}
