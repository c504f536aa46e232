import type { Readable } from 'node:stream';

const LF = 0x0a;
const CR = 0x0d;
/** How long a line ended by \r at the end of a read waits to learn whether a \n follows. */
const CARRIAGE_RETURN_WAIT_MS = 50;

/** How a line ended: a lone \r is a progress bar's redraw, not a finished line. */
export type LineEnding = 'newline' | 'carriage-return' | 'end-of-stream';

export interface LineReaderOptions {
  /** The longest line held, in bytes; what a longer line has beyond that is dropped. */
  maxLineBytes: number;
  /**
   * The line's bytes, without its ending, in the pieces it was read in (views of the reads,
   * not copies): the event pipe passes a long text on as these pieces, since every large
   * buffer allocated brings the gateway's next full garbage collection closer. lineBytes
   * joins them where one buffer is needed.
   */
  onLine: (parts: Buffer[], ending: LineEnding) => void;
  /** A line longer than `maxLineBytes`, given as its first `maxLineBytes` bytes. */
  onOverlongLine: (start: Buffer) => void;
}

/**
 * Reads a stream as lines (bytes) ending in \n, \r\n or a lone \r (a progress bar's redraw),
 * as node:readline does, saying which, but holding at most `maxLineBytes` of a line:
 * readline keeps a line whole however long it grows, and a worker that writes 600 MB
 * without a newline then takes the gateway down with "Invalid string length". A last line
 * without its end is still read when the stream ends.
 */
export function readLines(stream: Readable, options: LineReaderOptions): void {
  let parts: Buffer[] = [];
  let size = 0;
  let overlong = false;
  let afterCarriageReturn = false;
  // A `print(..., end="\r")` before a long step must show now, not when the process next writes.
  let carriageReturnTimer: NodeJS.Timeout | undefined;

  const append = (piece: Buffer) => {
    if (overlong || piece.length === 0) return;
    if (size + piece.length <= options.maxLineBytes) {
      parts.push(piece);
      size += piece.length;
      return;
    }
    parts.push(piece.subarray(0, options.maxLineBytes - size));
    options.onOverlongLine(Buffer.concat(parts));
    overlong = true;
    parts = [];
    size = 0;
  };
  const endLine = (ending: LineEnding) => {
    if (!overlong) options.onLine(parts, ending);
    overlong = false;
    parts = [];
    size = 0;
  };

  stream.on('data', (chunk: Buffer) => {
    clearTimeout(carriageReturnTimer);
    let start = 0;
    if (afterCarriageReturn) {
      // A line that ended in \r at the end of the last read: a \r\n split across reads, or a redraw.
      const isNewline = chunk[0] === LF;
      endLine(isNewline ? 'newline' : 'carriage-return');
      if (isNewline) start = 1;
      afterCarriageReturn = false;
    }
    // The next \n and \r at or after `start`, each searched for again only once passed.
    let nextLF = chunk.indexOf(LF, start);
    let nextCR = chunk.indexOf(CR, start);
    while (start < chunk.length) {
      if (nextLF !== -1 && nextLF < start) nextLF = chunk.indexOf(LF, start);
      if (nextCR !== -1 && nextCR < start) nextCR = chunk.indexOf(CR, start);
      const end = nextLF === -1 ? nextCR : nextCR === -1 ? nextLF : Math.min(nextLF, nextCR);
      if (end === -1) {
        append(chunk.subarray(start));
        return;
      }
      append(chunk.subarray(start, end));
      start = end + 1;
      if (chunk[end] === LF) {
        endLine('newline');
      } else if (start === chunk.length) {
        afterCarriageReturn = true; // decided by the next read's first byte, or by a pause
        carriageReturnTimer = setTimeout(() => {
          afterCarriageReturn = false;
          endLine('carriage-return');
        }, CARRIAGE_RETURN_WAIT_MS);
        carriageReturnTimer.unref();
      } else if (chunk[start] === LF) {
        endLine('newline');
        start += 1;
      } else {
        endLine('carriage-return');
      }
    }
  });
  stream.on('end', () => {
    clearTimeout(carriageReturnTimer);
    if (afterCarriageReturn) endLine('carriage-return');
    else if (size > 0) endLine('end-of-stream');
  });
}

/** A line's pieces (readLines) as one buffer: the piece itself when there is one. */
export function lineBytes(parts: readonly Buffer[]): Buffer {
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
}

const LOG_LINE_MAX_BYTES = 64 * 1024;
const REDRAW_INTERVAL_MS = 1000;

/**
 * A process's output as log lines; a line longer than 64 KiB is cut, and says so. A
 * progress bar (tqdm, as diffusers and model downloads draw) redraws itself ten times a
 * second with a lone \r: a redraw is logged at most once a second, and the bar's last state,
 * which ends in \n, always.
 */
export function readLogLines(stream: Readable, onLine: (line: string) => void): void {
  let redrawLoggedAt = -Infinity;
  readLines(stream, {
    maxLineBytes: LOG_LINE_MAX_BYTES,
    onLine: (parts, ending) => {
      const line = lineBytes(parts).toString('utf8');
      if (ending === 'carriage-return') {
        const now = performance.now();
        if (line.trim() === '' || now - redrawLoggedAt < REDRAW_INTERVAL_MS) return;
        redrawLoggedAt = now;
      }
      onLine(line);
    },
    onOverlongLine: (start) => onLine(`${start.toString('utf8')} [cut: the line is longer than ${LOG_LINE_MAX_BYTES / 1024} KiB]`),
  });
}
