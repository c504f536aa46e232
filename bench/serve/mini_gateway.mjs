// An experiment for profile_gateway.js and run.js (its "least gateway"), not a server to use:
// the least a gateway can do in front of svc's real Python worker (`python -m
// apipod._runtime.worker`, same pipes and protocol as svc): Fastify, one route, one worker, no
// validation, pool, logging or cancellation. With --pipeline N it keeps up to N calls written to
// the worker at once (the worker already queues calls it has read), so neither side sleeps
// between calls under load. With --bare it answers through node:http alone, no Fastify: what
// Fastify itself costs (bench/RESULTS.md run 24).
// Its worker is the first `python3` on PATH.
// Usage: node bench/serve/mini_gateway.mjs PORT [--pipeline N] [--bare]
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const { values, positionals } = parseArgs({ allowPositionals: true, options: { pipeline: { type: 'string', default: '1' }, bare: { type: 'boolean', default: false } } });
const port = Number(positionals[0]);
const pipeline = Number(values.pipeline);

const worker = spawn('python3', ['-m', 'apipod._runtime.worker', join(here, 'svc', 'service.py')], {
  env: { ...process.env, PYTHONPATH: join(root, 'python'), APIPOD_COMMAND_FD: '3', APIPOD_EVENT_FD: '4', APIPOD_CANCEL_FD: '5', PYTHONUNBUFFERED: '1' },
  stdio: ['ignore', 'inherit', 'inherit', 'pipe', 'pipe', 'pipe'],
});
const commands = worker.stdio[3];
const pending = new Map();
const waiting = [];
let inFlight = 0;
let next = 0;
let ready;
const isReady = new Promise((resolve) => (ready = resolve));
createInterface({ input: worker.stdio[4], crlfDelay: Infinity }).on('line', (line) => {
  const event = JSON.parse(line);
  if (event.type === 'ready') return ready();
  const settle = pending.get(event.call);
  pending.delete(event.call);
  inFlight -= 1;
  settle(event);
  pump();
});
function pump() {
  while (inFlight < pipeline && waiting.length > 0) {
    const { args, settle } = waiting.shift();
    const call = `c-${++next}`;
    pending.set(call, settle);
    inFlight += 1;
    commands.write(`${JSON.stringify({ type: 'call', call, endpoint: '/echo', arguments: args })}\n`);
  }
}
function called(args) {
  return new Promise((settle) => {
    waiting.push({ args, settle });
    pump();
  });
}
await isReady;
if (values.bare) {
  createServer((request, response) => {
    const parts = [];
    request.on('data', (part) => parts.push(part));
    request.on('end', async () => {
      const body = JSON.stringify((await called(JSON.parse(Buffer.concat(parts).toString()))).value);
      response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
      response.end(body);
    });
  }).listen(port, '127.0.0.1');
} else {
  const { default: Fastify } = await import(join(root, 'node_modules', 'fastify', 'fastify.js'));
  const app = Fastify({ logger: false });
  app.post('/echo', async (request, reply) => reply.type('application/json; charset=utf-8').send(JSON.stringify((await called(request.body)).value)));
  await app.listen({ host: '127.0.0.1', port });
}
process.on('SIGTERM', () => {
  worker.kill();
  process.exit(0);
});
