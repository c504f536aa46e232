import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { readLines, readLogLines, type LineEnding } from '../../src/worker/line-reader.js';

/** The lines (and cut lines, marked) that the reader gives for these writes. */
async function linesOf(writes: (string | Buffer)[], maxLineBytes = 1024): Promise<string[]> {
  const stream = new PassThrough();
  const lines: string[] = [];
  readLines(stream, { maxLineBytes, onLine: (parts) => lines.push(Buffer.concat(parts).toString('utf8')), onOverlongLine: (start) => lines.push(`CUT ${start}`) });
  for (const write of writes) stream.write(write);
  stream.end();
  await once(stream, 'end');
  return lines;
}

describe('readLines', () => {
  it('hands a line that came in several reads on as views of those reads, not a copy', async () => {
    const stream = new PassThrough();
    const lines: Buffer[][] = [];
    readLines(stream, { maxLineBytes: 1 << 20, onLine: (parts) => lines.push(parts), onOverlongLine: () => {} });
    // Each its own memory, not Node's shared pool for small buffers, so that a copy would show.
    const reads = ['{"a":', '"long', ' text"}\nnext\n'].map((text) => Buffer.from(new TextEncoder().encode(text).buffer));
    for (const read of reads) stream.write(read);
    stream.end();
    await once(stream, 'end');
    expect(lines.map((parts) => parts.map((part) => part.toString()))).toEqual([['{"a":', '"long', ' text"}'], ['next']]);
    expect(lines[0]!.map((part, index) => part.buffer === reads[index]!.buffer)).toEqual([true, true, true]);
  });

  it('splits on \\n, \\r\\n and a lone \\r, as readline does', async () => {
    expect(await linesOf(['a\nb\r\nc\rd\n\n'])).toEqual(['a', 'b', 'c', 'd', '']);
  });

  it('joins a line written in pieces, a \\r\\n split between reads, and a character split between reads', async () => {
    const snowman = Buffer.from('☃');
    expect(await linesOf(['hel', 'lo\r', '\nwor', snowman.subarray(0, 1), snowman.subarray(1), 'ld\n'])).toEqual(['hello', 'wor☃ld']);
  });

  it('says how each line ended, a \\r\\n split between reads included', async () => {
    const stream = new PassThrough();
    const endings: [string, LineEnding][] = [];
    readLines(stream, { maxLineBytes: 1024, onLine: (parts, ending) => endings.push([Buffer.concat(parts).toString('utf8'), ending]), onOverlongLine: () => {} });
    for (const write of ['a\r', '\nb\r', 'c\rd\r\ne\r', '']) stream.write(write);
    stream.end('f');
    await once(stream, 'end');
    expect(endings).toEqual([
      ['a', 'newline'],
      ['b', 'carriage-return'],
      ['c', 'carriage-return'],
      ['d', 'newline'],
      ['e', 'carriage-return'],
      ['f', 'end-of-stream'],
    ]);
  });

  it('gives a line ended by \\r at the end of a read once no \\n follows within a moment, without waiting for more output', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const stream = new PassThrough();
      const endings: [string, LineEnding][] = [];
      readLines(stream, { maxLineBytes: 1024, onLine: (parts, ending) => endings.push([Buffer.concat(parts).toString('utf8'), ending]), onOverlongLine: () => {} });
      stream.write('loading model\r');
      await new Promise((resolve) => setImmediate(resolve));
      expect(endings).toEqual([]); // a \n may still come
      vi.advanceTimersByTime(50);
      expect(endings).toEqual([['loading model', 'carriage-return']]);
      stream.end('done\n');
      await once(stream, 'end');
      expect(endings.at(-1)).toEqual(['done', 'newline']);
    } finally {
      vi.useRealTimers();
    }
  });

  it('reads a last line that has no end', async () => {
    expect(await linesOf(['first\nlast'])).toEqual(['first', 'last']);
  });

  it('cuts a line longer than the limit, drops the rest of it, and goes on with the next line', async () => {
    expect(await linesOf(['0123', '456789abc', 'def\nnext\n'], 8)).toEqual(['CUT 01234567', 'next']);
    expect(await linesOf(['x'.repeat(20)], 8)).toEqual(['CUT xxxxxxxx']);
  });

  it('gives a line that never ends once, cut at the limit', async () => {
    const stream = new PassThrough();
    const cut: string[] = [];
    readLines(stream, { maxLineBytes: 1 << 20, onLine: () => {}, onOverlongLine: (start) => cut.push(start.toString('utf8')) });
    const megabyte = Buffer.alloc(1 << 20, 'z');
    for (let written = 0; written < 64; written++) stream.write(megabyte);
    stream.end();
    await once(stream, 'end');
    expect(cut.map((start) => start.length)).toEqual([1 << 20]);
  });
});

describe('readLogLines', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("logs a progress bar's redraws at most once a second, and its last state always", async () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    const stream = new PassThrough();
    const lines: string[] = [];
    readLogLines(stream, (line) => lines.push(line));
    const bar = (percent: number) => `\r${percent}%|${'#'.repeat(percent / 10)}|`;
    stream.write(['loading', '\n', bar(0), bar(10), bar(20)].join(''));
    vi.advanceTimersByTime(1000);
    stream.write([bar(30), bar(40), bar(100), '\n', 'done\n'].join(''));
    stream.end();
    await once(stream, 'end');
    // The empty redraw before the first bar is not a line; 0% and 20% (a second later) are.
    expect(lines).toEqual(['loading', '0%||', '20%|##|', '100%|##########|', 'done']);
  });
});
