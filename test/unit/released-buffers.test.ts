import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { releaseLongStrings, releaseOutcomeWhenSent } from '../../src/serve/released-buffers.js';
import { inlineFileReferences, mediaBytesOf } from '../../src/worker/file-references.js';
import { JsonText } from '../../src/worker/json-text.js';
import type { LongString } from '../../src/worker/protocol.js';

describe('a request lets go of its large buffers', () => {
  it('empties the long strings a call sent', () => {
    const strings: LongString[] = [{ parameter: 'text', bytes: Buffer.from('x'.repeat(40_000)) }];
    releaseLongStrings(strings);
    expect(strings[0]!.bytes.length).toBe(0);
    expect(() => releaseLongStrings(undefined)).not.toThrow();
  });

  it("lets go of a result's JSON text once answered, and says so if anything reads it after", () => {
    const text = new JsonText([Buffer.from('{"text":"'), Buffer.from('y'.repeat(40_000)), Buffer.from('"}')]);
    const response = new EventEmitter();
    releaseOutcomeWhenSent(response as ServerResponse, { kind: 'result', value: null, json: text });
    expect(text.pieces.length).toBe(3); // still being sent
    response.emit('close');
    expect(() => text.pieces).toThrow('a JSON text read after it was released');
    expect(text.length).toBe(40_011);
  });

  it("lets go of a media answer's file bytes once answered", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-release-'));
    try {
      const path = join(dir, 'out.png');
      await writeFile(path, Buffer.from('not really a png'));
      const value = await inlineFileReferences({ $file: { path, file_name: 'out.png', content_type: 'image/png' } }, dir, { maxChars: 1 << 20, usedChars: 0 });
      expect(mediaBytesOf(value)?.toString()).toBe('not really a png');
      const response = new EventEmitter();
      releaseOutcomeWhenSent(response as ServerResponse, { kind: 'result', value });
      expect(mediaBytesOf(value)?.length).toBe(16);
      response.emit('close');
      expect(mediaBytesOf(value)).toBeUndefined();
      expect(() => (value as { content: string }).content).toThrow('a media value read after its bytes were released');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('lets a job\'s result text go to where it is kept, reading it from there each time, for whoever holds it', () => {
    const text = new JsonText([Buffer.from('{"text":"'), Buffer.from('y'.repeat(40_000)), Buffer.from('"}')]);
    const heldBySomeoneElse = text;
    let kept = Buffer.concat(text.pieces);
    let reads = 0;
    text.keepElsewhere(() => {
      reads += 1;
      return [kept];
    });
    expect(heldBySomeoneElse.length).toBe(40_011);
    expect(Buffer.concat(heldBySomeoneElse.pieces).toString()).toBe(`{"text":"${'y'.repeat(40_000)}"}`);
    // Parsed each time, not kept parsed: that would hold the value in memory again.
    kept = Buffer.from(`{"text":"${'z'.repeat(40_000)}"}`);
    expect(text.value).toEqual({ text: 'z'.repeat(40_000) });
    expect(reads).toBe(2);
    text.release();
    expect(() => text.pieces).toThrow('a JSON text read after it was released');
  });

  it('adds no listener for a result that holds no such bytes', () => {
    const response = new EventEmitter();
    releaseOutcomeWhenSent(response as ServerResponse, { kind: 'result', value: { text: 'hello' } });
    releaseOutcomeWhenSent(response as ServerResponse, { kind: 'cancelled' });
    expect(response.listenerCount('close')).toBe(0);
  });
});
