import type { Readable } from 'node:stream';

const LF = 0x0a;
const CR = 0x0d;

export interface LineReaderOptions {
  /** The longest line held, in bytes; what a longer line has beyond that is dropped. */
  maxLineBytes: number;
  onLine: (line: string) => void;
  /** A line longer than `maxLineBytes`, given as its first `maxLineBytes` bytes. */
  onOverlongLine: (start: string) => void;
}

/**
 * Reads a stream as UTF-8 lines ending in \n, \r\n or a lone \r (a progress bar's redraw),
 * as node:readline does, but holding at most `maxLineBytes` of a line: readline keeps a
 * line whole however long it grows, and a worker that writes 600 MB without a newline then
 * takes the gateway down with "Invalid string length". A last line without its end is
 * still read when the stream ends.
 */
export function readLines(stream: Readable, options: LineReaderOptions): void {
  let parts: Buffer[] = [];
  let size = 0;
  let overlong = false;
  let afterCarriageReturn = false;

  const append = (piece: Buffer) => {
    if (overlong || piece.length === 0) return;
    if (size + piece.length <= options.maxLineBytes) {
      parts.push(piece);
      size += piece.length;
      return;
    }
    parts.push(piece.subarray(0, options.maxLineBytes - size));
    options.onOverlongLine(Buffer.concat(parts).toString('utf8'));
    overlong = true;
    parts = [];
    size = 0;
  };
  const endLine = () => {
    if (!overlong) options.onLine(parts.length === 1 ? parts[0]!.toString('utf8') : Buffer.concat(parts, size).toString('utf8'));
    overlong = false;
    parts = [];
    size = 0;
  };

  stream.on('data', (chunk: Buffer) => {
    let start = afterCarriageReturn && chunk[0] === LF ? 1 : 0; // the \n of a \r\n split across reads
    afterCarriageReturn = false;
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
      endLine();
      start = end + 1;
      if (chunk[end] === CR) {
        if (start === chunk.length) afterCarriageReturn = true;
        else if (chunk[start] === LF) start += 1;
      }
    }
  });
  stream.on('end', () => {
    if (size > 0) endLine();
  });
}

const LOG_LINE_MAX_BYTES = 64 * 1024;

/** A process's output as log lines; a line longer than 64 KiB is cut, and says so. */
export function readLogLines(stream: Readable, onLine: (line: string) => void): void {
  readLines(stream, {
    maxLineBytes: LOG_LINE_MAX_BYTES,
    onLine,
    onOverlongLine: (start) => onLine(`${start} [cut: the line is longer than ${LOG_LINE_MAX_BYTES / 1024} KiB]`),
  });
}
