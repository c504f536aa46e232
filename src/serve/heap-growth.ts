import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the gateway's heap grow past what the last full collection kept before it
 * collects again: 6x, fixed (V8's own heuristics choose 1.1x to 4x by how cheap collection has
 * been). V8 counts the Buffers a request allocates (its body, the worker's answer: ~6 MB for a
 * 2 MB payload) against a limit sized for the gateway's ~8 MB heap. At its own factor it ran a
 * full mark-compact every two or three large requests, 3-4 ms each (bench/RESULTS.md, run 4);
 * at 4x, once the heap shrank from ~12 MB (Fastify gone, run 25), one every six requests, and
 * the 2 MB echo lost a quarter of its speed; at 6x, two in 764. The cost is memory held as
 * garbage between collections, at most five times what the heap keeps live: ~40 MB, as 4x
 * of the larger heap held.
 */
const HEAP_GROWING_PERCENT = 500;

/**
 * Sets the growth for the gateway's process. svc serves in the process the user started, too
 * late for `--initial-heap-size`; this flag is read at each collection, so it still takes effect.
 */
export function letHeapGrowForPayloads(): void {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
