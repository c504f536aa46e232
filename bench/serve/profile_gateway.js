#!/usr/bin/env node
// Where `svc start` spends its time on the trivial endpoint under load: CPU seconds per request
// of the gateway (Node), the worker (Python) and wrk, read from /proc while wrk drives
// POST /echo; the gateway's CPU profile (node --cpu-prof) summed by function; and, for scale, a
// bare Fastify server answering the same request in-process (no worker), a minimal gateway in
// front of svc's real worker (mini_gateway.mjs, with and without pipelining), and FastAPI.
//
// With --busy, a CPU-bound process (`python3 -c "while True: pass"`) runs beside each measured
// run, and the table adds each process's context switches per request (its main thread's,
// voluntary + involuntary, from /proc): on a busy machine these, not the code, set the cost.
//
// Usage: node bench/serve/profile_gateway.js [--duration 5] [--concurrency 16] [--top 30] [--ablate] [--busy]
// Needs what run.js needs. Writes the .cpuprofile under bench/serve/profiles/ (gitignored).
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, cpSync, mkdirSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { freePort } from '../lib/processes.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '16' },
    top: { type: 'string', default: '30' },
    ablate: { type: 'boolean', default: false },
    busy: { type: 'boolean', default: false },
  },
});
const duration = Number(values.duration);
const concurrency = Number(values.concurrency);
const profiles = join(here, 'profiles');
rmSync(profiles, { recursive: true, force: true });
mkdirSync(profiles, { recursive: true });
const script = join(profiles, 'echo.lua');
writeFileSync(script, `wrk.method = "POST"\nwrk.body = '{"text":"hello"}'\nwrk.headers["Content-Type"] = "application/json"\n`);
const bareFastify = join(profiles, 'bare-fastify.mjs');
writeFileSync(
  bareFastify,
  `import Fastify from '${join(root, 'node_modules', 'fastify', 'fastify.js')}';\n` +
    `const app = Fastify({ logger: false });\n` +
    `app.post('/echo', async (request) => ({ text: request.body.text }));\n` +
    `await app.listen({ host: '127.0.0.1', port: Number(process.argv[2]) });\n`,
);

const rows = [];
const svcArgs = (port) => [join(root, 'bin', 'svc.js'), 'start', join(here, 'svc'), '--host', '127.0.0.1', '--port', String(port), '--workers', '1'];
rows.push(await measure('svc --workers 1', process.execPath, svcArgs, here));
if (values.ablate) {
  // Copies of the bundle with one part switched off (never src/ itself): what each part costs.
  // Patterns allow for the bundle's whitespace (scripts/bundle.js drops it).
  const noRequestLog = [/if\s*\(options\.onRequestLog\)\s*\{/, 'if (false) {'];
  const ablations = {
    'svc, no request log': [noRequestLog],
    'svc, no log, no cancel-on-disconnect': [
      noRequestLog,
      // The signal is made but never tied to the socket's close.
      [/function cancelledWhenClientLeaves\(reply\)\s*\{/, 'function cancelledWhenClientLeaves(reply) { return new RequestCancel();'],
    ],
  };
  for (const [name, patches] of Object.entries(ablations)) {
    // The whole bundle (svc.js and the chunks it imports), patched in whichever file holds each string.
    const dir = join(profiles, name.replace(/[^\w]+/g, '-'));
    cpSync(join(root, 'dist', 'svc.js'), join(dir, 'svc.js'));
    cpSync(join(root, 'dist', 'chunks'), join(dir, 'chunks'), { recursive: true });
    const files = [join(dir, 'svc.js'), ...readdirSync(join(dir, 'chunks')).map((file) => join(dir, 'chunks', file))];
    for (const [from, to] of patches) {
      const file = files.find((path) => from.test(readFileSync(path, 'utf8')));
      if (!file) throw new Error(`ablation ${name}: the bundle no longer has ${from}`);
      writeFileSync(file, readFileSync(file, 'utf8').replace(from, to));
    }
    // The copy still finds svc's package.json and python/ by walking up.
    rows.push(await measure(name, process.execPath, (port) => [join(dir, 'svc.js'), 'start', join(here, 'svc'), '--host', '127.0.0.1', '--port', String(port), '--workers', '1'], here));
  }
}
// The profiler slows what it watches: its run is for the profile below, apart from the rows above.
rows.push(await measure('svc under --cpu-prof', process.execPath, (port) => ['--cpu-prof', '--cpu-prof-dir', profiles, ...svcArgs(port)], here));
rows.push(await measure('bare Fastify, no worker', process.execPath, (port) => [bareFastify, String(port)], here));
rows.push(await measure('minimal gateway + worker', process.execPath, (port) => [join(here, 'mini_gateway.mjs'), String(port)], here));
rows.push(await measure('  same, 4 calls pipelined', process.execPath, (port) => [join(here, 'mini_gateway.mjs'), String(port), '--pipeline', '4'], here));
rows.push(await measure('fastapi + uvicorn', join(here, '.venv-fastapi', 'bin', 'uvicorn'), (port) => ['app:app', '--host', '127.0.0.1', '--port', String(port)], join(here, 'fastapi')));

const beside = values.busy ? ', a CPU hog beside' : '';
console.log(`\nPOST /echo at concurrency ${concurrency}, ${duration} s, wrk 1 thread${beside}; CPU microseconds per request by process:\n`);
console.log(`server                    req/s   server main   python workers   wrk   (2 cores = 2,000,000 us/s)${values.busy ? '   switches/request: main, workers' : ''}`);
for (const row of rows) {
  const switches = values.busy ? `   ${row.mainSwitches.toFixed(2).padStart(15)}, ${row.workerSwitches.toFixed(2)}` : '';
  console.log(`${row.name.padEnd(24)} ${row.rps.toFixed(0).padStart(6)}   ${row.main.toFixed(0).padStart(11)}   ${row.workers.toFixed(0).padStart(14)}   ${row.wrk.toFixed(0).padStart(3)}${switches}`);
}
summariseProfile();

async function measure(name, command, argsFor, cwd) {
  const port = await freePort();
  const log = openSync(join(profiles, `${name.replace(/[^\w-]+/g, '_')}.log`), 'w'); // as in run.js: logs into a file
  const child = spawn(command, argsFor(port), { cwd, stdio: ['ignore', log, log] });
  closeSync(log);
  const exited = new Promise((resolve) => child.on('exit', resolve));
  await waitReady(port);
  run('wrk', ['-t1', '-c16', '-d2s', '-s', script, `http://127.0.0.1:${port}/echo`]); // warm-up
  const pids = [child.pid, ...descendants(child.pid)];
  const hog = values.busy ? spawn('python3', ['-c', 'while True: pass'], { stdio: 'ignore' }) : null;
  const before = new Map(pids.map((pid) => [pid, cpuMicros(pid)]));
  const switchesBefore = new Map(pids.map((pid) => [pid, contextSwitches(pid)]));
  const out = run('bash', ['-c', `wrk -t1 -c${concurrency} -d${duration}s -s ${script} http://127.0.0.1:${port}/echo; times`]);
  const after = new Map(pids.map((pid) => [pid, cpuMicros(pid)]));
  const switchesAfter = new Map(pids.map((pid) => [pid, contextSwitches(pid)]));
  hog?.kill();
  child.kill('SIGTERM');
  await exited;
  const requests = Number(/(\d+) requests in/.exec(out)[1]);
  const timesLine = out.trim().split('\n').slice(-1)[0]; // `times`: children's user and system time
  const wrkMicros = timesLine
    .split(' ')
    .map((part) => /(\d+)m([\d.]+)s/.exec(part))
    .reduce((sum, m) => sum + (m ? (Number(m[1]) * 60 + Number(m[2])) * 1e6 : 0), 0);
  const used = (pid) => (after.get(pid) ?? 0) - (before.get(pid) ?? 0);
  const switched = (pid) => (switchesAfter.get(pid) ?? 0) - (switchesBefore.get(pid) ?? 0);
  return {
    name,
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)[1]),
    main: used(child.pid) / requests,
    workers: pids.slice(1).reduce((sum, pid) => sum + used(pid), 0) / requests,
    wrk: wrkMicros / requests,
    mainSwitches: switched(child.pid) / requests,
    workerSwitches: pids.slice(1).reduce((sum, pid) => sum + switched(pid), 0) / requests,
  };
}

function summariseProfile() {
  const file = readdirSync(profiles).find((name) => name.endsWith('.cpuprofile'));
  if (!file) return console.log('\n(no .cpuprofile written)');
  const profile = JSON.parse(readFileSync(join(profiles, file), 'utf8'));
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const selfMicros = new Map();
  profile.samples.forEach((id, index) => selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0)));
  const total = [...selfMicros.values()].reduce((a, b) => a + b, 0);
  const idle = [...selfMicros].filter(([id]) => byId.get(id).callFrame.functionName === '(idle)').reduce((a, [, v]) => a + v, 0);
  const busy = total - idle;

  const selfByFunction = new Map();
  const byArea = new Map();
  for (const [id, micros] of selfMicros) {
    const frame = byId.get(id).callFrame;
    if (frame.functionName === '(idle)') continue;
    const key = `${frame.functionName || '(anonymous)'} ${shortUrl(frame.url)}:${frame.lineNumber + 1}`;
    selfByFunction.set(key, (selfByFunction.get(key) ?? 0) + micros);
    const area = areaOf(id, byId, parentOf);
    byArea.set(area, (byArea.get(area) ?? 0) + micros);
  }
  console.log(`\nGateway CPU profile (${file}): ${(busy / 1e6).toFixed(2)} s busy of ${(total / 1e6).toFixed(2)} s, over the whole run incl. start-up and warm-up.`);
  console.log('\nBusy time by area (each sample charged to the nearest recognisable frame on its stack):');
  for (const [area, micros] of [...byArea].sort((a, b) => b[1] - a[1])) console.log(`  ${(100 * micros / busy).toFixed(1).padStart(5)}%  ${area}`);
  console.log(`\nTop ${values.top} functions by self time:`);
  for (const [key, micros] of [...selfByFunction].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top))) {
    console.log(`  ${(100 * micros / busy).toFixed(1).padStart(5)}%  ${key}`);
  }
}

/** A coarse owner for a sample: walks up the stack to the first frame that names a known part. */
function areaOf(id, byId, parentOf) {
  const AREAS = [
    [/^(garbage collector)$/, 'garbage collection'],
    [/^\(program\)$/, 'V8/native (program)'],
    [/handleEventLine|handleCallEvent|inlineFileReferences|parseEvent|readLines|encodeCommand|WorkerProcess|send$/, 'svc worker pipe (events/commands, readline)'],
    [/submit|dispatch|WorkerPool|run$/, 'svc worker pool'],
    [/readArguments|compileValidators|validate|sendOutcome|cancelledWhenClientLeaves|removeStagedFiles|handler$/, 'svc endpoint route'],
    [/onResponse|request\b|serve-log|log/, 'request log hook'],
  ];
  let node = byId.get(id);
  const native = node.callFrame.url === '' ? node.callFrame.functionName : null;
  for (let cursor = node; cursor; cursor = byId.get(parentOf.get(cursor.id))) {
    const { functionName, url } = cursor.callFrame;
    if (/node_modules\/(fastify|find-my-way|light-my-request|avvio|@fastify)/.test(url) || /fastify|find-my-way/.test(url)) return 'fastify';
    for (const [pattern, area] of AREAS) if (pattern.test(functionName)) return area;
    if (url.startsWith('node:')) return `node core: ${url.replace(/^node:/, '').split('/')[0]}`;
  }
  return native ? `native: ${native}` : 'other';
}

function shortUrl(url) {
  return url.replace(/^file:\/\/.*\/work\/main\//, '').replace(/^node:internal\//, 'node:');
}

function descendants(pid) {
  const found = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) found.push(Number(entry), ...descendants(Number(entry)));
    } catch {}
  }
  return found;
}

function cpuMicros(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) / 100) * 1e6; // clock ticks, 100 per second
  } catch {
    return 0;
  }
}

/** Voluntary + involuntary context switches of the process's main thread. */
function contextSwitches(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return [...status.matchAll(/^(?:non)?voluntary_ctxt_switches:\s+(\d+)$/gm)].reduce((sum, match) => sum + Number(match[1]), 0);
  } catch {
    return 0;
  }
}

function run(command, args) {
  const result = spawnSync(command, args, { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

async function waitReady(port) {
  for (let tries = 0; tries < 300; tries += 1) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"text":"hello"}' });
      if (response.ok) return;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`nothing answered on port ${port}`);
}
