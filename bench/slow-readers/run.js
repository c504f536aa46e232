#!/usr/bin/env node
// bench/slow-readers: what clients that ask for a large answer and never read it cost the
// gateway. Starts `svc start` on bench/slow-readers/service.py (an endpoint answering a text
// of --mib MiB), opens --clients raw TCP connections that each send the request and never
// read, and samples the gateway's resident memory (VmRSS in /proc, Linux only) every 100 ms
// for --hold seconds. Prints the RSS before, the peak and the RSS at the end; svc's log
// (on stderr) shows each request as it ends, `(the client left)` for one it let go.
//
// Usage: node bench/slow-readers/run.js [--clients 8] [--mib 40] [--hold 20] [--port 0]
//          [-- extra svc start flags]
// Needs the CLI bundle (`npm ci` builds it) and python3 on PATH. Writes nothing.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { freePort } from '../lib/processes.js';

const here = dirname(fileURLToPath(import.meta.url));
const svcBin = join(here, '..', '..', 'bin', 'svc.js');
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    clients: { type: 'string', default: '8' },
    mib: { type: 'string', default: '40' },
    hold: { type: 'string', default: '20' },
    port: { type: 'string', default: '0' },
  },
});
const clients = Number(values.clients);
const holdMs = Number(values.hold) * 1000;
const port = Number(values.port) || (await freePort());

const server = spawn(process.execPath, [svcBin, 'start', join(here, 'service.py'), '--host', '127.0.0.1', '--port', String(port), '--json', ...positionals], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
try {
  await new Promise((resolve, reject) => {
    let out = '';
    server.stdout.on('data', (chunk) => {
      out += chunk;
      if (out.includes('"listening"')) resolve();
    });
    server.on('exit', (code) => reject(new Error(`svc start exited with ${code}`)));
  });
  const before = rssMiB(server.pid);
  const body = JSON.stringify({ mib: Number(values.mib) });
  const request = `POST /large HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
  const sockets = Array.from({ length: clients }, () => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    socket.pause(); // never read: the answer piles up in the kernel's buffers, then the server's
    socket.on('error', () => {});
    return socket;
  });
  let peak = before;
  const started = Date.now();
  while (Date.now() - started < holdMs) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    peak = Math.max(peak, rssMiB(server.pid));
  }
  const after = rssMiB(server.pid);
  console.log(`${clients} clients x ${values.mib} MiB, never reading, ${holdMs / 1000} s: gateway RSS ${before} MiB before, ${peak} MiB peak, ${after} MiB at the end`);
  for (const socket of sockets) socket.destroy();
} finally {
  server.kill('SIGTERM');
}

function rssMiB(pid) {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((entry) => entry.startsWith('VmRSS:'));
  return Math.round(Number(line.split(/\s+/)[1]) / 1024);
}
