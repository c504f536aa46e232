#!/usr/bin/env node
// bench/build: `svc build --image` on examples/hello against the local Docker engine.
// Measures a first build with no cache (--no-cache: every step runs), a rebuild after a
// change to service.py alone (reported as a ratio of the first build), and the image size.
// Needs an engine and the base images the Dockerfile names; on machines without a registry
// scripts/ci/base-image-standins.sh provides them (its Python is 3.11, so the project gets
// `.python-version` 3.11). Usage: node bench/build/run.js [--runs 3]
import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const svc = join(root, 'bin', 'svc.js');
const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' } } });
const runs = Number(values.runs);
const tag = 'svc-bench-hello:latest';

execFileSync('bash', [join(root, 'scripts/ci/base-image-standins.sh')], { stdio: 'inherit' });
const parent = mkdtempSync(join(tmpdir(), 'svc-bench-build-'));
const project = join(parent, 'hello');
cpSync(join(root, 'examples', 'hello'), project, { recursive: true });
rmSync(join(project, 'apipod-deploy'), { recursive: true, force: true });
writeFileSync(join(project, '.python-version'), '3.11\n');

const first = [];
const rebuild = [];
const cachedSteps = [];
for (let run = 0; run < runs; run += 1) {
  first.push(build(['--no-cache']).seconds);
  appendFileSync(join(project, 'service.py'), `\n# bench change ${run}\n`);
  const again = build([]);
  rebuild.push(again.seconds);
  cachedSteps.push(`${again.cached}/${again.steps}`);
}
const size = Number(execFileSync('docker', ['image', 'inspect', tag, '--format', '{{.Size}}'], { encoding: 'utf8' }).trim());
const base = Number(execFileSync('docker', ['image', 'inspect', 'python:3.11-slim-bookworm', '--format', '{{.Size}}'], { encoding: 'utf8' }).trim());
const firstMedian = median(first);
const rebuildMedian = median(rebuild);
console.log(`first build (--no-cache)  median ${firstMedian.toFixed(1)} s  (runs: ${first.map((s) => s.toFixed(1)).join(' ')})`);
console.log(`rebuild after code change median ${rebuildMedian.toFixed(1)} s  (runs: ${rebuild.map((s) => s.toFixed(1)).join(' ')}; steps from cache: ${cachedSteps.join(' ')})`);
console.log(`rebuild / first build     ${(rebuildMedian / firstMedian).toFixed(3)} (${((100 * rebuildMedian) / firstMedian).toFixed(1)} %)`);
console.log(`image size                ${(size / 1e6).toFixed(0)} MB (base image ${(base / 1e6).toFixed(0)} MB, svc's layers ${((size - base) / 1e6).toFixed(0)} MB)`);
rmSync(parent, { recursive: true, force: true });

/** One `svc build --image` run, timed from the outside (Node start-up and the scan included). */
function build(extra) {
  const started = process.hrtime.bigint();
  const result = spawnSync(process.execPath, [svc, 'build', project, '--image', tag, '--json', ...extra], { encoding: 'utf8' });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (result.status !== 0) throw new Error(`svc build failed:\n${result.stderr}`);
  const outcome = result.stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line))
    .find((event) => event.event === 'build.result');
  return { seconds, steps: outcome.build.steps, cached: outcome.build.cached_steps };
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}
