#!/usr/bin/env node
// bench/serve/slow-turns.js: quick calls when a call of the same endpoint sometimes turns slow.
//
// `svc start bench/serve/svc --workers 2` takes POST /spin at --rate calls a second, open loop
// (each call's latency counts from when it was due, so a stalled server cannot slow the load
// down and hide its stall). One call in --slow-every spins ~0.2 s (n = 3,000,000); the others
// ~0.1 ms (n = 300). svc sends quick calls behind a running call of an endpoint that was quick
// last time: when that call is one of the slow ones, they wait for it unless svc takes them back
// for the other worker (protocol 8's `withdraw`). The table gives the quick calls' latency.
//
// Usage: node bench/serve/slow-turns.js [--rate 1000] [--slow-every 200] [--duration 10]
//          [--rounds 3] [--baseline DIR] [--markdown]
// --baseline DIR also runs the svc of another checkout (DIR, with its bundle built), the two
// measured in turn each round. Needs the CLI bundle (`node scripts/bundle.js`).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { median, ms, percentile, printTable, push, rotate } from '../lib/numbers.js';
import { freePort, stopServers } from '../lib/processes.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const QUICK_N = 300;
const SLOW_N = 3_000_000;

const { values } = parseArgs({
  options: {
    rate: { type: 'string', default: '1000' },
    'slow-every': { type: 'string', default: '200' },
    duration: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
    baseline: { type: 'string' },
    markdown: { type: 'boolean', default: false },
  },
});
const rate = Number(values.rate);
const slowEvery = Number(values['slow-every']);
const durationMs = Number(values.duration) * 1000;
const rounds = Number(values.rounds);

const stateDir = mkdtempSync(join(tmpdir(), 'svc-bench-slow-turns-'));
const servers = [];
try {
  await startSvc('svc', root);
  if (values.baseline !== undefined) await startSvc(`svc at ${values.baseline}`, values.baseline);
  for (const server of servers) await openLoop(server, Math.min(durationMs, 2000)); // warm-up
  const results = new Map(); // server name -> [{ p50, p90, p99, p999, max, slow }]
  for (let round = 0; round < rounds; round += 1) {
    for (const server of rotate(servers, round)) push(results, server.name, await openLoop(server, durationMs));
  }
  console.log(`${rate} calls/s of POST /spin for ${durationMs / 1000} s, one in ${slowEvery} slow (~0.2 s), 2 workers; quick calls' latency, ${rounds === 1 ? 'one round' : `median of ${rounds} rounds (range)`}:`);
  const cell = (samples, key) => {
    const values = samples.map((sample) => sample[key]);
    return rounds === 1 ? ms(values[0]) : `${ms(median(values))} (${Math.min(...values).toFixed(1)}-${Math.max(...values).toFixed(1)})`;
  };
  printTable(
    ['server', 'quick calls', 'p50', 'p90', 'p99', 'p99.9', 'max'],
    [...results].map(([name, samples]) => [name, String(samples[0].count), ...['p50', 'p90', 'p99', 'p999', 'max'].map((key) => cell(samples, key))]),
    { markdown: values.markdown },
  );
} finally {
  await stopServers(servers);
  rmSync(stateDir, { recursive: true, force: true });
}

/** `svc start` of a checkout's bundle, in this run's own state directory; resolves once it is READY. */
async function startSvc(name, checkout) {
  const port = await freePort();
  const child = spawn(process.execPath, [join(checkout, 'dist', 'svc.js'), 'start', join(here, 'svc'), '--workers', '2', '--host', '127.0.0.1', '--port', String(port)], {
    env: { ...process.env, XDG_STATE_HOME: stateDir },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (data) => (stderr = (stderr + data).slice(-4000)));
  const server = { name, port, child, exited: new Promise((resolve) => child.on('exit', resolve)) };
  servers.push(server); // stopped at the end, even when it fails to start
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited: ${stderr}`);
    const health = await fetch(`http://127.0.0.1:${port}/health`).then((response) => response.json()).catch(() => null);
    if (health?.status === 'READY') return server;
    if (Date.now() > deadline) throw new Error(`${name} did not come up within 60 s: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Sends calls at `rate` for `forMs`, whatever the answers; the quick calls' latency percentiles. */
async function openLoop(server, forMs) {
  const agent = new Agent({ keepAlive: true, maxSockets: 512 });
  const quick = [];
  const calls = [];
  let failed = 0;
  const start = performance.now();
  let sent = 0;
  while (performance.now() - start < forMs) {
    const due = Math.floor(((performance.now() - start) / 1000) * rate);
    for (; sent < due; sent += 1) {
      const isSlow = (sent + 1) % slowEvery === 0;
      const dueAt = start + (sent / rate) * 1000;
      calls.push(spin(server.port, agent, isSlow ? SLOW_N : QUICK_N).then(
        () => isSlow || quick.push(performance.now() - dueAt),
        () => (failed += 1),
      ));
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await Promise.all(calls);
  agent.destroy();
  if (failed > 0) throw new Error(`${server.name}: ${failed} calls failed`);
  const at = (share) => percentile(quick, share);
  return { count: quick.length, p50: at(0.5), p90: at(0.9), p99: at(0.99), p999: at(0.999), max: Math.max(...quick) };
}

function spin(port, agent, n) {
  const body = JSON.stringify({ n });
  return new Promise((resolve, reject) => {
    const call = request({ host: '127.0.0.1', port, path: '/spin', method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (response) => {
      response.resume();
      response.on('end', () => (response.statusCode === 200 ? resolve() : reject(new Error(`status ${response.statusCode}`))));
    });
    call.on('error', reject);
    call.end(body);
  });
}
