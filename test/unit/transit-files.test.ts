import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TransitFileWriter } from '../../src/worker/transit-files.js';

const dir = mkdtempSync(join(tmpdir(), 'svc-transit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** An upload's part as the multipart parser gives it: 64 KiB chunks, each with bytes of its own. */
async function* chunksOf(total: number): AsyncGenerator<Buffer> {
  for (let offset = 0; offset < total; offset += 64 * 1024) {
    const chunk = Buffer.alloc(Math.min(64 * 1024, total - offset));
    for (let index = 0; index < chunk.length; index += 4096) chunk.writeUInt32LE((offset + index) >>> 0, index);
    yield chunk;
  }
}

async function digestOf(chunks: AsyncIterable<Buffer>): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of chunks) hash.update(chunk);
  return hash.digest('hex');
}

/** Writes the chunks as readMultipart does: each written before the next is read. */
async function writeAll(path: string, chunks: AsyncIterable<Buffer>): Promise<number> {
  const writer = new TransitFileWriter(path);
  try {
    for await (const chunk of chunks) await writer.write(chunk);
    return writer.size;
  } finally {
    writer.close();
  }
}

describe('TransitFileWriter', () => {
  it('writes every chunk in order, on the event loop up to 8 MiB and through the pool past it, and says the size', async () => {
    for (const size of [0, 1_500_000, 9 * 1024 * 1024 + 123]) {
      const path = join(dir, `part-${size}`);
      expect(await writeAll(path, chunksOf(size))).toBe(size);
      expect(createHash('sha256').update(readFileSync(path)).digest('hex')).toBe(await digestOf(chunksOf(size)));
    }
  });
});
