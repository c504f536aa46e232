#!/usr/bin/env node
// bench/scan: `svc scan` against `find` over the same 100,000-file project tree, run
// alternately so both see the same machine load; reports medians and their ratio, beside the
// floor of any Node CLI on this machine (Node's start-up plus a bare readdirSync walk).
// When NODE_EXTRA_CA_CERTS is set, every Node command runs both with it and without it: Node
// reads that certificate file before running a line of JavaScript (~50 ms on this machine),
// and most users' machines do not set it.
// Usage: node bench/scan/run.js [--files 100000] [--runs 7]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = dirname(fileURLToPath(import.meta.url));
const svc = join(here, '..', '..', 'bin', 'svc.js');
const { values } = parseArgs({
  options: { files: { type: 'string', default: '100000' }, runs: { type: 'string', default: '7' } },
});
const fileCount = Number(values.files);
const runs = Number(values.runs);
const tree = join(here, 'tree');

buildTree(tree, fileCount);
const tiny = join(here, 'tiny');
mkdirSync(tiny, { recursive: true });
writeFileSync(join(tiny, 'service.py'), readFileSync(join(tree, 'service.py')));
const environments = [{ label: '', env: process.env }];
if (process.env.NODE_EXTRA_CA_CERTS !== undefined) {
  const { NODE_EXTRA_CA_CERTS, ...withoutCertificates } = process.env;
  environments[0].label = ` (NODE_EXTRA_CA_CERTS=${NODE_EXTRA_CA_CERTS})`;
  environments.push({ label: ' (NODE_EXTRA_CA_CERTS unset)', env: withoutCertificates });
}
const find = [];
const samples = environments.map(() => ({ scan: [], scanTiny: [], nodeStartup: [], bareWalk: [] }));
for (let run = 0; run < runs; run += 1) {
  find.push(time('find', [tree, '-type', 'f'], process.env));
  environments.forEach(({ env }, index) => {
    const sample = samples[index];
    sample.scan.push(time(process.execPath, [svc, 'scan', tree, '--json'], env));
    sample.scanTiny.push(time(process.execPath, [svc, 'scan', tiny, '--json'], env));
    sample.nodeStartup.push(time(process.execPath, ['-e', '0'], env));
    sample.bareWalk.push(time(process.execPath, [join(here, 'bare-walk.js'), tree], env));
  });
}
const findMedian = median(find);
const manifest = JSON.parse(readFileSync(join(tree, 'apipod-deploy', 'apipod.json'), 'utf8'));
console.log(`tree: ${fileCount} files (${manifest.model_files.length} model files found by the scan)`);
console.log(`find -type f   median ${findMedian.toFixed(0)} ms  (runs: ${find.map((t) => t.toFixed(0)).join(' ')})`);
environments.forEach(({ label }, index) => {
  const { scan, scanTiny, nodeStartup, bareWalk } = samples[index];
  const scanMedian = median(scan);
  const fixedMedian = median(scanTiny);
  console.log(`\nNode commands${label}:`);
  console.log(`svc scan       median ${scanMedian.toFixed(0)} ms  (runs: ${scan.map((t) => t.toFixed(0)).join(' ')})`);
  console.log(`svc scan, 1 file median ${fixedMedian.toFixed(0)} ms  (fixed cost: node, bundle, grammar; node -e 0 alone: ${median(nodeStartup).toFixed(0)} ms)`);
  console.log(`ratio svc/find: ${(scanMedian / findMedian).toFixed(2)}x (target: under 3x)`);
  console.log(`floor, a bare Node readdirSync walk: median ${median(bareWalk).toFixed(0)} ms, ${(median(bareWalk) / findMedian).toFixed(2)}x find`);
  console.log(`ratio of the walk alone, (svc 100k - svc 1 file)/find: ${((scanMedian - fixedMedian) / findMedian).toFixed(2)}x`);
});

function time(command, args, env) {
  const started = process.hrtime.bigint();
  const result = spawnSync(command, args, { env, stdio: ['ignore', 'ignore', 'pipe'], maxBuffer: 1 << 30 });
  const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed: ${result.stderr}`);
  return elapsed;
}

function median(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** A project shaped like a real one grown large: a package tree, data, ignored logs, weights. */
function buildTree(root, files) {
  const stamp = join(root, '.bench-files');
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === String(files)) return;
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  writeFileSync(join(root, 'service.py'), 'from apipod import APIPod\napp = APIPod(title="bench")\n\n@app.endpoint("/run")\ndef run(x: int) -> dict:\n    return {"x": x}\n');
  writeFileSync(join(root, 'requirements.txt'), 'torch==2.4.1\ntransformers>=4.40\n');
  writeFileSync(join(root, '.gitignore'), '*.log\n/outputs/\n');
  let written = 3;
  const perDirectory = 100;
  for (let d = 0; written < files; d += 1) {
    const directory = join(root, 'src', `package_${Math.floor(d / 10)}`, `module_${d % 10}`);
    mkdirSync(directory, { recursive: true });
    for (let f = 0; f < perDirectory && written < files; f += 1, written += 1) {
      const name = f % 25 === 0 ? `run_${f}.log` : f % 50 === 1 ? `weights_${f}.safetensors` : `file_${f}.py`;
      writeFileSync(join(directory, name), '');
    }
  }
  writeFileSync(stamp, String(files));
}
