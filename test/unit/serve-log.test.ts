import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { REQUEST_LINES_MS, createServeLog, relayedLine } from '../../src/cli/serve-log.js';

const PLAIN = { json: false, tty: false, color: false, stderrColor: false, debug: false };

/** A stderr that keeps each write apart. */
function recordingStream(): { stream: Writable; writes: string[] } {
  const writes: string[] = [];
  const stream = new Writable({ write: (chunk, _encoding, done) => (writes.push(String(chunk)), done()) });
  return { stream, writes };
}

describe("svc start's request lines", () => {
  it('come out together, in order and soon, however many turns of the event loop they span', async () => {
    const { stream, writes } = recordingStream();
    const log = createServeLog(PLAIN, stream);
    for (const status of [200, 201, 202]) {
      log.request(`POST /echo ${status} 1ms`);
      await new Promise((resolve) => setImmediate(resolve)); // as requests a busy gateway takes one per turn
    }
    await sleep(REQUEST_LINES_MS + 20);
    expect(writes).toEqual(['POST /echo 200 1ms\nPOST /echo 201 1ms\nPOST /echo 202 1ms\n']);
  });

  it("are written before any other line, which keeps the log's order", () => {
    const { stream, writes } = recordingStream();
    const log = createServeLog(PLAIN, stream);
    log.request('POST /echo 200 1ms');
    log.warn('the queue of /echo is full');
    expect(writes).toEqual(['POST /echo 200 1ms\n', 'warning: the queue of /echo is full\n']);
  });

  it("are written at once when the server stops, before the command's last error line", () => {
    const { stream, writes } = recordingStream();
    const log = createServeLog(PLAIN, stream);
    log.request('POST /sleep 200 12ms (the client left)');
    log.flush();
    expect(writes).toEqual(['POST /sleep 200 12ms (the client left)\n']);
  });
});

describe("svc start's log of the service's own output", () => {
  it('escapes what would retitle the terminal, move its cursor or write its clipboard', () => {
    expect(relayedLine('\u001b]0;owned\u0007loading', true)).toBe('\\x1b]0;owned\\x07loading');
    expect(relayedLine('\u001b]52;c;ZXZpbA==\u0007', true)).toBe('\\x1b]52;c;ZXZpbA==\\x07');
    expect(relayedLine('50%\u001b[2K\u001b[1A', true)).toBe('50%\\x1b[2K\\x1b[1A');
    expect(relayedLine('a\rb', false)).toBe('a\\x0db');
  });

  it("keeps a library's colours on a colour terminal and drops them elsewhere, the text as it is", () => {
    const line = '\u001b[32mINFO\u001b[0m model loaded\tin 2 s';
    expect(relayedLine(line, true)).toBe(line);
    expect(relayedLine(line, false)).toBe('INFO model loaded\tin 2 s');
  });
});
