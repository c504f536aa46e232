#!/usr/bin/env node
// bench/jobs: no-op jobs through `svc start --compute serverless` and through the PyPI `apipod`
// package's serverless localhost mode (FastAPI + its in-process JobQueue), in the same run.
//
//  1. Throughput: N clients in a closed loop, each submitting a no-op job and waiting until
//     its result is visible, then the next; jobs completed per second. svc is measured twice:
//     waiting with `Prefer: wait` (RFC 7240) and polling like apipod's clients must.
//  2. Latency: one client, one job at a time, from the submit to the result in hand: svc with
//     `Prefer: wait` (raw HTTP, and the package's client `run()`), and both servers polled
//     once a second, the hosted API's default cadence; apipod also polled every 10 ms.
//
// svc runs twice, with its jobs in a SQLite file (the default for serverless compute) and in
// memory (--job-store memory), to show what durability costs: target, sqlite at least 70% of
// memory's jobs/s with `Prefer: wait`. A third svc (SQLite too) is given a webhook per job
// (`Webhook` header, every event: a no-op job makes `started` and `completed`), posted to a
// receiver in this process that answers 204, to show what signed, durable deliveries cost; and
// again with `Webhook-Events-Filter: completed` (one delivery a job).
// And svc with its jobs in Redis (a redis-server of this run's own, `--appendonly yes`): one
// replica, and three replicas sharing one queue (each with --workers N; the clients spread
// their submits over them, and wait on the replica that took each). On one machine the
// replicas share its cores: what three replicas add is their workers.
//
// Machines are shared and noisy: the servers run side by side, are measured in turn (the
// order rotates each round), and the table shows medians over rounds with ratios taken
// within each round.
//
// Usage: node bench/jobs/run.js [--duration 5] [--rounds 3] [--clients 16] [--poll-ms 10]
//          [--samples 300] [--slow-samples 5] [--workers 1] [--stall-after 10] [--markdown]
//          [--baseline DIR]
// --baseline DIR also runs the svc of another checkout (DIR, with its bundle built) in the
// same rounds, to show what a change costs: say the worktree of the commit before it.
// A job with no result after --stall-after seconds is abandoned and counted as stalled (the
// PyPI apipod's queue thread can die under concurrent load, leaving queued jobs unrun until
// the next submit restarts it); throughput counts finished jobs only.
// Needs the CLI bundle (`node scripts/bundle.js`). Uses bench/serve/.venv-apipod when it
// holds the pinned apipod, else creates bench/jobs/.venv-apipod (pip). Writes nothing else.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { Agent, createServer, request } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { median, ms, percentile, printTable, push, rotate } from '../lib/numbers.js';
import { freePort, run, stopServers } from '../lib/processes.js';
import { redisVersion, startRedisServer } from '../lib/redis.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const svcBin = join(root, 'bin', 'svc.js');
const APIPOD = ['apipod==1.0.33'];

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    clients: { type: 'string', default: '16' },
    'poll-ms': { type: 'string', default: '10' },
    samples: { type: 'string', default: '300' },
    'slow-samples': { type: 'string', default: '5' },
    workers: { type: 'string', default: '1' },
    'stall-after': { type: 'string', default: '10' },
    baseline: { type: 'string' },
    markdown: { type: 'boolean', default: false },
  },
});
const durationMs = Number(values.duration) * 1000;
const rounds = Number(values.rounds);
const clients = Number(values.clients);
const pollMs = Number(values['poll-ms']);
const samples = Number(values.samples);
const slowSamples = Number(values['slow-samples']);
const workers = Number(values.workers);
const stallAfterMs = Number(values['stall-after']) * 1000;

const agent = new Agent({ keepAlive: true, maxSockets: clients * 2 });
const started = [];
const jobDir = mkdtempSync(join(tmpdir(), 'svc-bench-jobs-'));
const WAIT = 'svc, Prefer: wait';
const POLLED = `svc, polled every ${pollMs} ms`;
const APIPOD_POLLED = `apipod (PyPI), polled every ${pollMs} ms`;
const MEMORY_WAIT = 'svc --job-store memory, Prefer: wait';
const REDIS_WAIT = 'svc --job-store redis, 1 replica, Prefer: wait';
const REDIS3_WAIT = 'svc --job-store redis, 3 replicas, Prefer: wait';
const WEBHOOK_WAIT = 'svc, Prefer: wait, a webhook per job';
const WEBHOOK_COMPLETED_WAIT = 'svc, Prefer: wait, a webhook per job, completed only';
/** Deliveries the receiver got, by event. */
const delivered = { started: 0, completed: 0, other: 0 };
let receiverServer = null;
process.on('SIGINT', () => stopAll().then(() => process.exit(130)));

try {
  const venv = ensureVenv();
  if (!existsSync(join(root, 'dist', 'svc.js'))) throw new Error('no CLI bundle: run `node scripts/bundle.js` first');
  const startSvcOf = (name, bin, store) =>
    startServer(name, process.execPath, [bin, 'start', join(here, 'svc', 'service.py'), '--compute', 'serverless', '--host', '127.0.0.1',
      '--workers', String(workers), '--queue-size', '100000', '--max-jobs', '100000'], store, (port) => ({ args: ['--port', String(port)] }));
  // Each server's SQLite file in a directory of this run's own (the default would be the user's state directory).
  const svc = await startSvcOf('svc', svcBin, { SVC_JOB_STORE: `sqlite:${join(jobDir, 'svc.sqlite')}` });
  const memory = await startSvcOf('svc --job-store memory', svcBin, { SVC_JOB_STORE: 'memory' });
  // Polled on a server of its own: the two compared above then take the same load, and keep as many jobs.
  const polled = await startSvcOf('svc, polled', svcBin, { SVC_JOB_STORE: `sqlite:${join(jobDir, 'polled.sqlite')}` });
  const redisPort = await startRedis();
  const redis = await startSvcOf('svc --job-store redis', svcBin, { SVC_JOB_STORE: `redis://127.0.0.1:${redisPort}/0` });
  const replicas = [];
  for (let i = 1; i <= 3; i += 1) replicas.push(await startSvcOf(`svc --job-store redis, replica ${i}`, svcBin, { SVC_JOB_STORE: `redis://127.0.0.1:${redisPort}/1` }));
  const replicaSet = { name: 'svc --job-store redis, 3 replicas', ports: replicas.map((replica) => replica.port), next: 0 };
  const receiver = await startReceiver();
  const secrets = join(jobDir, 'webhook-secrets.json');
  // Its output is the secret, which the table has no use for.
  if (spawnSync(process.execPath, [svcBin, 'webhook-secret', join(here, 'svc', 'service.py'), '--webhook-secrets', secrets], { stdio: 'ignore' }).status !== 0) {
    throw new Error('svc webhook-secret failed');
  }
  const hooked = await startServer('svc, webhooks', process.execPath, [svcBin, 'start', join(here, 'svc', 'service.py'), '--compute', 'serverless', '--host', '127.0.0.1',
    '--workers', String(workers), '--queue-size', '100000', '--max-jobs', '100000', '--webhook-allow-private', '--webhook-secrets', secrets],
  { SVC_JOB_STORE: `sqlite:${join(jobDir, 'webhooks.sqlite')}` }, (port) => ({ args: ['--port', String(port)] }));
  const baseline = values.baseline === undefined ? null : await startSvcOf(`svc at ${values.baseline}`, join(values.baseline, 'bin', 'svc.js'), { XDG_STATE_HOME: jobDir });
  const apipod = await startServer('apipod (PyPI)', join(venv, 'bin', 'python'), [join(here, 'apipod_pypi', 'service.py')], {}, (port) => ({
    env: { APIPOD_COMPUTE: 'serverless', APIPOD_PROVIDER: 'localhost', APIPOD_HOST: '127.0.0.1', APIPOD_PORT: String(port) },
  }));
  await Promise.all([svc, memory, polled, hooked, apipod, redis, ...replicas, ...(baseline ? [baseline] : [])].map(waitReady));
  console.log(describeMachine(venv));

  const ways = {
    [WAIT]: (signal) => svcJob(svc, { wait: true, signal }),
    [POLLED]: (signal) => svcJob(polled, { pollEveryMs: pollMs, signal }),
    [APIPOD_POLLED]: (signal) => apipodJob(apipod, pollMs, signal),
    [MEMORY_WAIT]: (signal) => svcJob(memory, { wait: true, signal }),
    [REDIS_WAIT]: (signal) => svcJob(redis, { wait: true, signal }),
    [REDIS3_WAIT]: (signal) => svcJob(replicaSet, { wait: true, signal }),
    [WEBHOOK_WAIT]: (signal) => svcJob(hooked, { wait: true, signal, webhook: { webhook: receiver.url } }),
    [WEBHOOK_COMPLETED_WAIT]: (signal) => svcJob(hooked, { wait: true, signal, webhook: { webhook: receiver.url, 'webhook-events-filter': 'completed' } }),
    ...(baseline ? { [`${baseline.name}, Prefer: wait`]: (signal) => svcJob(baseline, { wait: true, signal }) } : {}),
  };
  // Warm-up: imports, JIT, pydantic's lazy set-up, connection pools.
  for (const job of Object.values(ways)) await closedLoop(job, clients, 1500, () => {});

  const throughput = new Map(); // way -> [jobs/s per round]
  const stalls = new Map(); // way -> jobs abandoned
  for (let round = 0; round < rounds; round += 1) {
    for (const [way, job] of rotate(Object.entries(ways), round)) {
      push(throughput, way, await closedLoop(job, clients, durationMs, () => stalls.set(way, (stalls.get(way) ?? 0) + 1)));
    }
  }

  // Printed now: the PyPI apipod's queue thread can stall in the latency phase below.
  reportThroughput(throughput, stalls);

  // The package's own client, as bundled (`import { ServiceClient } from 'svc-ml'`).
  const { ServiceClient } = await import(pathToFileURL(join(root, 'dist', 'client', 'index.js')).href);
  const client = new ServiceClient({ baseUrl: `http://127.0.0.1:${svc.port}`, apiKey: null });
  const latencies = new Map(); // way -> { times: [ms], stalled: jobs abandoned }
  const timeEach = async (way, count, job) => {
    if (!latencies.has(way)) latencies.set(way, { times: [], stalled: 0 });
    const samplesOfWay = latencies.get(way);
    for (let i = 0; i < count; i += 1) {
      const start = performance.now();
      if (await finishedInTime(job)) samplesOfWay.times.push(performance.now() - start);
      else samplesOfWay.stalled += 1;
    }
  };
  await timeEach('svc, Prefer: wait (HTTP)', 20, (signal) => svcJob(svc, { wait: true, signal })); // warm-up, dropped
  latencies.clear();
  for (let round = 0; round < rounds; round += 1) {
    await timeEach('svc, Prefer: wait (HTTP)', Math.ceil(samples / rounds), (signal) => svcJob(svc, { wait: true, signal }));
    await timeEach('svc, Prefer: wait (client run())', Math.ceil(samples / rounds), (signal) => client.run('/noop', {}, { signal }));
    await timeEach('svc --job-store memory, Prefer: wait (HTTP)', Math.ceil(samples / rounds), (signal) => svcJob(memory, { wait: true, signal }));
    await timeEach('svc --job-store redis, 1 replica, Prefer: wait (HTTP)', Math.ceil(samples / rounds), (signal) => svcJob(redis, { wait: true, signal }));
    await timeEach('svc --job-store redis, 3 replicas, Prefer: wait (HTTP)', Math.ceil(samples / rounds), (signal) => svcJob(replicaSet, { wait: true, signal }));
    await timeEach(`apipod (PyPI), polled every ${pollMs} ms`, Math.ceil(samples / rounds), (signal) => apipodJob(apipod, pollMs, signal));
  }
  await timeEach('svc, polled every 1 s', slowSamples, (signal) => svcJob(svc, { pollEveryMs: 1000, signal }));
  await timeEach('apipod (PyPI), polled every 1 s', slowSamples, (signal) => apipodJob(apipod, 1000, signal));

  reportLatency(latencies);
  for (const server of [svc, apipod]) {
    const crash = server.stderr().match(/^Exception in thread[^\n]*\n(?:[\s\S]*?\n)?(\w+(?:Error|Exception)[^\n]*)/m);
    if (crash) console.log(`${server.name}: a thread died: ${crash[1]}`);
  }
} finally {
  await stopAll();
  rmSync(jobDir, { recursive: true, force: true });
}

// --- one job, each server's way --------------------------------------------------------------

/**
 * svc: submit, and either hold the answer with `Prefer: wait` until the job ends or poll the
 * envelope's refresh_job_url. Resolves once the result is in hand.
 */
async function svcJob(server, { wait = false, pollEveryMs = 0, signal, webhook = {} }) {
  const prefer = wait ? { prefer: 'wait=10' } : {};
  // Replicas take the submits in turn; a job is then followed where its envelope points.
  const port = server.ports ? server.ports[server.next++ % server.ports.length] : server.port;
  let envelope = await send('POST', port, '/noop', '{}', { ...prefer, ...webhook });
  while (envelope.status !== 'FINISHED' && !signal.aborted) {
    if (['FAILED', 'TIMEOUT', 'CANCELLED'].includes(envelope.status)) throw new Error(`svc job ended ${envelope.status}`);
    if (!wait) await sleep(pollEveryMs);
    envelope = await send('GET', port, new URL(envelope.refresh_job_url).pathname, null, prefer);
  }
  if (!signal.aborted && envelope.result?.ok !== true) throw new Error(`svc: unexpected result ${JSON.stringify(envelope)}`);
}

/** apipod: submit, then poll GET /status/{job_id} (its links.status) until `finished`; reading a finished job removes it. */
async function apipodJob(server, pollEveryMs, signal) {
  let job = await send('POST', server.port, '/noop', '', {});
  const statusPath = job.links.status;
  while (job.status !== 'finished' && !signal.aborted) {
    if (['failed', 'timeout', 'not_found'].includes(job.status)) throw new Error(`apipod job ended ${job.status}: ${JSON.stringify(job)}`);
    await sleep(pollEveryMs);
    job = await send('GET', server.port, statusPath, null, {});
  }
  if (!signal.aborted && job.result?.ok !== true) throw new Error(`apipod: unexpected result ${JSON.stringify(job)}`);
}

/**
 * `count` clients, each running jobs one after another for `ms`; jobs finished per second. A
 * stalled job is abandoned (onStall) and its client submits the next.
 */
async function closedLoop(job, count, ms, onStall) {
  const deadline = performance.now() + ms;
  const start = performance.now();
  let done = 0;
  await Promise.all(
    Array.from({ length: count }, async () => {
      while (performance.now() < deadline) {
        if (await finishedInTime(job)) done += 1;
        else onStall();
      }
    }),
  );
  return done / ((performance.now() - start) / 1000);
}

/** Runs one job; false when it has no result after --stall-after (its client stops waiting). */
async function finishedInTime(job) {
  const abandon = new AbortController();
  let timer;
  const stalled = new Promise((resolve) => (timer = setTimeout(() => resolve(false), stallAfterMs)));
  try {
    const finished = job(abandon.signal).then(
      () => true,
      (error) => {
        if (abandon.signal.aborted) return false; // failed once abandoned: already counted
        throw error;
      },
    );
    return await Promise.race([finished, stalled]);
  } finally {
    clearTimeout(timer);
    abandon.abort();
  }
}

function send(method, port, path, body, headers) {
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: '127.0.0.1', port, path, method, agent, headers: { ...(body !== null ? { 'content-type': 'application/json' } : {}), ...headers } }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () => {
        if (response.statusCode >= 300) reject(new Error(`${method} ${path} answered ${response.statusCode}: ${text}`));
        else resolve(JSON.parse(text));
      });
    });
    outgoing.on('error', reject);
    outgoing.end(body ?? undefined);
  });
}

function sleep(ms) {
  return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
}

// --- servers ---------------------------------------------------------------------------------

/** The webhook receiver: 204 for every delivery, counted by event (its signature is not checked: the tests do that). */
async function startReceiver() {
  const server = createServer((incoming, response) => {
    let body = '';
    incoming.setEncoding('utf8');
    incoming.on('data', (chunk) => (body += chunk));
    incoming.on('end', () => {
      const event = JSON.parse(body).event;
      delivered[event in delivered ? event : 'other'] += 1;
      response.writeHead(204).end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiverServer = server;
  return { url: `http://127.0.0.1:${server.address().port}/hooks` };
}

async function startServer(name, command, args, env, withPort) {
  const port = await freePort();
  const extra = withPort(port);
  const child = spawn(command, [...args, ...(extra.args ?? [])], {
    cwd: here,
    env: { ...process.env, ...env, ...(extra.env ?? {}) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (data) => (stderr = (stderr + data).slice(-4000)));
  const server = { name, port, child, stderr: () => stderr, exited: new Promise((resolve) => child.on('exit', resolve)) };
  started.push(server);
  return server;
}

/** A redis-server of this run's own, stopped with the other servers. */
async function startRedis() {
  const server = await startRedisServer(jobDir);
  started.push({ name: 'redis-server', stderr: () => '', ...server });
  return server.port;
}

async function waitReady(server) {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (server.child.exitCode !== null) throw new Error(`${server.name} exited: ${server.stderr()}`);
    try {
      const response = await fetch(`http://127.0.0.1:${server.port}/health`);
      const health = await response.json();
      // svc says READY once its workers are up; apipod answers 200 as soon as it listens.
      if (response.ok && (health.status === undefined || health.status === 'READY' || !server.name.startsWith('svc'))) return;
    } catch {
      // not listening yet
    }
    await sleep(200);
  }
  throw new Error(`${server.name} did not come up within 60 s: ${server.stderr()}`);
}

async function stopAll() {
  await stopServers(started.splice(0));
  receiverServer?.close();
  agent.destroy();
}

// --- set-up ----------------------------------------------------------------------------------

/** apipod in a virtualenv of its own, so it never shadows the `apipod` toolkit svc ships. */
function ensureVenv() {
  const wanted = APIPOD.join(' ');
  for (const venv of [join(root, 'bench', 'serve', '.venv-apipod'), join(here, '.venv-apipod')]) {
    const version = spawnSync(join(venv, 'bin', 'python'), ['-c', 'import importlib.metadata as m; print(m.version("apipod"))'], { encoding: 'utf8' });
    if (version.status === 0 && `apipod==${version.stdout.trim()}` === wanted) return venv;
  }
  const venv = join(here, '.venv-apipod');
  process.stderr.write(`creating ${venv} with ${wanted}\n`);
  run('python3', ['-m', 'venv', venv]);
  run(join(venv, 'bin', 'pip'), ['install', '--quiet', ...APIPOD]);
  return venv;
}

function describeMachine(venv) {
  const apipodVersion = spawnSync(join(venv, 'bin', 'python'), ['-c', 'import importlib.metadata as m; print(m.version("apipod"))'], { encoding: 'utf8' }).stdout.trim();
  const python = spawnSync('python3', ['--version'], { encoding: 'utf8' }).stdout.trim();
  const svcVersion = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
  return [
    `machine: ${spawnSync('nproc', { encoding: 'utf8' }).stdout.trim()} cores, Node ${process.version}, ${python} (svc workers)`,
    `svc ${svcVersion}: svc start --compute serverless --workers ${workers} --queue-size 100000 --max-jobs 100000 (jobs in a SQLite file, with --job-store memory, in Redis: one replica, and three with --workers ${workers} each)`,
    `redis: ${redisVersion()} (appendfsync everysec)`,
    'svc, webhooks: the same, SQLite, with --webhook-allow-private; every submit names a receiver in this process (204)',
    `apipod ${apipodVersion} from PyPI: APIPOD_COMPUTE=serverless (FastAPI + JobQueue, app.start() -> uvicorn), queue_size=100000`,
    `load: ${clients} clients in one Node process (node:http, keep-alive), ${values.duration} s per measurement, ${rounds} rounds`,
  ].join('\n');
}

// --- numbers and tables ----------------------------------------------------------------------

function reportThroughput(throughput, stalls) {
  const ways = [...throughput.keys()];
  const base = throughput.get(APIPOD_POLLED);
  printTable(
    ['no-op jobs, closed loop', 'jobs/s (median)', 'rounds', 'vs apipod', `stalled (> ${values['stall-after']} s)`],
    ways.map((way) => [way, median(throughput.get(way)).toFixed(0), throughput.get(way).map((v) => v.toFixed(0)).join(' / '), ratio(throughput.get(way), base), String(stalls.get(way) ?? 0)]),
    values,
  );
  const waitJobs = median(throughput.get(WAIT));
  const apipodJobs = median(base);
  console.log('');
  // apipod's queue thread can die under load and finish nothing: then there is no ratio to judge.
  const verdict = apipodJobs === 0 ? 'not judged: apipod finished no job this run' : waitJobs >= 10 * apipodJobs ? 'met' : 'NOT met';
  console.log(`jobs/s, svc with Prefer: wait / apipod: ${ratio(throughput.get(WAIT), base)} (target at least 10x: ${verdict})`);
  console.log(`jobs/s, svc polled / apipod polled alike: ${ratio(throughput.get(POLLED), base)}`);
  const durability = median(throughput.get(WAIT).map((value, round) => value / throughput.get(MEMORY_WAIT)[round]));
  console.log(`jobs/s with Prefer: wait, sqlite / memory: ${durability.toFixed(2)}x (target at least 0.70x: ${durability >= 0.7 ? 'met' : 'NOT met'})`);
  console.log(`jobs/s with Prefer: wait, redis 1 replica / memory: ${ratio(throughput.get(REDIS_WAIT), throughput.get(MEMORY_WAIT), 2)}; 3 replicas / 1 replica: ${ratio(throughput.get(REDIS3_WAIT), throughput.get(REDIS_WAIT), 2)}`);
  console.log(`jobs/s with Prefer: wait, a webhook per job / none (both sqlite): ${ratio(throughput.get(WEBHOOK_WAIT), throughput.get(WAIT), 2)} every event, ${ratio(throughput.get(WEBHOOK_COMPLETED_WAIT), throughput.get(WAIT), 2)} completed only; deliveries received: ${delivered.started} started, ${delivered.completed} completed, ${delivered.other} other`);
  const baselineWay = ways.find((way) => way.startsWith('svc at '));
  if (baselineWay !== undefined) console.log(`jobs/s with Prefer: wait, this svc / ${baselineWay.replace(/, Prefer: wait$/, '')}: ${ratio(throughput.get(WAIT), throughput.get(baselineWay), 2)}`);
  console.log('');
}

function reportLatency(latencies) {
  printTable(
    ['submit to result, one client', 'median', 'p90', 'samples', 'stalled'],
    [...latencies].map(([way, { times, stalled }]) =>
      times.length ? [way, ms(median(times)), ms(percentile(times, 0.9)), String(times.length), String(stalled)] : [way, '-', '-', '0', String(stalled)],
    ),
    values,
  );
  const waitLatency = median(latencies.get('svc, Prefer: wait (HTTP)').times);
  console.log('');
  console.log(`median submit to result with Prefer: wait: ${ms(waitLatency)} (target under 5 ms: ${waitLatency < 5 ? 'met' : 'NOT met'})`);
}

/** The median of per-round ratios: each round's servers ran under the same load on the machine. */
function ratio(own, base, digits = 1) {
  return `${median(own.map((value, round) => value / base[round])).toFixed(digits)}x`;
}

