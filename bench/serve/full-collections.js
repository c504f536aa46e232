#!/usr/bin/env node
// bench/serve/full-collections: how often the gateway of `svc start` runs a full garbage
// collection on large payloads, and what a request costs. V8 counts buffers that survive its
// young collections against the old generation's limit; on 2 MB payloads that used to mean a
// full collection every ~10 requests, each ~10 ms of one request's latency (bench/RESULTS.md,
// "Large payloads: the buffers that waited for a full collection").
//
// For each checkout given (default: this one; each needs its bundle built), starts
// `node --trace-gc <checkout>/bin/svc.js start bench/serve/svc --workers 1` (for the 2 MB
// string as a job, `--compute serverless` with `--job-store memory` and a SQLite file, and the
// request `Prefer: wait`; each job's result kept readable, as by default), sends the
// requests one after another on one keep-alive connection, and prints, per payload: full
// collections (Mark-Compact lines of --trace-gc) per 100 requests, the gateway's and the
// worker's CPU per request (from /proc, Linux only) and the latency's p50 and p99. Checkouts
// alternate per payload, so a machine that slows down meanwhile slows them alike.
//
// Usage: node bench/serve/full-collections.js [--requests 300] [--markdown] [CHECKOUT...]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { Agent, request } from 'node:http';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ms, percentile, printTable } from '../lib/numbers.js';
import { imageBody, largeTextBody, numbersBody } from '../lib/payloads.js';
import { freePort } from '../lib/processes.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { requests: { type: 'string', default: '300' }, markdown: { type: 'boolean', default: false } },
});
const checkouts = (positionals.length > 0 ? positionals : [root]).map((checkout) => resolve(checkout));
const requests = Number(values.requests);

// Each server of a SQLite store gets a directory of its own: no job, nor file of one, left by the last.
const jobFiles = mkdtempSync(join(tmpdir(), 'svc-full-collections-'));
const asJob = (store) => ({
  serverArgs: () => ['--compute', 'serverless', '--job-store', store === 'sqlite' ? `sqlite:${join(mkdtempSync(join(jobFiles, 'run-')), 'jobs.sqlite')}` : store],
  headers: { prefer: 'wait=30' },
});
const payloads = [
  { name: '2 MB string echoed', path: '/echo', body: largeTextBody(), accept: 'application/json' },
  { name: '2 MB string as a job, memory store', path: '/echo', body: largeTextBody(), accept: 'application/json', ...asJob('memory') },
  { name: '2 MB string as a job, SQLite store', path: '/echo', body: largeTextBody(), accept: 'application/json', ...asJob('sqlite') },
  { name: '1.5 MB image (base64 in, PNG out)', path: '/image', body: imageBody(), accept: 'image/png' },
  { name: '200,000 numbers averaged', path: '/mean', body: numbersBody(), accept: 'application/json' },
];

const rows = [];
for (const payload of payloads) {
  for (const checkout of checkouts) {
    const server = await startSvc(checkout, payload.serverArgs?.() ?? []);
    try {
      rows.push([payload.name, checkout, ...(await measure(server, payload))]);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  }
}
rmSync(jobFiles, { recursive: true, force: true });
printTable(['payload', 'checkout', 'full collections / 100', 'gateway CPU / request', 'worker CPU / request', 'p50', 'p99'], rows, { markdown: values.markdown });

async function startSvc(checkout, serverArgs) {
  const port = await freePort();
  const child = spawn(process.execPath, ['--trace-gc', join(checkout, 'bin', 'svc.js'), 'start', join(here, 'svc'), '--port', String(port), '--workers', '1', ...serverArgs], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let log = '';
  child.stdout.on('data', (chunk) => (log += chunk));
  const exited = new Promise((done) => child.once('exit', done));
  for (let tries = 0; !(await healthy(port)); tries += 1) {
    if (tries > 300 || child.exitCode !== null) throw new Error(`svc in ${checkout} did not become ready:\n${log}`);
    await new Promise((done) => setTimeout(done, 100));
  }
  return { child, port, exited, fullCollections: () => (log.match(/Mark-Compact/g) ?? []).length };
}

async function measure(server, payload) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const post = () => timedPost(server.port, payload, agent);
  for (let warm = 0; warm < 20; warm += 1) await post();
  const gateway = server.child.pid;
  const worker = Number(readFileSync(`/proc/${gateway}/task/${gateway}/children`, 'utf8').trim().split(/\s+/)[0]);
  const [collections, gatewayTicks, workerTicks] = [server.fullCollections(), cpuTicks(gateway), cpuTicks(worker)];
  const latencies = [];
  for (let sent = 0; sent < requests; sent += 1) latencies.push(await post());
  const perRequest = (ticks) => `${((ticks * 10) / requests).toFixed(1)} ms`; // a tick is 10 ms
  agent.destroy();
  return [
    (((server.fullCollections() - collections) * 100) / requests).toFixed(1),
    perRequest(cpuTicks(gateway) - gatewayTicks),
    perRequest(cpuTicks(worker) - workerTicks),
    ms(percentile(latencies, 0.5)),
    ms(percentile(latencies, 0.99)),
  ];
}

function timedPost(port, payload, agent) {
  return new Promise((done, fail) => {
    const started = process.hrtime.bigint();
    const headers = { 'content-type': 'application/json', accept: payload.accept, ...payload.headers };
    const call = request({ port, path: payload.path, method: 'POST', agent, headers }, (response) => {
      response.resume();
      response.on('end', () => (response.statusCode === 200 ? done(Number(process.hrtime.bigint() - started) / 1e6) : fail(new Error(`${payload.path}: ${response.statusCode}`))));
    });
    call.on('error', fail);
    call.end(payload.body);
  });
}

function healthy(port) {
  return new Promise((done) => {
    const call = request({ port, path: '/health' }, (response) => {
      let body = '';
      response.on('data', (chunk) => (body += chunk));
      response.on('end', () => done(body.includes('READY')));
    });
    call.on('error', () => done(false));
    call.end();
  });
}

/** User and system CPU of a process so far, in clock ticks (/proc/PID/stat fields 14 and 15). */
function cpuTicks(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(fields[11]) + Number(fields[12]);
}
