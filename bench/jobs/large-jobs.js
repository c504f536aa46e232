#!/usr/bin/env node
// bench/jobs/large-jobs.js: large payloads as serverless jobs, with the jobs in a SQLite file
// (serverless compute's default), one client at a time:
//   wait     a 2 MB string echoed, `Prefer: wait=30` (wrk -c1): jobs/s, p50, p99
//   image    a 1.5 MB PNG as base64, echoed as an image, `Prefer: wait=30` (wrk -c1)
//   polled   the 2 MB string submitted, then `GET /v1/jobs/ID` with `Prefer: wait=30` until it
//            ends (a Node client): jobs/s
//   health   `GET /health` (wrk -c1) while the `wait` load runs beside it: its p99, what every
//            other request of a server busy with large jobs waits
// and for each, the gateway's CPU per job (/proc, Linux). With --baseline DIR, the svc of
// another checkout (its bundle built) runs beside this one, measured in turn (the order
// alternates each round), and the table adds the ratio of the medians.
//
// Usage: node bench/jobs/large-jobs.js [--baseline DIR] [--rounds 4] [--duration 5] [--markdown]
// Needs wrk and the CLI bundle (`node scripts/bundle.js`). Serves bench/serve/svc with
// bench/serve/.venv-svc's Python when it exists (bench/serve/run.js makes it), else python3.
// Writes nothing outside a temporary directory it removes.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { median, ms, printTable, push } from '../lib/numbers.js';
import { freePort, stopServers } from '../lib/processes.js';
import { imageBody, largeTextBody } from '../lib/payloads.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const { values } = parseArgs({
  options: {
    baseline: { type: 'string' },
    rounds: { type: 'string', default: '4' },
    duration: { type: 'string', default: '5' },
    markdown: { type: 'boolean', default: false },
  },
});
const rounds = Number(values.rounds);
const duration = Number(values.duration);
const scratch = mkdtempSync(join(tmpdir(), 'svc-bench-large-jobs-'));
const venvPython = join(root, 'bench', 'serve', '.venv-svc', 'bin', 'python');
const python = existsSync(venvPython) ? venvPython : 'python3';

const TIMING = `done = function(summary, latency, requests)
  io.write(string.format("%f %f %f %d\\n", summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000, latency:percentile(99) / 1000, summary.errors.status))
end
`;
function wrkScript(name, body, headers) {
  const bodyFile = join(scratch, `${name}.body`);
  writeFileSync(bodyFile, body ?? '');
  const lines = body === null ? ['wrk.method = "GET"'] : ['wrk.method = "POST"', `wrk.body = io.open("${bodyFile}"):read("*a")`, 'wrk.headers["Content-Type"] = "application/json"'];
  for (const [header, value] of Object.entries(headers)) lines.push(`wrk.headers["${header}"] = "${value}"`);
  const path = join(scratch, `${name}.lua`);
  writeFileSync(path, `${lines.join('\n')}\n${TIMING}`);
  return { path, bodyFile };
}
const scripts = {
  wait: wrkScript('wait', largeTextBody(), { Prefer: 'wait=30' }),
  image: wrkScript('image', imageBody(), { Prefer: 'wait=30' }),
  health: wrkScript('health', null, {}),
};

const servers = [];
try {
  servers.push(await startSvc('this checkout', root));
  if (values.baseline) servers.push(await startSvc(`svc at ${values.baseline}`, values.baseline));
  const samples = new Map();
  for (const server of servers) wrk(server, scripts.wait, '/echo', 2); // warm-up
  for (let round = 0; round < rounds; round += 1) {
    const order = round % 2 === 0 ? servers : [...servers].reverse();
    for (const server of order) {
      const measure = async (kind, work) => {
        const before = cpuTicks(server.pid);
        const sample = await work();
        sample.cpuMs = ((cpuTicks(server.pid) - before) * 10) / (sample.rps * duration);
        push(samples, `${server.name}|${kind}`, sample);
        process.stderr.write(`  round ${round + 1} ${server.name} ${kind}: ${sample.rps.toFixed(1)}/s p99 ${ms(sample.p99)}\n`);
      };
      await measure('wait', () => wrk(server, scripts.wait, '/echo', duration));
      await measure('image', () => wrk(server, scripts.image, '/image', duration));
      await measure('polled', () => polled(server));
      await measure('health', () => healthBeside(server));
    }
  }
  report(samples);
} finally {
  await stopServers(servers);
  rmSync(scratch, { recursive: true, force: true });
}

async function startSvc(name, checkout) {
  const port = await freePort();
  const bin = join(checkout, 'bin', 'svc.js');
  const args = [bin, 'start', join(root, 'bench', 'serve', 'svc'), '--host', '127.0.0.1', '--port', String(port), '--workers', '1', '--python', python, '--compute', 'serverless', '--job-store', `sqlite:${join(scratch, `${port}.sqlite`)}`];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const server = { name, port, child, exited, pid: child.pid };
  for (let attempt = 0; attempt < 600; attempt += 1) {
    if (child.exitCode !== null) throw new Error(`${name} exited: ${stderr}`);
    const health = await fetch(`http://127.0.0.1:${port}/health`).then((response) => response.text(), () => '');
    if (health.includes('READY')) return server;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${name} did not become ready: ${stderr}`);
}

function wrkArgs(server, script, path, seconds) {
  return ['-t1', '-c1', `-d${seconds}s`, '--timeout', '30s', '-s', script.path, `http://127.0.0.1:${server.port}${path}`];
}

function parseWrk(stdout) {
  const [rps, p50, p99, errors] = stdout.trim().split('\n').at(-1).split(' ').map(Number);
  if (errors > 0) throw new Error(`${errors} answers were not 2xx`);
  return { rps, p50, p99 };
}

function wrk(server, script, path, seconds) {
  const result = spawnSync('wrk', wrkArgs(server, script, path, seconds), { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`wrk failed (apt-get install wrk): ${result.error?.message ?? result.stderr}`);
  return parseWrk(result.stdout);
}

/** GET /health, one at a time, while a stream of 2 MB jobs runs beside it; rps is the jobs'. */
async function healthBeside(server) {
  const jobs = spawn('wrk', wrkArgs(server, scripts.wait, '/echo', duration + 1));
  let jobsOut = '';
  jobs.stdout.on('data', (chunk) => (jobsOut += chunk));
  const jobsDone = new Promise((resolve) => jobs.once('exit', resolve));
  await new Promise((resolve) => setTimeout(resolve, 500));
  const health = wrk(server, scripts.health, '/health', duration);
  await jobsDone;
  return { ...parseWrk(jobsOut), p50: health.p50, p99: health.p99 };
}

/** The 2 MB string submitted, then its job asked for with `Prefer: wait=30` until it ends. */
async function polled(server) {
  const body = readFileSync(scripts.wait.bodyFile);
  const base = `http://127.0.0.1:${server.port}`;
  const latencies = [];
  const end = performance.now() + duration * 1000;
  while (performance.now() < end) {
    const started = performance.now();
    let job = await (await fetch(`${base}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).json();
    while (job.status !== 'FINISHED') {
      if (job.status === 'FAILED' || job.status === undefined) throw new Error(`the job ended ${JSON.stringify(job).slice(0, 300)}`);
      job = await (await fetch(`${base}/v1/jobs/${job.id}`, { headers: { prefer: 'wait=30' } })).json();
    }
    latencies.push(performance.now() - started);
  }
  return { rps: latencies.length / duration, p50: median(latencies), p99: latencies.sort((a, b) => a - b)[Math.floor(latencies.length * 0.99)] };
}

function cpuTicks(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

function report(samples) {
  const kinds = {
    wait: '2 MB string, Prefer: wait (jobs/s)',
    image: '1.5 MB image, Prefer: wait (jobs/s)',
    polled: '2 MB string, submitted then polled (jobs/s)',
    health: 'GET /health beside 2 MB jobs (its p99; jobs/s of the jobs)',
  };
  const rows = [];
  for (const [kind, title] of Object.entries(kinds)) {
    const medians = servers.map((server) => {
      const list = samples.get(`${server.name}|${kind}`);
      return { rps: median(list.map((s) => s.rps)), p50: median(list.map((s) => s.p50)), p99: median(list.map((s) => s.p99)), cpuMs: median(list.map((s) => s.cpuMs)) };
    });
    servers.forEach((server, index) => {
      const own = medians[index];
      const against = index > 0 ? (kind === 'health' ? `p99 ${(own.p99 / medians[0].p99).toFixed(2)}x` : `${(own.rps / medians[0].rps).toFixed(2)}x`) : '';
      // Beside the health checks, the gateway's CPU is theirs too: not a job's.
      rows.push([title, server.name, own.rps.toFixed(1), ms(own.p50), ms(own.p99), kind === 'health' ? '' : `${own.cpuMs.toFixed(1)} ms`, against]);
    });
  }
  console.log(`\nLarge payloads as serverless jobs (SQLite file), one client, ${duration} s per measurement, median of ${rounds} rounds; gateway CPU per job from /proc.\n`);
  printTable(['measure', 'server', 'jobs/s', 'p50', 'p99', 'gateway CPU / job', 'baseline ÷ this'], rows, values);
}
