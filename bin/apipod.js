#!/usr/bin/env node
// The apipod toolkit's command line (apipod --scan, apipod start, ...): python/apipod/cli.py reads
// it and runs this package's svc, so pip's console script and this bin behave the same.
import { spawn } from 'node:child_process';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const toolkit = join(dirname(fileURLToPath(import.meta.url)), '..', 'python');
const python = 'python3';
const child = spawn(python, ['-m', 'apipod.cli', ...process.argv.slice(2)], {
  stdio: 'inherit',
  env: { ...process.env, PYTHONPATH: [toolkit, process.env.PYTHONPATH].filter(Boolean).join(delimiter) },
});
child.on('error', (error) => {
  process.stderr.write(
    error.code === 'ENOENT'
      ? `apipod: the apipod command needs Python 3.10 or later as ${python} on PATH; svc itself runs as \`svc\`\n`
      : `apipod: could not run ${python}: ${error.message}\n`,
  );
  process.exit(1);
});
// Ctrl-C reaches the whole process group, svc included; a second SIGINT would stop svc at once,
// so only a SIGTERM sent to this process alone is passed on.
process.on('SIGINT', () => {});
process.on('SIGTERM', () => child.kill('SIGTERM'));
child.on('exit', (code, signal) => process.exit(code ?? (signal === 'SIGTERM' ? 143 : 130)));
