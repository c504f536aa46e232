#!/usr/bin/env node
// bench/jobs/crash.js: kill -9 of `svc start --compute serverless` in the middle of a flood of
// jobs, then the same command again: how many of the jobs it had accepted (2xx at submit) are
// readable after the restart, and how each ended. The jobs live where they do by default (a
// SQLite file in the state directory; XDG_STATE_HOME points at a directory of this run's own).
//
// Usage: node bench/jobs/crash.js [--jobs 2000] [--clients 64] [--seconds 0.01] [--workers 2]
//          [--kill-at 0.5] [--job-store URL] [--replicas N] [--wait SECONDS]
// --kill-at: the share of the submits sent when the gateway is killed. --job-store memory
// shows what the flood loses without a file. --replicas 3: three replicas sharing a queue in
// Redis (a redis-server of this run's own, --appendonly yes, unless --job-store names one);
// the clients spread their submits over them, the first is killed and not restarted, and each
// accepted job is read through a replica other than the one that took it. --wait 10: each
// submit waits for its job (`Prefer: wait=10`), which the SQLite store writes when it answers.
// Needs the CLI bundle (`node scripts/bundle.js`).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { freePort } from '../lib/processes.js';
import { redisVersion, startRedisServer } from '../lib/redis.js';

const here = dirname(fileURLToPath(import.meta.url));
const svcBin = join(here, '..', '..', 'bin', 'svc.js');
const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '2000' },
    clients: { type: 'string', default: '64' },
    seconds: { type: 'string', default: '0.01' },
    workers: { type: 'string', default: '2' },
    'kill-at': { type: 'string', default: '0.5' },
    'job-store': { type: 'string' },
    replicas: { type: 'string', default: '1' },
    wait: { type: 'string' },
  },
});
const replicaCount = Number(values.replicas);
const total = Number(values.jobs);
const stateHome = mkdtempSync(join(tmpdir(), 'svc-crash-'));
const port = await freePort();
const agent = new Agent({ keepAlive: true, maxSockets: Number(values.clients) });
const redisServer = replicaCount > 1 && values['job-store'] === undefined ? await startRedisServerOnce() : null;
const jobStore = redisServer ? `redis://127.0.0.1:${redisServer.port}` : values['job-store'];
const commandOn = (onPort) => [svcBin, 'start', join(here, 'svc', 'service.py'), '--compute', 'serverless', '--host', '127.0.0.1', '--port', String(onPort),
  '--workers', values.workers, '--queue-size', String(total), ...(jobStore ? ['--job-store', jobStore] : [])];
const command = commandOn(port);
const submitHeaders = values.wait === undefined ? {} : { prefer: `wait=${values.wait}` };

try {
  if (replicaCount > 1) await replicasCrash();
  else await oneServerCrash();
} finally {
  agent.destroy();
  redisServer?.child.kill('SIGTERM');
  rmSync(stateHome, { recursive: true, force: true });
}

async function oneServerCrash() {
  let server = await start();
  const accepted = [];
  let sent = 0;
  let refused = 0;
  let cut = 0;
  let killedAfterMs = 0;
  const began = performance.now();
  await Promise.all(
    Array.from({ length: Number(values.clients) }, async () => {
      while (sent < total) {
        sent += 1;
        if (sent === Math.round(total * Number(values['kill-at']))) {
          server.kill('SIGKILL');
          killedAfterMs = performance.now() - began;
        }
        try {
          const answer = await send('POST', '/pause', JSON.stringify({ seconds: Number(values.seconds) }), submitHeaders);
          if (answer.status >= 200 && answer.status < 300) accepted.push(answer.body.id);
          else if (refused++ === 0) console.log(`first refusal: ${answer.status} ${JSON.stringify(answer.body)}`);
        } catch {
          cut += 1; // the connection was refused or cut by the kill: never accepted
        }
      }
    }),
  );
  await new Promise((resolve) => (server.exitCode !== null || server.signalCode !== null ? resolve() : server.on('exit', resolve)));
  const restartBegan = performance.now();
  server = await start();
  const readyMs = performance.now() - restartBegan;
  const outcomes = new Map();
  for (let i = 0; i < accepted.length; i += 64) {
    const batch = await Promise.all(accepted.slice(i, i + 64).map((id) => ending(id)));
    for (const outcome of batch) outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
  }
  const endedMs = performance.now() - restartBegan;
  server.kill('SIGTERM');
  await new Promise((resolve) => server.on('exit', resolve));
  const lost = outcomes.get('404 (lost)') ?? 0;
  console.log(`svc ${command.slice(1).join(' ')}`);
  console.log(`${total} submits${values.wait === undefined ? '' : ` with Prefer: wait=${values.wait}`} from ${values.clients} clients, kill -9 after ${Math.round(killedAfterMs)} ms: ${accepted.length} accepted, ${refused} refused, ${cut} cut by the kill`);
  console.log(`restart: ready in ${Math.round(readyMs)} ms; every accepted job ended within ${Math.round(endedMs)} ms of it`);
  for (const [outcome, count] of [...outcomes].sort()) console.log(`  ${outcome}: ${count}`);
  console.log(`lost: ${lost} of ${accepted.length}`);
  process.exitCode = lost === 0 ? 0 : 1;
}

/** N replicas on one Redis queue; the first is killed mid-flood and stays dead. */
async function replicasCrash() {
  const ports = [port];
  for (let i = 1; i < replicaCount; i += 1) ports.push(await freePort());
  const servers = await Promise.all(ports.map((onPort) => start(commandOn(onPort), onPort)));
  const accepted = [];
  let sent = 0;
  let refused = 0;
  let cut = 0;
  let killed = false;
  let killedAfterMs = 0;
  const began = performance.now();
  await Promise.all(
    Array.from({ length: Number(values.clients) }, async (_, client) => {
      while (sent < total) {
        sent += 1;
        if (sent === Math.round(total * Number(values['kill-at']))) {
          servers[0].kill('SIGKILL');
          killed = true;
          killedAfterMs = performance.now() - began;
        }
        // Before the kill every replica takes submits; after it, the living ones (as a load balancer would).
        const by = killed ? 1 + (client % (replicaCount - 1)) : client % replicaCount;
        try {
          const answer = await send('POST', '/pause', JSON.stringify({ seconds: Number(values.seconds) }), submitHeaders, ports[by]);
          if (answer.status >= 200 && answer.status < 300) accepted.push({ id: answer.body.id, by });
          else if (refused++ === 0) console.log(`first refusal: ${answer.status} ${JSON.stringify(answer.body)}`);
        } catch {
          cut += 1;
        }
      }
    }),
  );
  const readBegan = performance.now();
  const outcomes = new Map();
  for (let i = 0; i < accepted.length; i += 64) {
    // Through a living replica other than the one that took the submit.
    const batch = await Promise.all(accepted.slice(i, i + 64).map(({ id, by }) => ending(id, ports[by === 1 ? 2 : 1])));
    for (const outcome of batch) outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
  }
  const endedMs = performance.now() - readBegan;
  for (const server of servers.slice(1)) server.kill('SIGTERM');
  await Promise.all(servers.slice(1).map((server) => new Promise((resolve) => server.on('exit', resolve))));
  const lost = outcomes.get('404 (lost)') ?? 0;
  const takenByKilled = accepted.filter(({ by }) => by === 0).length;
  console.log(`${replicaCount} replicas: svc ${command.slice(1).join(' ').replace(`--port ${port}`, '--port PORT')}`);
  console.log(`${total} submits${values.wait === undefined ? '' : ` with Prefer: wait=${values.wait}`} from ${values.clients} clients, kill -9 of replica 1 after ${Math.round(killedAfterMs)} ms: ${accepted.length} accepted (${takenByKilled} by the killed replica), ${refused} refused, ${cut} cut by the kill`);
  console.log(`every accepted job ended within ${Math.round(endedMs)} ms of the flood's end, read through another replica`);
  for (const [outcome, count] of [...outcomes].sort()) console.log(`  ${outcome}: ${count}`);
  console.log(`lost: ${lost} of ${accepted.length}`);
  process.exitCode = lost === 0 ? 0 : 1;
}

/** How an accepted job ended, read from the restarted server (Prefer: wait until it does). */
async function ending(id, onPort = port) {
  for (;;) {
    const { status, body } = await send('GET', `/v1/jobs/${id}`, null, { prefer: 'wait=30' }, onPort);
    if (status === 404) return '404 (lost)';
    if (['FINISHED', 'FAILED', 'TIMEOUT', 'CANCELLED'].includes(body.status)) return body.error_detail ? `${body.status} ${body.error_detail.type}` : body.status;
  }
}

function start(startCommand = command, onPort = port) {
  const child = spawn(process.execPath, startCommand, { env: { ...process.env, XDG_STATE_HOME: stateHome }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (data) => (stderr += data));
  return new Promise((resolve, reject) => {
    const poll = async () => {
      if (child.exitCode !== null) return reject(new Error(`svc exited: ${stderr}`));
      try {
        const { status, body } = await send('GET', '/health', null, {}, onPort);
        // BUSY counts: a restarted server is serving while it runs the jobs it recovered.
        if (status === 200 && ['READY', 'BUSY'].includes(body?.status)) return resolve(child);
      } catch {
        // not listening yet
      }
      setTimeout(poll, 100);
    };
    poll();
  });
}

async function startRedisServerOnce() {
  const server = await startRedisServer(stateHome);
  console.log(redisVersion());
  return server;
}

function send(method, path, body = null, headers = {}, onPort = port) {
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: '127.0.0.1', port: onPort, path, method, agent, headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...headers } }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () => {
        let parsed = null;
        try {
          parsed = JSON.parse(text);
        } catch {
          // a body that is not JSON: the status says enough
        }
        resolve({ status: response.statusCode, body: parsed });
      });
    });
    outgoing.on('error', reject);
    outgoing.end(body ?? undefined);
  });
}
