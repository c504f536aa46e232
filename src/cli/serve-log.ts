import { Chalk } from 'chalk';
import type { ServeLog } from '../serve-log.js';
import { printable, type OutputMode } from './output.js';

/**
 * `svc start`'s log: one line per event on stderr, coloured on a terminal; stdout is left to --json.
 * Request lines are written once per turn of the event loop: under load one write carries
 * many of them, where a write per request cost the gateway a system call each. Any other
 * line writes the pending ones first, so the log keeps its order.
 */
export function createServeLog(mode: OutputMode, stderr: NodeJS.WritableStream = process.stderr): ServeLog {
  const paint = new Chalk({ level: mode.stderrColor ? 1 : 0 });
  let pendingRequests = '';
  const flushRequests = () => {
    if (pendingRequests === '') return;
    stderr.write(pendingRequests);
    pendingRequests = '';
  };
  process.once('exit', flushRequests);
  const write = (line: string) => {
    flushRequests();
    stderr.write(`${line}\n`);
  };
  return {
    // svc's own lines carry the service's title and paths: escaped, as every project text is
    // (printable); the worker's lines are the user's own output, passed as they are.
    info: (message) => write(`${paint.bold('svc')} ${printable(message)}`),
    request: (line) => {
      if (pendingRequests === '') setImmediate(flushRequests);
      pendingRequests += `${paint.dim(line)}\n`;
    },
    worker: (worker, call, stream, line) => {
      const tag = call ? `worker ${worker} ${call}` : `worker ${worker}`;
      write(`${paint.cyan(`[${tag}]`)} ${stream === 'stderr' ? paint.yellow(line) : line}`);
    },
    provider: (name, stream, line) => write(`${paint.magenta(`[${name}]`)} ${stream === 'stderr' ? paint.yellow(line) : line}`),
    warn: (message) => write(`${paint.yellow('warning:')} ${printable(message)}`),
    event: (name, fields) => {
      if (mode.json) process.stdout.write(`${JSON.stringify({ event: name, ...fields })}\n`);
    },
    result: (value) => process.stdout.write(`${JSON.stringify(mode.json ? { event: 'result', ...value } : value)}\n`),
  };
}
