import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { inlineFileReferences } from '../../src/worker/file-references.js';
import { JsonText } from '../../src/worker/json-text.js';
import type { Value } from '../../src/worker/protocol.js';
import { jsonChunks, smallJson } from '../../src/serve/json-chunks.js';

const SLICE = 64 * 1024;

describe('a JSON value written in pieces', () => {
  const values: Record<string, Value> = {
    'a short value in one piece': { a: [1, 2.5, -0, null, true, false, 'x'], b: {}, c: [], 'd"\n': '\u2028\ud800' },
    'a long text sliced': 'ab"\\\n\u0001'.repeat(SLICE),
    'a surrogate pair at every slice edge': `x${'😀'.repeat(SLICE * 2)}`,
    'a lone surrogate at a slice edge': `${'y'.repeat(SLICE - 1)}\ud800z`,
    'plain slices beside one to escape, and non-ASCII text that needs none': `${'plain é 漢 '.repeat(SLICE)}"${'q'.repeat(SLICE)}\u001f${'z'.repeat(SLICE)}`,
    'long texts inside containers': { image: 'A'.repeat(3 * SLICE + 7), list: ['b'.repeat(SLICE + 1), 'short', { c: 'c'.repeat(SLICE * 2) }] },
    'many small items': Array.from({ length: 50_000 }, (_, index) => ({ index, name: `item ${index}` })),
    // An envelope field left undefined: left out of an object, null in a list.
    'undefined beside long texts': { first: undefined, text: 'u'.repeat(SLICE + 1), list: [undefined, 1], last: undefined } as unknown as Value,
  };
  for (const [name, value] of Object.entries(values)) {
    it(`joins to what JSON.stringify writes: ${name}`, () => {
      const pieces = [...jsonChunks(value)];
      expect(pieces.join('')).toBe(JSON.stringify(value));
      // Escaped, a slice of text grows at most six times (\u0001); the rest stays near a slice.
      expect(Math.max(...pieces.map((piece) => piece.length))).toBeLessThanOrEqual(6 * SLICE + 64);
    });
  }

  it('tells a value small enough to write as one string from one to write in pieces', () => {
    const small = { greeting: 'Hello.', items: [1, 2, null], nested: { ok: true } };
    expect(smallJson(small)).toBe(JSON.stringify(small));
    expect(smallJson({ image: 'A'.repeat(SLICE) })).toBeNull();
    // Numbers count at their longest: 10,000 of them may take 240,000 characters.
    expect(smallJson(Array.from({ length: 10_000 }, () => -1.2345678901234567e-300))).toBeNull();
  });

  it('sends a result nested too deep for JSON.stringify in pieces, never to JSON.stringify', () => {
    let nested: Value = 'bottom';
    for (let depth = 0; depth < 5_000; depth++) nested = [nested];
    expect(smallJson(nested)).toBeNull();
  });

  it('writes a result nested deeper than the call stack goes', () => {
    let nested: Value = 'bottom';
    for (let depth = 0; depth < 200_000; depth++) nested = [nested];
    const text = [...jsonChunks(nested)].join('');
    expect(text).toBe(`${'['.repeat(200_000)}"bottom"${']'.repeat(200_000)}`);
  });

  it("writes a JSON text the worker wrote as its bytes, wherever it sits, and JSON.stringify writes its value", () => {
    // A job's envelope holding its large result: an integer beyond a double keeps every digit.
    const result = new JsonText([Buffer.from('{"id":18446744073709551617,"text":"'), Buffer.from('t'.repeat(3 * SLICE)), Buffer.from('"}')]);
    const envelope = { status: 'FINISHED', result, error: null };
    const written = Buffer.concat([...jsonChunks(envelope)].map((piece) => (typeof piece === 'string' ? Buffer.from(piece) : piece))).toString();
    expect(written).toBe(`{"status":"FINISHED","result":{"id":18446744073709551617,"text":"${'t'.repeat(3 * SLICE)}"},"error":null}`);
    expect(JSON.parse(JSON.stringify(envelope))).toEqual({ status: 'FINISHED', result: { id: 18446744073709551617, text: 't'.repeat(3 * SLICE) }, error: null });
    expect(smallJson(envelope)).toBeNull();
    // A small one goes into a small value's string as it is, its digits kept.
    expect(smallJson({ status: 'FINISHED', result: new JsonText([Buffer.from('{"id":18446744073709551617,"é":true}')]) }))
      .toBe('{"status":"FINISHED","result":{"id":18446744073709551617,"é":true}}');
  });

  it("writes a media value made from the worker's file as JSON.stringify would, its base64 made from the bytes in slices", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-chunks-'));
    try {
      const bytes = Buffer.from(Array.from({ length: 3 * SLICE + 2 }, (_, index) => (index * 7) % 256));
      await writeFile(join(dir, 'out.png'), bytes);
      const media = await inlineFileReferences({ $file: { path: join(dir, 'out.png'), file_name: 'out.png', content_type: 'image/png' } }, dir, { maxChars: 1 << 22, usedChars: 0 });
      const envelope = { status: 'FINISHED', result: { image: media, caption: 'a "quoted" caption' } };
      const expected = JSON.stringify({ status: 'FINISHED', result: { image: { file_name: 'out.png', content_type: 'image/png', content: bytes.toString('base64') }, caption: 'a "quoted" caption' } });
      const pieces = [...jsonChunks(envelope)];
      expect(pieces.join('')).toBe(expected);
      expect(smallJson(envelope)).toBeNull();
      await writeFile(join(dir, 'small.png'), Buffer.from('tiny'));
      const small = await inlineFileReferences({ $file: { path: join(dir, 'small.png'), file_name: null, content_type: null } }, dir, { maxChars: 1 << 22, usedChars: 0 });
      expect(smallJson({ image: small })).toBe(JSON.stringify({ image: small }));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
