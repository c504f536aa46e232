import { Chalk } from 'chalk';
import type { ServeLog } from '../serve-log.js';
import { printable, type OutputMode } from './output.js';

/**
 * `svc start`'s log: one line per event on stderr, coloured on a terminal; stdout is left to --json.
 * Request lines are written together, REQUEST_LINES_MS after the first of them: under load one
 * write carries hundreds, where a write per request (or per turn of the event loop, one or two
 * requests on a busy machine) cost the gateway a system call each, and woke a terminal's
 * reader each time. Any other line writes the pending ones first, so the log keeps its order.
 */
export function createServeLog(mode: OutputMode, stderr: NodeJS.WritableStream = process.stderr): ServeLog {
  const paint = new Chalk({ level: mode.stderrColor ? 1 : 0 });
  let pendingRequests = '';
  let flushTimer: NodeJS.Timeout | null = null;
  const flushRequests = () => {
    if (flushTimer !== null) clearTimeout(flushTimer);
    flushTimer = null;
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
    // (printable); so are the lines of the service's own output, but for their colours.
    info: (message) => write(`${paint.bold('svc')} ${printable(message)}`),
    request: (line) => {
      pendingRequests += `${paint.dim(line)}\n`;
      if (pendingRequests.length >= MOST_PENDING_CHARS) flushRequests();
      else flushTimer ??= setTimeout(flushRequests, REQUEST_LINES_MS).unref(); // the exit handler writes what is left
    },
    worker: (worker, call, stream, line) => {
      const tag = call ? `worker ${worker} ${call}` : `worker ${worker}`;
      const text = relayedLine(line, mode.stderrColor);
      write(`${paint.cyan(`[${tag}]`)} ${stream === 'stderr' ? paint.yellow(text) : text}`);
    },
    provider: (name, stream, line) => {
      const text = relayedLine(line, mode.stderrColor);
      write(`${paint.magenta(`[${name}]`)} ${stream === 'stderr' ? paint.yellow(text) : text}`);
    },
    warn: (message) => write(`${paint.yellow('warning:')} ${printable(message)}`),
    event: (name, fields) => {
      if (mode.json) process.stdout.write(`${JSON.stringify({ event: name, ...fields })}\n`);
    },
    result: (value) => process.stdout.write(`${JSON.stringify(mode.json ? { event: 'result', ...value } : value)}\n`),
    flush: flushRequests,
  };
}

/** How long a request line may wait for others to share its write: too short for a reader to notice. */
export const REQUEST_LINES_MS = 50;
/** Pending request lines this long are written at once. */
const MOST_PENDING_CHARS = 64 * 1024;

/** ECMA-48's Select Graphic Rendition: colours and weights, which change nothing but the look. */
const COLOUR_SEQUENCE = /\x1b\[[0-9;]*m/g;

/**
 * A line of the service's output as svc's log shows it: its colours kept on a colour
 * terminal and dropped elsewhere, every other control character escaped, so that no print
 * of the user's code or its libraries can retitle the terminal, move its cursor or write
 * to its clipboard (OSC sequences) from svc's log.
 */
export function relayedLine(line: string, keepColours: boolean): string {
  let shown = '';
  let from = 0;
  for (const colour of line.matchAll(COLOUR_SEQUENCE)) {
    shown += printable(line.slice(from, colour.index)) + (keepColours ? colour[0] : '');
    from = colour.index + colour[0].length;
  }
  return shown + printable(line.slice(from));
}
