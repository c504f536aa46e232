/**
 * Whether bytes hold a control character (below 0x20), which a JSON string must escape: the
 * gateway asks it of every long string, once of a request's (long-strings.ts) and once of a
 * result's (json-text.ts), and for a 2 MB string the question was ~0.3 ms each, the largest
 * piece of JavaScript in the gateway's work on such a call. WebAssembly compares sixteen bytes
 * at once (control-bytes.wat): the bytes are copied into its memory a chunk at a time and
 * searched there, ~0.16 ms for 2 MB in a loop, copies included, and ~0.2 ms in the server,
 * where the bytes are no longer in cache (bench/RESULTS.md, run 10). Where WebAssembly or its SIMD
 * instructions are missing (`node --jitless`, a CPU without SSE4.1), a word-at-a-time search
 * in JavaScript answers instead.
 */

/** control-bytes.wat compiled by wabt (test/unit/control-bytes.test.ts checks they agree). */
export const CONTROL_BYTES_WASM = Buffer.from(
  'AGFzbQEAAAABBgFgAX8BfwMCAQAFAwEAAQcbAgZtZW1vcnkCAA5oYXNDb250cm9sQnl0ZQAACoYBAYMBAgF/AXtBIP0PIQICQANAIAFBwABqIABLDQEgAf0ABAAgAv0mIAH9AAQQIAL9Jv1QIAH9AAQgIAL9JiAB/QAEMCAC/Sb9UP1Q/VMEQEEBDwsgAUHAAGohAQwACwsCQANAIAEgAE8NASABLQAAQSBJBEBBAQ8LIAFBAWohAQwACwtBAAs=',
  'base64',
);

/** The module's one page of memory: a chunk of the bytes is copied there and searched. */
const CHUNK_BYTES = 64 * 1024;
/** Below this, copying into WebAssembly's memory costs more than searching in place. */
const SHORT_BYTES = 512;

type Search = (bytes: Uint8Array, start: number, end: number) => boolean;

/** Whether a byte below 0x20 lies in [start, end) of `bytes`. */
export function hasControlByte(bytes: Uint8Array, start: number, end: number): boolean {
  if (end - start < SHORT_BYTES) return hasControlByteWordwise(bytes, start, end);
  return longSearch()(bytes, start, end);
}

/** Which search runs on long bytes: 'webassembly' on any machine svc targets. */
export function controlByteSearch(): 'webassembly' | 'javascript' {
  return longSearch() === hasControlByteWordwise ? 'javascript' : 'webassembly';
}

/** Set up at the first long search, so a service that never gets one never compiles the module. */
let searchLong: Search | null = null;

function longSearch(): Search {
  searchLong ??= webAssemblySearch() ?? hasControlByteWordwise;
  return searchLong;
}

interface WebAssemblyRuntime {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: { memory: { buffer: ArrayBuffer }; hasControlByte: (length: number) => number } };
}

function webAssemblySearch(): Search | null {
  const runtime = (globalThis as { WebAssembly?: WebAssemblyRuntime }).WebAssembly;
  if (runtime === undefined) return null;
  let exports: InstanceType<WebAssemblyRuntime['Instance']>['exports'];
  try {
    exports = new runtime.Instance(new runtime.Module(CONTROL_BYTES_WASM)).exports;
  } catch {
    // A runtime without SIMD refuses the module when compiling it.
    return null;
  }
  const memory = new Uint8Array(exports.memory.buffer, 0, CHUNK_BYTES);
  const search = exports.hasControlByte;
  return (bytes, start, end) => {
    for (let at = start; at < end; at += CHUNK_BYTES) {
      const chunkEnd = Math.min(at + CHUNK_BYTES, end);
      memory.set(bytes.subarray(at, chunkEnd));
      if (search(chunkEnd - at) !== 0) return true;
    }
    return false;
  };
}

/**
 * The search in JavaScript. Four bytes at a time, eight words to a test:
 * `(word - 0x20202020) & ~word & 0x80808080` is non-zero exactly when one of the word's bytes
 * is below 0x20 ("hasless" of Bit Twiddling Hacks), and one branch for eight words takes
 * ~0.28 ms for 2 MB where one a word took ~0.55 ms.
 */
export function hasControlByteWordwise(bytes: Uint8Array, start: number, end: number): boolean {
  let at = start;
  while (at < end && (bytes.byteOffset + at) % 4 !== 0) {
    if (bytes[at]! < 0x20) return true;
    at += 1;
  }
  const words = Math.floor((end - at) / 4);
  if (words > 0) {
    const view = new Int32Array(bytes.buffer, bytes.byteOffset + at, words);
    const eights = words - (words % 8);
    let index = 0;
    for (; index < eights; index += 8) {
      const a = view[index]!, b = view[index + 1]!, c = view[index + 2]!, d = view[index + 3]!;
      const e = view[index + 4]!, f = view[index + 5]!, g = view[index + 6]!, h = view[index + 7]!;
      const below =
        ((a - 0x20202020) & ~a) | ((b - 0x20202020) & ~b) | ((c - 0x20202020) & ~c) | ((d - 0x20202020) & ~d) |
        ((e - 0x20202020) & ~e) | ((f - 0x20202020) & ~f) | ((g - 0x20202020) & ~g) | ((h - 0x20202020) & ~h);
      if ((below & 0x80808080) !== 0) return true;
    }
    for (; index < words; index += 1) {
      const word = view[index]!;
      if (((word - 0x20202020) & ~word & 0x80808080) !== 0) return true;
    }
    at += words * 4;
  }
  while (at < end) {
    if (bytes[at]! < 0x20) return true;
    at += 1;
  }
  return false;
}
