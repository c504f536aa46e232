#!/usr/bin/env node
// bench/serve: the same trivial function served by `svc start`, by FastAPI + uvicorn and by the
// PyPI `apipod` package in its default mode, driven by one load generator (wrk) at several
// concurrencies; then a CPU-bound function under `svc start --workers 1` and `--workers 2`.
// Machines are shared and noisy, so every server runs in the same run, measured in turn
// (the order rotates each round), and results are medians over rounds and ratios to FastAPI
// taken within each round.
//
// Usage: node bench/serve/run.js [--duration 5] [--rounds 3] [--concurrency 1,16,64]
//          [--spin-n 40000] [--spin-concurrency 4] [--only trivial|cpu] [--markdown]
// Needs: wrk (`apt-get install wrk`) and the CLI bundle (`node scripts/bundle.js`). Creates
// bench/serve/.venv-fastapi and bench/serve/.venv-apipod on first use (pip, pinned versions).
// Writes nothing outside bench/serve (servers' logs go to bench/serve/logs/).
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { median, ms, printTable, push, rotate } from '../lib/numbers.js';
import { freePort, run, stopServers } from '../lib/processes.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const svcBin = join(root, 'bin', 'svc.js');
const PINS = {
  fastapi: ['fastapi==0.165.0', 'uvicorn[standard]==0.54.0'],
  apipod: ['apipod==1.0.33'],
};

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '1,16,64' },
    'spin-n': { type: 'string', default: '90000' },
    'spin-concurrency': { type: 'string', default: '4' },
    only: { type: 'string' },
    markdown: { type: 'boolean', default: false },
  },
});
const duration = Number(values.duration);
const rounds = Number(values.rounds);
const concurrencies = values.concurrency.split(',').map(Number);
const spinN = Number(values['spin-n']);
const spinConcurrency = Number(values['spin-concurrency']);

const started = [];
process.on('SIGINT', () => stopAll().then(() => process.exit(130)));

try {
  checkTools();
  const venvFastapi = ensureVenv('.venv-fastapi', PINS.fastapi);
  const venvApipod = ensureVenv('.venv-apipod', PINS.apipod);
  mkdirSync(join(here, 'wrk'), { recursive: true });
  const jsonBody = writeWrkScript('echo-json.lua', '{"text":"hello"}', 'application/json');
  const formBody = writeWrkScript('echo-form.lua', 'text=hello', 'application/x-www-form-urlencoded');
  const spinJson = writeWrkScript('spin-json.lua', JSON.stringify({ n: spinN }), 'application/json');

  console.log(describeMachine(venvFastapi, venvApipod));
  if (values.only !== 'cpu') await trivialBenchmark(venvFastapi, venvApipod, jsonBody, formBody);
  if (values.only !== 'trivial') await cpuBenchmark(spinJson);
} finally {
  await stopAll();
}

async function trivialBenchmark(venvFastapi, venvApipod, jsonBody, formBody) {
  const servers = [
    await startSvc('svc', 1),
    await startServer('fastapi', join(venvFastapi, 'bin', 'uvicorn'), ['app:app', '--host', '127.0.0.1'], join(here, 'fastapi'), (port) => ({ args: ['--port', String(port)] })),
    await startServer('apipod (PyPI)', join(venvApipod, 'bin', 'python'), ['service.py'], join(here, 'apipod_pypi'), (port) => ({
      env: { APIPOD_HOST: '127.0.0.1', APIPOD_PORT: String(port) },
    })),
  ];
  const scriptFor = { svc: jsonBody, fastapi: jsonBody, 'apipod (PyPI)': formBody };
  for (const server of servers) await waitReady(server, '/echo', scriptFor[server.name]);
  // Warm-up: first requests pay imports, JIT and pydantic's lazy set-up.
  for (const server of servers) wrk(server, '/echo', scriptFor[server.name], 16, 2);

  const samples = new Map(); // `${name}@${c}` -> [{rps, p50, p99}]
  for (let round = 0; round < rounds; round += 1) {
    for (const c of concurrencies) {
      const order = rotate(servers, round);
      for (const server of order) {
        const sample = wrk(server, '/echo', scriptFor[server.name], c, duration);
        push(samples, `${server.name}@${c}`, sample);
        process.stderr.write(`  round ${round + 1} c=${c} ${server.name}: ${sample.rps.toFixed(0)} req/s p50 ${ms(sample.p50)} p99 ${ms(sample.p99)}\n`);
      }
    }
  }
  await stopAll();

  const header = ['server', 'concurrency', 'req/s', 'p50', 'p99', 'req/s ÷ FastAPI', 'p50 ÷ FastAPI', 'p99 ÷ FastAPI'];
  const rows = [];
  for (const c of concurrencies) {
    const base = samples.get(`fastapi@${c}`);
    for (const server of servers) {
      const own = samples.get(`${server.name}@${c}`);
      rows.push([
        server.name,
        String(c),
        median(own.map((s) => s.rps)).toFixed(0),
        ms(median(own.map((s) => s.p50))),
        ms(median(own.map((s) => s.p99))),
        ratio(own, base, 'rps'),
        ratio(own, base, 'p50'),
        ratio(own, base, 'p99'),
      ]);
    }
  }
  console.log(`\nTrivial endpoint (POST /echo {"text":"hello"}), wrk 1 thread, ${duration} s per measurement, median of ${rounds} rounds;`);
  console.log('ratios are medians of per-round ratios (each round measures every server back to back).');
  console.log('Target: svc req/s ÷ FastAPI >= 3x with p99 ÷ FastAPI <= 1x.\n');
  printTable(header, rows, values);
}

async function cpuBenchmark(spinJson) {
  const one = await startSvc('svc --workers 1', 1);
  const two = await startSvc('svc --workers 2', 2);
  for (const server of [one, two]) await waitReady(server, '/spin', spinJson);
  const single = wrk(one, '/spin', spinJson, 1, Math.min(duration, 3));
  for (const server of [one, two]) wrk(server, '/spin', spinJson, spinConcurrency, 2);
  const samples = new Map();
  for (let round = 0; round < rounds; round += 1) {
    for (const server of rotate([one, two], round)) {
      const sample = wrk(server, '/spin', spinJson, spinConcurrency, duration);
      push(samples, server.name, sample);
      process.stderr.write(`  round ${round + 1} ${server.name}: ${sample.rps.toFixed(1)} req/s p50 ${ms(sample.p50)} p99 ${ms(sample.p99)}\n`);
    }
  }
  await stopAll();
  const a = samples.get(one.name);
  const b = samples.get(two.name);
  const scaling = median(b.map((s, i) => s.rps / a[i].rps));
  console.log(`\nCPU-bound endpoint (POST /spin {"n":${spinN}}: a pure-Python loop, one call alone takes p50 ${ms(single.p50)}), concurrency ${spinConcurrency}, median of ${rounds} rounds.`);
  console.log('Target: scaling (2 workers ÷ 1 worker req/s) near 2x.\n');
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

// --- servers ---------------------------------------------------------------------------------

async function startSvc(name, workers) {
  if (!existsSync(join(root, 'dist', 'svc.js'))) throw new Error('no CLI bundle: run `node scripts/bundle.js` first');
  return startServer(name, process.execPath, [svcBin, 'start', join(here, 'svc'), '--host', '127.0.0.1', '--workers', String(workers)], here, (port) => ({
    args: ['--port', String(port)],
  }));
}

async function startServer(name, command, args, cwd, withPort) {
  const port = await freePort();
  const extra = withPort(port);
  // Every server keeps its default logging (svc: a line per request on stderr; uvicorn: an
  // access line per request on stdout), all into a file, so no server pays for a reader.
  mkdirSync(join(here, 'logs'), { recursive: true });
  const logFile = join(here, 'logs', `${name.replace(/[^\w-]+/g, '_')}.log`);
  const log = openSync(logFile, 'w');
  const child = spawn(command, [...args, ...(extra.args ?? [])], {
    cwd,
    env: { ...process.env, ...(extra.env ?? {}) },
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  const stderr = () => readFileSync(logFile, 'utf8').slice(-4000);
  const server = { name, port, child, stderr, exited: new Promise((resolve) => child.on('exit', resolve)) };
  started.push(server);
  return server;
}

async function waitReady(server, path, script) {
  const deadline = Date.now() + 60_000;
  const { body, type } = script;
  while (Date.now() < deadline) {
    if (server.child.exitCode !== null) throw new Error(`${server.name} exited: ${server.stderr()}`);
    try {
      const response = await fetch(`http://127.0.0.1:${server.port}${path}`, { method: 'POST', headers: { 'content-type': type }, body });
      if (response.ok) return;
      if (response.status === 503) throw new TypeError('starting'); // svc answers 503 while its workers start
      throw new Error(`${server.name} answered ${response.status}: ${await response.text()}`);
    } catch (error) {
      if (!(error instanceof TypeError)) throw error; // connection refused: not up yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${server.name} did not come up within 60 s: ${server.stderr()}`);
}

async function stopAll() {
  await stopServers(started.splice(0));
}

// --- load generator --------------------------------------------------------------------------

function writeWrkScript(file, body, type) {
  const path = join(here, 'wrk', file);
  writeFileSync(path, `wrk.method = "POST"\nwrk.body = '${body}'\nwrk.headers["Content-Type"] = "${type}"\n`);
  return { path, body, type };
}

/** One wrk run: requests/s and latency percentiles in ms; throws on errors or non-2xx answers. */
function wrk(server, path, script, connections, seconds) {
  const args = ['-t1', `-c${connections}`, `-d${seconds}s`, '--latency', '--timeout', '10s', '-s', script.path, `http://127.0.0.1:${server.port}${path}`];
  const result = spawnSync('wrk', args, { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`wrk ${args.join(' ')} failed: ${result.stderr}`);
  const out = result.stdout;
  if (/Non-2xx or 3xx responses/.test(out) || /Socket errors/.test(out)) throw new Error(`${server.name}: errors under load:\n${out}`);
  return {
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

// --- set-up ----------------------------------------------------------------------------------

function checkTools() {
  if (spawnSync('wrk', ['-v']).error) throw new Error('wrk is not installed: apt-get install wrk');
}

function ensureVenv(name, packages) {
  const venv = join(here, name);
  const stamp = join(venv, '.bench-packages');
  const wanted = packages.join(' ');
  if (existsSync(stamp) && spawnSync('cat', [stamp], { encoding: 'utf8' }).stdout === wanted) return venv;
  process.stderr.write(`creating ${venv} with ${wanted}\n`);
  run('python3', ['-m', 'venv', venv]);
  run(join(venv, 'bin', 'pip'), ['install', '--quiet', ...packages]);
  writeFileSync(stamp, wanted);
  return venv;
}

function describeMachine(venvFastapi, venvApipod) {
  const version = (venv, pkg) =>
    spawnSync(join(venv, 'bin', 'python'), ['-c', `import importlib.metadata as m; print(m.version("${pkg}"))`], { encoding: 'utf8' }).stdout.trim();
  const python = spawnSync('python3', ['--version'], { encoding: 'utf8' }).stdout.trim();
  return [
    `machine: ${spawnSync('nproc', { encoding: 'utf8' }).stdout.trim()} cores, Node ${process.version}, ${python} (svc workers), ${spawnSync('wrk', ['-v'], { encoding: 'utf8' }).stdout.split('\n')[0].trim()}`,
    `fastapi ${version(venvFastapi, 'fastapi')} + uvicorn ${version(venvFastapi, 'uvicorn')} (uvloop, httptools), one process, sync def endpoint, pydantic body`,
    `apipod ${version(venvApipod, 'apipod')} from PyPI, default mode (plain FastAPI, app.start() -> uvicorn.run, h11/asyncio), form-encoded body`,
    'svc start --workers 1 (JSON body)',
  ].join('\n');
}

// --- numbers and tables ----------------------------------------------------------------------

function ratio(own, base, key) {
  return `${median(own.map((s, i) => s[key] / base[i][key])).toFixed(2)}x`;
}

