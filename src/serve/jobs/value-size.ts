import { base64Chars, fileBytesAt } from '../../worker/file-references.js';
import { JsonText } from '../../worker/json-text.js';
import type { JsonTree } from '../json-chunks.js';

/** What a number, null, boolean or container costs beside its contents, roughly. */
const SLOT_BYTES = 16;

/**
 * Roughly the memory a JSON value holds: its strings' lengths (a base64 image is nearly
 * all of a result) plus a slot per item. Walked with a stack of its own, as a deeply
 * nested result would overflow the call stack.
 */
export function approximateBytes(value: JsonTree): number {
  let total = 0;
  const pending: JsonTree[] = [value];
  while (pending.length > 0) {
    const next = pending.pop() as JsonTree;
    if (typeof next === 'string') {
      total += next.length;
    } else if (next instanceof JsonText) {
      total += next.length;
    } else if (Array.isArray(next)) {
      total += SLOT_BYTES;
      for (const item of next) pending.push(item);
    } else if (next !== null && typeof next === 'object') {
      total += SLOT_BYTES;
      for (const key of Object.keys(next)) {
        total += key.length;
        // A media value made from the worker's file counts its base64 without making it.
        const bytes = fileBytesAt(next, key);
        if (bytes !== undefined) total += base64Chars(bytes.length);
        else pending.push((next as { [key: string]: JsonTree })[key] as JsonTree);
      }
    } else {
      total += SLOT_BYTES;
    }
  }
  return total;
}
