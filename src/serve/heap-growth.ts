import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the gateway's heap grow past what the last full collection kept before it
 * collects again: 4x, the most V8's own heuristics ever choose (its growing factor ranges from
 * 1.1 to 4 by how cheap collection has been), fixed. V8 counts the Buffers a request allocates
 * (its body, the worker's answer: ~6 MB for a 2 MB payload) against a limit sized for the
 * gateway's ~12 MB heap, and at its own factor ran a full mark-compact every two or three large
 * requests, 3-4 ms each (bench/RESULTS.md, run 4). The cost is memory held as garbage between
 * collections: at most three times what the heap keeps live.
 */
const HEAP_GROWING_PERCENT = 300;

/**
 * Sets the growth for the gateway's process. svc serves in the process the user started, too
 * late for `--initial-heap-size`; this flag is read at each collection, so it still takes effect.
 */
export function letHeapGrowForPayloads(): void {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
