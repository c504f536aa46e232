import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import wabtInit from 'wabt';
import { CONTROL_BYTES_WASM, controlByteSearch, hasControlByte, hasControlByteWordwise } from '../../src/worker/control-bytes.js';

const reference = (bytes: Uint8Array, start: number, end: number) => bytes.subarray(start, end).some((value) => value < 0x20);

describe('control-bytes.wat', () => {
  it('is what control-bytes.ts embeds, compiled', async () => {
    const wabt = await wabtInit();
    const source = readFileSync(new URL('../../src/worker/control-bytes.wat', import.meta.url), 'utf8');
    const compiled = wabt.parseWat('control-bytes.wat', source, { simd: true }).toBinary({}).buffer;
    expect(Buffer.from(compiled).toString('base64')).toBe(CONTROL_BYTES_WASM.toString('base64'));
  });

  it('is the search long bytes get on this Node', () => {
    expect(controlByteSearch()).toBe('webassembly');
  });
});

describe('without WebAssembly (node --jitless)', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.resetModules();
  });

  it('searches long bytes in JavaScript instead, and finds the same', async () => {
    vi.stubGlobal('WebAssembly', undefined);
    vi.resetModules();
    const fresh = await import('../../src/worker/control-bytes.js');
    const bytes = Buffer.alloc(200_000, 0x61);
    expect(fresh.hasControlByte(bytes, 0, bytes.length)).toBe(false);
    bytes[150_000] = 0x09;
    expect(fresh.hasControlByte(bytes, 0, bytes.length)).toBe(true);
    expect(fresh.controlByteSearch()).toBe('javascript');
  });
});

describe.each([
  ['hasControlByte', hasControlByte],
  ['the JavaScript search', hasControlByteWordwise],
])('%s', (_name, search) => {
  it('agrees with a byte-by-byte check at every offset and alignment', () => {
    const backing = Buffer.alloc(1024 + 3, 0x61);
    for (const shift of [0, 1, 2, 3]) {
      const bytes = backing.subarray(shift, shift + 1024);
      for (let position = 0; position < 1024; position += 1) {
        for (const byte of [0x00, 0x1f, 0x20, 0x7f, 0x80, 0xff]) {
          bytes.fill(0x61);
          bytes[position] = byte;
          for (const [start, end] of [[0, 1024], [position, 1024], [0, position], [3, 1021], [position + 1, 1024]] as const) {
            if (search(bytes, start, end) !== reference(bytes, start, end)) {
              throw new Error(`byte ${byte} at ${position}, shift ${shift}, range [${start}, ${end}): expected ${reference(bytes, start, end)}`);
            }
          }
        }
      }
    }
  });

  it('finds a control byte on either side of every 64 KiB chunk, and only inside the range', () => {
    const bytes = Buffer.alloc(3 * 65536 + 100, 0x61);
    for (const position of [0, 63, 64, 65535, 65536, 65537, 131071, 131072, 196607, 196608, bytes.length - 1]) {
      bytes.fill(0x61);
      bytes[position] = 0x0a;
      expect(search(bytes, 0, bytes.length)).toBe(true);
      expect(search(bytes, 0, position)).toBe(false);
      expect(search(bytes, position + 1, bytes.length)).toBe(false);
      expect(search(bytes, Math.max(0, position - 70000), position + 1)).toBe(true);
    }
    bytes.fill(0x61);
    expect(search(bytes, 0, bytes.length)).toBe(false);
  });
});
