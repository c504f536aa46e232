#!/usr/bin/env node
// The fuzz run of docs/fuzzing.md: schemathesis over each bundled example's /openapi.json,
// served by `svc start` in both computes. Every check schemathesis has runs, but one that
// cannot hold for svc by design (the list below says why); any failure fails the run.
//
//   node test/fuzz/run.js [--examples N] [--seed S] [--only hello,image] [--compute dedicated]
//
// Needs schemathesis: test/.venv-fuzz, which .ci/setup makes from .ci/requirements-fuzz.txt.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort, stopServers } from '../../bench/lib/processes.js';

const ROOT = join(import.meta.dirname, '..', '..');
const SCHEMATHESIS = join(ROOT, 'test', '.venv-fuzz', 'bin', 'schemathesis');
const EXAMPLES = ['hello', 'image', 'chat'];
const COMPUTES = ['dedicated', 'serverless'];

/**
 * Checks left out, each because svc answers as documented where the check expects otherwise:
 * - positive_data_acceptance: a typed media parameter (ImageFile, ...) refuses bytes that are
 *   not of its kind with a 422 (docs/errors.md); JSON Schema cannot say "an image", so any
 *   string the schema allows is "schema-valid" to the fuzzer.
 */
const EXCLUDED_CHECKS = ['positive_data_acceptance'];

const { values: options } = parseArgs({
  options: {
    examples: { type: 'string', default: '100' },
    seed: { type: 'string', default: '20261125' },
    only: { type: 'string', default: EXAMPLES.join(',') },
    compute: { type: 'string', default: COMPUTES.join(',') },
  },
});

if (!existsSync(SCHEMATHESIS)) {
  console.error(`fuzz: no ${SCHEMATHESIS}; run .ci/setup (it installs .ci/requirements-fuzz.txt there)`);
  process.exit(2);
}

async function startSvc(example, compute) {
  const port = await freePort();
  const child = spawn(join(ROOT, 'bin', 'svc.js'), ['start', join(ROOT, 'examples', example), '--port', String(port), '--compute', compute], {
    stdio: ['ignore', 'pipe', 'pipe'],
    // A job file of its own (serverless keeps one in the state directory), not the user's.
    env: { ...process.env, XDG_STATE_HOME: mkdtempSync(join(tmpdir(), 'svc-fuzz-state-')) },
  });
  let log = '';
  child.stdout.on('data', (chunk) => (log += chunk));
  child.stderr.on('data', (chunk) => (log += chunk));
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const url = `http://127.0.0.1:${port}`;
  for (const started = Date.now(); Date.now() - started < 60_000; await new Promise((resolve) => setTimeout(resolve, 250))) {
    if (child.exitCode !== null) throw new Error(`svc start examples/${example} exited: ${log}`);
    const health = await fetch(`${url}/health`).then((response) => response.json(), () => null);
    if (health?.status === 'READY') return { child, exited, url, log: () => log };
  }
  throw new Error(`svc start examples/${example} was not READY within 60 s: ${log}`);
}

/** Runs schemathesis against one server; resolves to its output and exit code. */
function fuzz(url) {
  const args = [
    'run', `${url}/openapi.json`,
    '--checks', 'all', '--exclude-checks', EXCLUDED_CHECKS.join(','),
    '--max-examples', options.examples, '--seed', options.seed, '--workers', '2',
  ];
  return new Promise((resolve) => {
    const child = spawn(SCHEMATHESIS, args, { stdio: ['ignore', 'pipe', 'pipe'], cwd: tmpdir() }); // its .schemathesis/ cache stays out of the checkout
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('exit', (code) => resolve({ code, output }));
  });
}

/** Requests answered and 5xx answers, from the gateway's own request log (`POST /hello 200 3ms`). */
function tally(log) {
  const statuses = [...log.matchAll(/^[A-Z]+ \S+ (\d{3}) /gm)].map((match) => match[1]);
  return { requests: statuses.length, serverErrors: statuses.filter((status) => status.startsWith('5')).length };
}

/**
 * `passed`, or what failed. A "Runtime Error" alone is schemathesis's own (Hypothesis finding
 * its generation inconsistent): nothing was sent or checked, so it is reported, not failed on.
 * Any other error (a network error is svc dropping a connection) fails the run.
 */
function verdictOf(code, output) {
  if (code === 0) return 'passed';
  const errors = output.match(/^Errors:\n((?: {2}.*\n)+)/m)?.[1] ?? '';
  const onlyToolErrors = errors !== '' && errors.trim().split('\n').every((line) => /Runtime Error/.test(line));
  if (!/^Failures:/m.test(output) && onlyToolErrors) return `passed (schemathesis's own ${errors.trim().replace(/^\S+\s*/, '')})`;
  return 'FAILED';
}

let failed = false;
const rows = [];
for (const example of options.only.split(',')) {
  for (const compute of options.compute.split(',')) {
    const server = await startSvc(example, compute);
    try {
      const { code, output } = await fuzz(server.url);
      await new Promise((resolve) => setTimeout(resolve, 200)); // svc writes its request lines within 50 ms
      const { requests, serverErrors } = tally(server.log());
      const verdict = verdictOf(code, output);
      rows.push(`${example.padEnd(6)} ${compute.padEnd(10)} ${String(requests).padStart(6)} requests  ${serverErrors} 5xx  ${verdict}`);
      if (verdict === 'FAILED' || serverErrors > 0) {
        failed = true;
        console.log(output);
        console.log(server.log());
      }
    } finally {
      await stopServers([server]);
    }
  }
}
console.log(`schemathesis --checks all (but ${EXCLUDED_CHECKS.join(', ')}), --max-examples ${options.examples}, --seed ${options.seed}`);
for (const row of rows) console.log(row);
process.exit(failed ? 1 : 0);
