#!/usr/bin/env node
// bench/serve: `svc start` beside its peers, each serving the same functions, driven by one load
// generator (wrk, one thread). Peers: FastAPI + uvicorn (a `def` and an `async def` endpoint),
// the PyPI `apipod` package, LitServe, BentoML and Cog's server (coglet, async predict), and a
// bare node:http echo as the ceiling; and svc's own worker behind the least gateway that can
// drive it (mini_gateway.mjs: what two processes cost, whatever a gateway does), with Fastify
// and without (through node:http alone). Suites:
//   trivial  POST /echo {"text":"hello"} at several concurrencies (req/s, p50, p99)
//   large    a 2 MB JSON string echoed, a 1.5 MB PNG sent as base64 and answered as the image,
//            the PNG uploaded as a multipart form (svc and FastAPI only),
//            and a JSON list of 200,000 numbers averaged (svc and FastAPI only); the string and
//            the image also as svc jobs (serverless compute, `Prefer: wait`, answered with the
//            job's envelope), their store a SQLite file, memory and Redis ("svc job", "svc job (memory)",
//            "svc job (Redis)": a redis-server of the run's own, when one is installed)
//   embedding  POST /embed {"text":"hello"} answered with an embedding, {"embedding": 1,536 floats,
//            "tokens": N} (svc, its job and FastAPI only), at the large suite's concurrencies
//   stream   a language model's answer streamed: 256 short tokens a request as server-sent
//            events (a generator; FastAPI a StreamingResponse), and as an OpenAI chat stream
//            (svc's chat route; FastAPI as vLLM's server writes chunks), at the large suite's
//            concurrencies: req/s is streams a second (svc and FastAPI only)
//   busy     the trivial echo at one concurrency with a CPU-bound process running beside it
//   cold     spawn to the first 200 answer
//   memory   resident memory of every process of a started, idle server (2 s and 15 s after one request)
//   cpu      a CPU-bound function under `svc start --workers 1` and `--workers 2`
// Machines are shared and noisy, so every server runs in the same run, measured in turn (the
// order rotates each round); results are medians over rounds, and ratios to FastAPI's
// `async def` endpoint are taken within each round, printed as their median and range.
//
// Usage: node bench/serve/run.js [--duration 5] [--rounds 3] [--concurrency 1,16,64]
//          [--large-concurrency 1,4] [--busy-concurrency 16] [--spin-n 90000]
//          [--spin-concurrency 4] [--only trivial,large,embedding,stream,busy,cold,memory,cpu]
//          [--peers svc,'FastAPI async'] [--warm-up 2] [--markdown]
// --peers keeps only the named servers (FastAPI async, the base of every ratio, always stays).
// --warm-up is the seconds each server is loaded, at the suite's first concurrency, before any
// is measured: 15 at `--concurrency 1` measures one connection with V8's compiles settled.
// Needs: wrk (`apt-get install wrk`) and the CLI bundle (`node scripts/bundle.js`). Creates a
// virtualenv per peer under bench/serve/.venv-* on first use (pip, pinned versions).
// Writes nothing outside bench/serve (servers' logs go to bench/serve/logs/) but the jobs'
// SQLite file and Redis's, in a temporary directory it removes.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { median, ms, printTable, push, rotate } from '../lib/numbers.js';
import { freePort, run } from '../lib/processes.js';
import { imageBody, largeTextBody, multipartImageBody, numbersBody, randomPng } from '../lib/payloads.js';
import { hasRedisServer, redisVersion, startRedisServer } from '../lib/redis.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const svcBin = join(root, 'bin', 'svc.js');
// svc's worker runs in a virtualenv of its own with nothing installed (svc's toolkit comes from
// the CLI), like every peer's Python: the base interpreter's site-packages may hold .pth files
// (this machine's imports certifi at start-up: +5 MiB and +20 ms a process) that no peer loads.
const PINS = {
  svc: [],
  fastapi: ['fastapi==0.165.0', 'uvicorn[standard]==0.54.0', 'python-multipart==0.0.34'],
  apipod: ['apipod==1.0.33'],
  litserve: ['litserve==0.2.19'],
  bentoml: ['bentoml==1.4.40'],
  cog: ['cog==0.23.1'],
};
const SUITES = ['trivial', 'large', 'embedding', 'stream', 'busy', 'cold', 'memory', 'cpu'];
const BASE = 'FastAPI async';
/** Servers measured for reference, not to be used: the ceiling, and what any gateway in front of svc's worker costs. */
const REFERENCES = ['node:http', 'least gateway', 'least gateway on node:http'];
const STREAM_TOKENS = 256; // an answer's length in tokens, each a server-sent event

const values = readFlags({
  options: {
    duration: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '1,16,64' },
    'large-concurrency': { type: 'string', default: '1,4' },
    'busy-concurrency': { type: 'string', default: '16' },
    'spin-n': { type: 'string', default: '90000' },
    'spin-concurrency': { type: 'string', default: '4' },
    only: { type: 'string', default: SUITES.join(',') },
    peers: { type: 'string' },
    'warm-up': { type: 'string', default: '2' },
    markdown: { type: 'boolean', default: false },
  },
});

function readFlags(config) {
  try {
    return parseArgs(config).values;
  } catch (error) {
    return usageError(error.message.split('\n')[0]);
  }
}
/** A flag's number (or `text`, one item of its list): a whole one where a count is meant, and never below `least`. */
function numberFlag(name, { least = 1, whole = false, text = values[name] } = {}) {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < least || (whole && !Number.isInteger(value))) {
    usageError(`--${name}: ${JSON.stringify(text)} is not ${whole ? 'a whole number' : 'a number'} of at least ${least}`);
  }
  return value;
}
/** A flag's comma-separated connection counts. */
const connections = (name) => values[name].split(',').map((text) => numberFlag(name, { whole: true, text }));
function usageError(message) {
  process.stderr.write(`bench/serve/run.js: ${message}\n`);
  process.exit(2);
}
const duration = numberFlag('duration');
const warmUp = numberFlag('warm-up', { least: 0 });
const rounds = numberFlag('rounds', { whole: true });
const trivialConnections = connections('concurrency');
const largeConnections = connections('large-concurrency');
const busyConnections = connections('busy-concurrency');
const spinN = numberFlag('spin-n', { whole: true });
const spinConcurrency = numberFlag('spin-concurrency', { whole: true });
const suites = new Set(values.only.split(','));
for (const suite of suites) if (!SUITES.includes(suite)) usageError(`--only: no suite ${suite} (${SUITES.join(', ')})`);

const started = [];
const jobFiles = mkdtempSync(join(tmpdir(), 'svc-bench-serve-'));
const redis = await startRedis(jobFiles);
process.on('SIGINT', () => stopAll().then(() => process.exit(130)));

try {
  checkTools();
  const venvs = Object.fromEntries(Object.entries(PINS).map(([name, packages]) => [name, ensureVenv(`.venv-${name}`, packages)]));
  // svc's toolkit byte-compiled, as pip compiles every peer's packages as it installs them: a
  // worker that finds its bytecode stale or missing compiles in memory (~0.7 MiB more it keeps),
  // and with PYTHONDONTWRITEBYTECODE set, as on this machine, does so at every start.
  run(join(venvs.svc, 'bin', 'python'), ['-m', 'compileall', '-q', join(root, 'python')]);
  mkdirSync(join(here, 'wrk'), { recursive: true });
  const peers = choosePeers(definePeers(venvs, writeBodies()), values.peers);
  console.log(describeMachine(venvs));
  console.log('The machine was shared with other sessions running tests: ratios within one run are what to read.\n');
  if (suites.has('trivial')) await loadSuite(peers.filter((peer) => peer.echo), 'echo', trivialConnections, 'Trivial endpoint (POST /echo {"text":"hello"})');
  if (suites.has('large')) {
    await loadSuite(peers.filter((peer) => peer.large), 'large', largeConnections, '2 MB JSON string echoed ({"text": 2,000,000 characters})');
    await loadSuite(peers.filter((peer) => peer.image), 'image', largeConnections, '1.5 MB PNG sent as base64 in JSON, answered as the image');
    await loadSuite(peers.filter((peer) => peer.upload), 'upload', largeConnections, '1.5 MB PNG uploaded as a multipart form, answered as the image');
    await loadSuite(peers.filter((peer) => peer.numbers), 'numbers', largeConnections, 'a JSON list of 200,000 numbers (1.6 MB) averaged');
  }
  if (suites.has('embedding')) {
    await loadSuite(peers.filter((peer) => peer.embed), 'embed', largeConnections, 'An embedding answered: POST /embed {"text":"hello"}, {"embedding": 1,536 floats, "tokens": 1}');
  }
  if (suites.has('stream')) {
    await loadSuite(peers.filter((peer) => peer.tokens), 'tokens', largeConnections, `A generator's ${STREAM_TOKENS} tokens streamed as server-sent events: req/s is streams a second`);
    await loadSuite(peers.filter((peer) => peer.chat), 'chat', largeConnections, `An OpenAI chat stream of ${STREAM_TOKENS} tokens (\`stream: true\`): req/s is streams a second`);
  }
  if (suites.has('busy')) {
    const busyPeers = peers.filter((peer) => ['svc', 'FastAPI def', BASE, ...REFERENCES].includes(peer.name));
    await loadSuite(busyPeers, 'echo', busyConnections, 'Busy machine: POST /echo with `python3 -c "while True: pass"` running beside', { busy: true });
  }
  // Servers to use with a trivial echo (not svc's job peers: the same server as svc). The
  // references' memory is measured too: it is what each design costs at the least.
  const echoing = peers.filter((peer) => peer.echo && !REFERENCES.includes(peer.name));
  if (suites.has('cold')) await coldStart(echoing);
  if (suites.has('memory')) await idleMemory(peers.filter((peer) => peer.echo));
  if (suites.has('cpu')) await cpuBenchmark(venvs, writeWrkScript('spin-json.lua', JSON.stringify({ n: spinN }), 'application/json'));
} finally {
  await stopAll();
  redis?.child.kill('SIGKILL');
  rmSync(jobFiles, { recursive: true, force: true });
}

// --- the servers and what each is sent ------------------------------------------------------

function writeBodies() {
  const text = 'x'.repeat(2_000_000);
  const png = randomPng(700, 700); // incompressible pixels: 1.47 MB
  const image = png.toString('base64');
  const json = (value) => JSON.stringify(value);
  return {
    png,
    echo: writeWrkScript('echo-json.lua', json({ text: 'hello' }), 'application/json'),
    form: writeWrkScript('echo-form.lua', 'text=hello', 'application/x-www-form-urlencoded'),
    cogEcho: writeWrkScript('echo-cog.lua', json({ input: { text: 'hello' } }), 'application/json'),
    large: writeWrkScript('large.lua', largeTextBody(), 'application/json'),
    numbers: writeWrkScript('numbers.lua', numbersBody(), 'application/json'),
    cogLarge: writeWrkScript('large-cog.lua', json({ input: { text } }), 'application/json'),
    image: writeWrkScript('image.lua', imageBody(png), 'application/json', { Accept: 'image/png' }),
    upload: writeWrkScript('upload.lua', multipartImageBody(png, 'svc-bench-boundary'), 'multipart/form-data; boundary=svc-bench-boundary', { Accept: 'image/png' }),
    largeJob: writeWrkScript('large-job.lua', largeTextBody(), 'application/json', { Prefer: 'wait=30' }),
    embedJob: writeWrkScript('echo-job.lua', json({ text: 'hello' }), 'application/json', { Prefer: 'wait=30' }),
    imageJob: writeWrkScript('image-job.lua', imageBody(png), 'application/json', { Prefer: 'wait=30' }),
    tokens: writeWrkScript('tokens.lua', json({ n: STREAM_TOKENS }), 'application/json', { Accept: 'text/event-stream' }),
    chat: writeWrkScript('chat.lua', json({ model: 'bench', messages: [{ role: 'user', content: 'hello' }], stream: true, max_tokens: STREAM_TOKENS }), 'application/json'),
    cogImage: writeWrkScript('image-cog.lua', json({ input: { image: `data:image/png;base64,${image}` } }), 'application/json'),
  };
}

/** The servers --peers names (all when it is absent), and always the base of the ratios. */
function choosePeers(all, names) {
  if (names === undefined) return all;
  const wanted = new Set([...names.split(','), BASE]);
  for (const name of wanted) if (!all.some((peer) => peer.name === name)) throw new Error(`--peers: no server ${name} (${all.map((peer) => peer.name).join(', ')})`);
  return all.filter((peer) => wanted.has(peer.name));
}

/** `svc start` of bench/serve/svc on a port, its worker in svc's virtualenv. */
function svcStartArgs(venvs, port, workers) {
  const python = join(venvs.svc, 'bin', 'python');
  return [svcBin, 'start', join(here, 'svc'), '--host', '127.0.0.1', '--port', String(port), '--workers', String(workers), '--python', python];
}

/** Each server: how it starts on a port, and what it is sent for each suite (absent: not measured there). */
function definePeers(venvs, bodies) {
  const py = (venv, ...args) => [join(venvs[venv], 'bin', args[0]), args.slice(1)];
  const uvicorn = (port) => [...py('fastapi', 'uvicorn', 'app:app', '--host', '127.0.0.1', '--port', String(port)), join(here, 'fastapi')];
  return [
    {
      name: 'svc',
      start: (port) => [process.execPath, svcStartArgs(venvs, port, 1), here],
      echo: ['/echo', bodies.echo],
      large: ['/echo', bodies.large],
      image: ['/image', bodies.image],
      numbers: ['/mean', bodies.numbers],
      embed: ['/embed', bodies.echo],
      upload: ['/image', bodies.upload],
      tokens: ['/tokens', bodies.tokens],
      chat: ['/v1/chat/completions', bodies.chat],
    },
    // Serverless compute: each call a job, answered once it ends (`Prefer: wait`) with the job's
    // envelope (an image as its base64), kept in a SQLite file of this run's own, and in memory.
    // Redis keeps each ended job for its TTL: at the default half hour, a suite's 2 MB results
    // would hold gigabytes there.
    ...[
      ['svc job', `sqlite:${join(jobFiles, 'jobs.sqlite')}`],
      ['svc job (memory)', 'memory'],
      ...(redis ? [['svc job (Redis)', redis.url, '--job-ttl', '30']] : []),
    ].map(([name, store, ...extra]) => ({
      name,
      start: (port) => [process.execPath, [...svcStartArgs(venvs, port, 1), '--compute', 'serverless', '--job-store', store, ...extra], here],
      large: ['/echo', bodies.largeJob],
      image: ['/image', bodies.imageJob],
      embed: ['/embed', bodies.embedJob],
    })),
    { name: 'FastAPI def', start: uvicorn, echo: ['/echo', bodies.echo], large: ['/echo', bodies.large], embed: ['/embed', bodies.echo] },
    { name: BASE, start: uvicorn, echo: ['/echo-async', bodies.echo], large: ['/echo-async', bodies.large], image: ['/image-async', bodies.image], upload: ['/upload-async', bodies.upload], numbers: ['/mean-async', bodies.numbers], embed: ['/embed-async', bodies.echo], tokens: ['/tokens-async', bodies.tokens], chat: ['/v1/chat/completions', bodies.chat] },
    {
      name: 'apipod (PyPI)',
      start: (port) => [...py('apipod', 'python', 'service.py'), join(here, 'apipod_pypi'), { APIPOD_HOST: '127.0.0.1', APIPOD_PORT: String(port) }],
      echo: ['/echo', bodies.form],
    },
    {
      name: 'LitServe',
      start: (port) => [...py('litserve', 'python', 'server.py', String(port)), join(here, 'litserve')],
      echo: ['/predict', bodies.echo],
      large: ['/predict', bodies.large],
      image: ['/predict', bodies.image],
    },
    {
      name: 'BentoML',
      start: (port) => [...py('bentoml', 'bentoml', 'serve', 'service:Bench', '--host', '127.0.0.1', '--port', String(port)), join(here, 'bentoml')],
      echo: ['/echo', bodies.echo],
      large: ['/echo', bodies.large],
      image: ['/image', bodies.image],
    },
    {
      name: 'coglet',
      // Its Python worker is `python` from PATH: the virtualenv's must come first.
      start: (port) => [
        ...py('cog', 'python', '-m', 'cog.server.http', '--host', '127.0.0.1'),
        join(here, 'cog'),
        { PORT: String(port), COG_PREDICT_TYPE_STUB: 'predict.py:Predictor', COG_MAX_CONCURRENCY: '64', PATH: `${join(venvs.cog, 'bin')}:${process.env.PATH}` },
      ],
      echo: ['/predictions', bodies.cogEcho],
      large: ['/predictions', bodies.cogLarge],
      image: ['/predictions', bodies.cogImage],
    },
    { name: 'node:http', start: (port) => [process.execPath, [join(here, 'mini_http.mjs'), String(port)], here], echo: ['/echo', bodies.echo], large: ['/echo', bodies.large] },
    {
      // svc's worker (its `python3` the empty virtualenv's) behind Fastify and one route, up to 64
      // calls written to it at once (svc holds up to 8 behind a running one).
      name: 'least gateway',
      start: (port) => [process.execPath, [join(here, 'mini_gateway.mjs'), String(port), '--pipeline', '64'], here, { PATH: `${join(venvs.svc, 'bin')}:${process.env.PATH}` }],
      echo: ['/echo', bodies.echo],
    },
    {
      // The same answered through node:http alone: what Fastify itself costs.
      name: 'least gateway on node:http',
      start: (port) => [process.execPath, [join(here, 'mini_gateway.mjs'), String(port), '--pipeline', '64', '--bare'], here, { PATH: `${join(venvs.svc, 'bin')}:${process.env.PATH}` }],
      echo: ['/echo', bodies.echo],
    },
  ];
}

// --- suites ---------------------------------------------------------------------------------

async function loadSuite(peers, kind, concurrencies, title, { busy = false } = {}) {
  const servers = [];
  for (const peer of peers) servers.push(await startPeer(peer));
  for (const server of servers) await waitReady(server, ...server.peer[kind]);
  // Warm-up: first requests pay imports, JIT and pydantic's lazy set-up. At the concurrency
  // measured first: V8 recompiles Node's socket code when the load changes (RESULTS.md run 20).
  if (warmUp > 0) {
    for (const server of servers) {
      try {
        wrk(server, ...server.peer[kind], concurrencies[0], warmUp);
      } catch (error) {
        process.stderr.write(`  ${kind} warm-up ${server.name}: ${error.message.split('\n')[0]}\n`);
      }
    }
  }

  const samples = new Map(); // `${name}@${c}` -> [{rps, p50, p99}]
  const failures = new Map();
  for (let round = 0; round < rounds; round += 1) {
    const hog = busy ? spawn('python3', ['-c', 'while True: pass'], { stdio: 'ignore' }) : null;
    try {
      for (const c of concurrencies) {
        for (const server of rotate(servers, round)) {
          try {
            const sample = wrk(server, ...server.peer[kind], c, duration);
            push(samples, `${server.name}@${c}`, sample);
            process.stderr.write(`  ${kind} round ${round + 1} c=${c} ${server.name}: ${sample.rps.toFixed(1)} req/s p50 ${ms(sample.p50)} p99 ${ms(sample.p99)}\n`);
          } catch (error) {
            failures.set(`${server.name}@${c}`, error.message.split('\n')[0]);
            push(samples, `${server.name}@${c}`, null);
            process.stderr.write(`  ${kind} round ${round + 1} c=${c} ${server.name}: ${error.message.split('\n')[0]}\n`);
          }
        }
      }
    } finally {
      hog?.kill('SIGKILL');
    }
  }
  await stopAll();

  const rows = [];
  for (const c of concurrencies) {
    const base = samples.get(`${BASE}@${c}`);
    for (const server of servers) {
      const own = samples.get(`${server.name}@${c}`);
      const ok = own.filter(Boolean);
      if (ok.length === 0) {
        rows.push([server.name, String(c), 'failed', '', '', '', '', failures.get(`${server.name}@${c}`) ?? '']);
        continue;
      }
      rows.push([
        server.name,
        String(c),
        median(ok.map((s) => s.rps)).toFixed(kind === 'echo' ? 0 : 1),
        ms(median(ok.map((s) => s.p50))),
        ms(median(ok.map((s) => s.p99))),
        ratio(own, base, 'rps'),
        ratio(own, base, 'p99'),
        [
          failures.has(`${server.name}@${c}`) ? `${own.length - ok.length} of ${own.length} rounds failed` : '',
          ok.some((s) => s.errors > 0) ? `${ok.reduce((sum, s) => sum + s.errors, 0)} of ${ok.reduce((sum, s) => sum + s.requests, 0)} answers not 2xx (counted in req/s)` : '',
        ].filter(Boolean).join('; '),
      ]);
    }
  }
  console.log(`\n${title}: wrk 1 thread, ${duration} s per measurement, median of ${rounds} rounds; ratios are medians of per-round ratios to ${BASE}, their range in parentheses.\n`);
  printTable(['server', 'connections', 'req/s', 'p50', 'p99', `req/s ÷ ${BASE}`, `p99 ÷ ${BASE}`, 'note'], rows, values);
}

async function coldStart(peers) {
  const samples = new Map();
  for (let round = 0; round < rounds; round += 1) {
    for (const peer of rotate(peers, round)) {
      const started = performance.now();
      const server = await startPeer(peer);
      await waitReady(server, ...peer.echo, 5);
      push(samples, peer.name, performance.now() - started);
      await stopAll();
    }
  }
  const base = samples.get(BASE);
  console.log(`\nCold start: spawn to the first 200 answer to the trivial echo (polled every 5 ms), median of ${rounds} starts each; ratios are medians of per-round ratios, their range in parentheses.\n`);
  printTable(
    ['server', 'ms', `÷ ${BASE}`],
    peers.map((peer) => {
      const own = samples.get(peer.name);
      return [peer.name, median(own).toFixed(0), ratioText(own.map((value, i) => value / base[i]))];
    }),
    values,
  );
}

async function idleMemory(peers) {
  // Read twice: 2 s after the first answer, and 15 s after it, when a runtime that collects
  // once it sees itself idle (V8's memory reducer, a few seconds in) has done so.
  const rows = [];
  const resident = (server) => processTree(server.child.pid).reduce((sum, pid) => sum + residentKiB(pid), 0) / 1024;
  for (const peer of peers) {
    const server = await startPeer(peer);
    await waitReady(server, ...peer.echo);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const early = resident(server);
    await new Promise((resolve) => setTimeout(resolve, 13000));
    rows.push([peer.name, String(processTree(server.child.pid).length), early.toFixed(0), resident(server).toFixed(0)]);
    await stopAll();
  }
  console.log('\nIdle memory: resident memory (VmRSS) of every process of a started server, 2 s and 15 s after its first answer.\n');
  printTable(['server', 'processes', 'MiB at 2 s', 'MiB at 15 s'], rows, values);
}

async function cpuBenchmark(venvs, spinJson) {
  const svcPeer = (workers) => ({
    name: `svc --workers ${workers}`,
    start: (port) => [process.execPath, svcStartArgs(venvs, port, workers), here],
  });
  const one = await startPeer(svcPeer(1));
  const two = await startPeer(svcPeer(2));
  for (const server of [one, two]) await waitReady(server, '/spin', spinJson);
  const single = wrk(one, '/spin', spinJson, 1, Math.min(duration, 3));
  for (const server of [one, two]) wrk(server, '/spin', spinJson, spinConcurrency, 2);
  const samples = new Map();
  for (let round = 0; round < rounds; round += 1) {
    for (const server of rotate([one, two], round)) {
      const sample = wrk(server, '/spin', spinJson, spinConcurrency, duration);
      push(samples, server.name, sample);
      process.stderr.write(`  cpu round ${round + 1} ${server.name}: ${sample.rps.toFixed(1)} req/s p50 ${ms(sample.p50)} p99 ${ms(sample.p99)}\n`);
    }
  }
  await stopAll();
  const a = samples.get(one.name);
  const b = samples.get(two.name);
  const scaling = median(b.map((s, i) => s.rps / a[i].rps));
  console.log(`\nCPU-bound endpoint (POST /spin {"n":${spinN}}: a pure-Python loop, one call alone takes p50 ${ms(single.p50)}), concurrency ${spinConcurrency}, median of ${rounds} rounds.\n`);
  printTable(
    ['server', 'req/s', 'p50', 'p99'],
    [one, two].map((server) => {
      const own = samples.get(server.name);
      return [server.name, median(own.map((s) => s.rps)).toFixed(1), ms(median(own.map((s) => s.p50))), ms(median(own.map((s) => s.p99)))];
    }),
    values,
  );
  console.log(`\nscaling 1 -> 2 workers: ${scaling.toFixed(2)}x (per round: ${b.map((s, i) => (s.rps / a[i].rps).toFixed(2)).join(' ')})`);
}

// --- processes ------------------------------------------------------------------------------

async function startPeer(peer) {
  if (peer.name.startsWith('svc') && !existsSync(join(root, 'dist', 'svc.js'))) throw new Error('no CLI bundle: run `node scripts/bundle.js` first');
  const port = await freePort();
  const [command, args, cwd, env = {}] = peer.start(port);
  // Every server keeps its default logging (svc: a line per request on stderr; uvicorn: an
  // access line per request on stdout), all into a file, so no server pays for a reader.
  mkdirSync(join(here, 'logs'), { recursive: true });
  const logFile = join(here, 'logs', `${peer.name.replace(/[^\w-]+/g, '_')}.log`);
  const log = openSync(logFile, 'w');
  // A process group of its own: peers that start workers (BentoML, LitServe, coglet) stop whole.
  const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', log, log], detached: true });
  closeSync(log);
  const stderr = () => readFileSync(logFile, 'utf8').slice(-4000);
  const server = { name: peer.name, peer, port, child, stderr, exited: new Promise((resolve) => child.on('exit', resolve)) };
  started.push(server);
  return server;
}

async function waitReady(server, path, script, pollMs = 200) {
  const deadline = Date.now() + 120_000;
  const { body, type, headers } = script;
  while (Date.now() < deadline) {
    if (server.child.exitCode !== null) throw new Error(`${server.name} exited: ${server.stderr()}`);
    try {
      const response = await fetch(`http://127.0.0.1:${server.port}${path}`, { method: 'POST', headers: { 'content-type': type, ...headers }, body });
      if (response.ok) return;
      // svc answers 503 while its workers start; coglet 503 (or a failed prediction) until its setup ends.
      if (response.status === 503 || (server.name === 'coglet' && /Setup has not finished/.test(await response.text()))) throw new TypeError('starting');
      throw new Error(`${server.name} answered ${response.status}: ${await response.text()}`);
    } catch (error) {
      if (!(error instanceof TypeError)) throw error; // connection refused: not up yet
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
  throw new Error(`${server.name} did not come up within 120 s: ${server.stderr()}`);
}

async function stopAll() {
  const servers = started.splice(0);
  for (const server of servers) {
    try {
      process.kill(-server.child.pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
  await Promise.all(
    servers.map((server) => {
      const timer = setTimeout(() => {
        try {
          process.kill(-server.child.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }, 35_000);
      return server.exited.then(() => clearTimeout(timer));
    }),
  );
  // What a group leader left behind (a worker it did not wait for) goes too.
  for (const server of servers) {
    try {
      process.kill(-server.child.pid, 'SIGKILL');
    } catch {
      // none left
    }
  }
}

/** A process and its descendants, from /proc; svc's workers run in process groups of their own. */
function processTree(pid) {
  const children = new Map();
  for (const entry of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      push(children, parent, Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  const tree = [pid];
  for (let index = 0; index < tree.length; index += 1) tree.push(...(children.get(tree[index]) ?? []));
  return tree;
}

function residentKiB(pid) {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

// --- load generator -------------------------------------------------------------------------

function writeWrkScript(file, body, type, headers = {}) {
  const path = join(here, 'wrk', file);
  const bodyFile = join(here, 'wrk', `${file}.body`);
  writeFileSync(bodyFile, body);
  const extra = Object.entries(headers).map(([name, value]) => `wrk.headers["${name}"] = "${value}"\n`).join('');
  writeFileSync(path, `wrk.method = "POST"\nwrk.body = io.open("${bodyFile}"):read("*a")\nwrk.headers["Content-Type"] = "${type}"\n${extra}`);
  return { path, body, type, headers };
}

/**
 * One wrk run: requests/s and latency percentiles in ms, and how many answers were not 2xx;
 * throws on socket errors, when more than 1% of the answers were not 2xx, or when none came
 * (a server that stopped answering: coglet after clients left mid-prediction, its slots poisoned).
 */
function wrk(server, path, script, connections, seconds) {
  const args = ['-t1', `-c${connections}`, `-d${seconds}s`, '--latency', '--timeout', '10s', '-s', script.path, `http://127.0.0.1:${server.port}${path}`];
  const result = spawnSync('wrk', args, { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`wrk ${args.join(' ')} failed: ${result.stderr}`);
  const out = result.stdout;
  const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? 0);
  const errors = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  if (/Socket errors/.test(out) || errors > requests / 100) throw new Error(`${server.name}: errors under load: ${out.replace(/\s+/g, ' ')}`);
  if (requests === 0) throw new Error(`${server.name}: no answer in ${seconds} s`);
  return {
    requests,
    errors,
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)[1]),
    p50: latency(out, '50%'),
    p99: latency(out, '99%'),
  };
}

function latency(out, percentile) {
  const match = new RegExp(`${percentile}\\s+([\\d.]+)(us|ms|s)`).exec(out);
  const value = Number(match[1]);
  return match[2] === 'us' ? value / 1000 : match[2] === 's' ? value * 1000 : value;
}

// --- set-up ---------------------------------------------------------------------------------

/** A redis-server of the run's own, without persistence, for the Redis job peer; null when none is installed. */
async function startRedis(dir) {
  if (!hasRedisServer()) {
    process.stderr.write('redis-server is not installed (apt-get install redis-server): no "svc job (Redis)"\n');
    return null;
  }
  const { port, child } = await startRedisServer(dir, { appendOnly: false });
  return { url: `redis://127.0.0.1:${port}`, child };
}

function checkTools() {
  if (spawnSync('wrk', ['-v']).error) throw new Error('wrk is not installed: apt-get install wrk');
}

function ensureVenv(name, packages) {
  const venv = join(here, name);
  const stamp = join(venv, '.bench-packages');
  const wanted = packages.join(' ');
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === wanted) return venv;
  process.stderr.write(`creating ${venv} with ${wanted}\n`);
  run('python3', ['-m', 'venv', venv]);
  if (packages.length > 0) run(join(venv, 'bin', 'pip'), ['install', '--quiet', ...packages]);
  writeFileSync(stamp, wanted);
  return venv;
}

function describeMachine(venvs) {
  const version = (venv, pkg) =>
    spawnSync(join(venv, 'bin', 'python'), ['-c', `import importlib.metadata as m; print(m.version("${pkg}"))`], { encoding: 'utf8' }).stdout.trim();
  const python = spawnSync('python3', ['--version'], { encoding: 'utf8' }).stdout.trim();
  return [
    `machine: ${spawnSync('nproc', { encoding: 'utf8' }).stdout.trim()} cores, Node ${process.version}, ${python} (every Python in a virtualenv of its own), ${spawnSync('wrk', ['-v'], { encoding: 'utf8' }).stdout.split('\n')[0].trim()}`,
    'svc start --workers 1 (JSON body)',
    `FastAPI ${version(venvs.fastapi, 'fastapi')} + uvicorn ${version(venvs.fastapi, 'uvicorn')} (uvloop, httptools), one process, pydantic body: a def and an async def endpoint`,
    `apipod ${version(venvs.apipod, 'apipod')} from PyPI, default mode (plain FastAPI, uvicorn, h11), form-encoded body`,
    `LitServe ${version(venvs.litserve, 'litserve')} (one inference worker), BentoML ${version(venvs.bentoml, 'bentoml')} (bentoml serve), coglet ${version(venvs.cog, 'coglet')} (python -m cog.server.http, async predict, COG_MAX_CONCURRENCY=64)`,
    'node:http: a bare echo, no validation, no worker: the ceiling',
    "least gateway: svc's worker behind bench/serve/mini_gateway.mjs (Fastify, one route, no validation, pool, log or cancel): what a second process costs",
    'least gateway on node:http: the same through node:http alone (mini_gateway.mjs --bare): what Fastify costs',
    ...(redis ? [`svc job (Redis): ${redisVersion({ appendOnly: false })}, --job-ttl 30`] : []),
  ].join('\n');
}

function ratio(own, base, key) {
  return ratioText(own.map((s, i) => (s && base[i] ? s[key] / base[i][key] : null)).filter((value) => value !== null));
}

/**
 * The median of per-round ratios, and their range where they differ: on a shared
 * machine one build's req/s moves by a third between rounds, and the range shows how far a
 * median may be trusted.
 */
function ratioText(ratios) {
  if (ratios.length === 0) return '';
  const [least, most] = [Math.min(...ratios), Math.max(...ratios)];
  const middle = `${median(ratios).toFixed(2)}x`;
  return least === most ? middle : `${middle} (${least.toFixed(2)}-${most.toFixed(2)})`;
}
