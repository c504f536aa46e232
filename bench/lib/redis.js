// A redis-server of a benchmark's own.
import { spawn, spawnSync } from 'node:child_process';
import { connect } from 'node:net';
import { freePort } from './processes.js';

const REDIS_SERVER = '/usr/bin/redis-server';

/**
 * Debian's redis-server on a free port, its append-only file in `dir` (`--appendonly yes`,
 * no snapshots; none with `appendOnly: false`), once it answers PING: `{ port, child, exited }`.
 */
export async function startRedisServer(dir, { appendOnly = true } = {}) {
  const port = await freePort();
  const child = spawn(REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', appendOnly ? 'yes' : 'no'], { stdio: 'ignore' });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  for (const deadline = Date.now() + 10_000; !(await answersPing(port)); ) {
    if (Date.now() > deadline) throw new Error(`redis-server did not answer on port ${port}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { port, child, exited };
}

/** Whether this machine has it (`apt-get install redis-server`). */
export function hasRedisServer() {
  return !spawnSync(REDIS_SERVER, ['--version']).error;
}

/** What the benchmarks say of the server they ran. */
export function redisVersion({ appendOnly = true } = {}) {
  return `${spawnSync(REDIS_SERVER, ['--version'], { encoding: 'utf8' }).stdout.trim()}, --save '' --appendonly ${appendOnly ? 'yes' : 'no'}`;
}

function answersPing(port) {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => socket.write('PING\r\n'));
    socket.on('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
    socket.on('error', () => resolve(false));
  });
}
