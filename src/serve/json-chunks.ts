import { base64Chars, fileBytesAt } from '../worker/file-references.js';
import { JsonText } from '../worker/json-text.js';
import type { Value } from '../worker/protocol.js';

/**
 * A value to write as JSON, which may hold JSON text already written: a job's result as the
 * worker wrote it goes into its envelope as those bytes, neither parsed nor serialised again.
 */
export type JsonTree = Value | JsonText | JsonTree[] | { [key: string]: JsonTree };

/** The largest slice of a JSON text handed to the socket at once. */
export const TEXT_SLICE_BYTES = 1 << 20;

/** Most characters of a string serialised at once: a large text is sent slice by slice. */
const STRING_SLICE_CHARS = 64 * 1024;

/** The longest a JSON number, true, false or null is written (-1.2345678901234567e-300). */
const NUMBER_CHARS = 24;
/**
 * What an array or object counts for in `smallJson`: more than its brackets, so that
 * JSON.stringify, which recurses, never meets more than 2,048 of them (Node's stack
 * overflows near 4,500 levels).
 */
const CONTAINER_CHARS = 32;

type Pending = { kind: 'value'; value: JsonTree } | { kind: 'text'; text: string } | { kind: 'base64'; bytes: Buffer };

/** Bytes base64-encoded at once: a multiple of 3, so the slices' base64 joins to the whole's. */
const BASE64_SLICE_BYTES = (STRING_SLICE_CHARS / 4) * 3;

/**
 * A JSON value's text in pieces, which joined are `JSON.stringify(value)`: a response is
 * written piece by piece as the client reads it, so a 40 MB result is never held a second
 * time as one string (nor a third in the socket's queue) for a client that does not read.
 * A piece is a string's slice of at most 64 Ki characters (escaped, up to six times that),
 * the punctuation and short values between them, or a slice of a JsonText's bytes. Walked
 * with a stack of its own, as a deeply nested result would overflow the call stack. Values
 * come from JSON (the worker's pipe) or are svc's own job envelopes, so there is no `toJSON`
 * (but JsonText's) or non-finite number to consider; an `undefined` is written as
 * JSON.stringify writes it, should an envelope field ever be left so.
 */
export function* jsonChunks(value: JsonTree): Generator<string | Buffer, void, undefined> {
  const pending: Pending[] = [{ kind: 'value', value }];
  let buffered = '';
  while (pending.length > 0) {
    const next = pending.pop() as Pending;
    if (next.kind === 'text') {
      buffered += next.text;
    } else if (next.kind === 'base64') {
      if (buffered !== '') yield buffered;
      buffered = '"';
      for (let start = 0; start < next.bytes.length; start += BASE64_SLICE_BYTES) {
        yield buffered + next.bytes.toString('base64', start, start + BASE64_SLICE_BYTES);
        buffered = '';
      }
      buffered += '"';
    } else if (typeof next.value === 'string' && next.value.length > STRING_SLICE_CHARS) {
      if (buffered !== '') yield buffered;
      buffered = '';
      yield* stringChunks(next.value);
    } else if (next.value instanceof JsonText) {
      if (buffered !== '') yield buffered;
      buffered = '';
      yield* next.value.slices(TEXT_SLICE_BYTES);
    } else if (Array.isArray(next.value)) {
      pending.push({ kind: 'text', text: ']' });
      for (let index = next.value.length - 1; index >= 0; index--) {
        pending.push({ kind: 'value', value: next.value[index] as JsonTree });
        if (index > 0) pending.push({ kind: 'text', text: ',' });
      }
      pending.push({ kind: 'text', text: '[' });
    } else if (next.value !== null && typeof next.value === 'object') {
      const object = next.value as { [key: string]: JsonTree | undefined };
      // As JSON.stringify does: a key whose value is undefined is left out.
      const keys = Object.keys(object).filter((key) => object[key] !== undefined);
      pending.push({ kind: 'text', text: '}' });
      for (let index = keys.length - 1; index >= 0; index--) {
        const key = keys[index] as string;
        // A media value made from the worker's file: its base64 is written from the file's
        // bytes, never made into one string nor searched for characters to escape.
        const bytes = fileBytesAt(object, key);
        pending.push(bytes !== undefined ? { kind: 'base64', bytes } : { kind: 'value', value: object[key] as JsonTree });
        pending.push({ kind: 'text', text: `${index > 0 ? ',' : ''}${JSON.stringify(key)}:` });
      }
      pending.push({ kind: 'text', text: '{' });
    } else {
      // An array's undefined item is null, as JSON.stringify writes it.
      buffered += next.value === undefined ? 'null' : JSON.stringify(next.value);
    }
    if (buffered.length >= STRING_SLICE_CHARS) {
      yield buffered;
      buffered = '';
    }
  }
  if (buffered !== '') yield buffered;
}

/**
 * A value's JSON as a job store keeps it: text when it is small; when large, its UTF-8 bytes
 * (a SQLite BLOB, a Redis string), into which the worker's text of a result and a client's
 * long string are copied as they are, rather than decoded and serialised again.
 */
export function storedJson(value: JsonTree): string | Buffer {
  if (value instanceof JsonText) return value.joined();
  const small = smallJson(value);
  if (small !== null) return small;
  return Buffer.concat([...jsonChunks(value)].map((piece) => (typeof piece === 'string' ? Buffer.from(piece) : piece)));
}

/**
 * A value's JSON text as one string when it is short enough, else null: about 64 Ki
 * characters, its strings and keys counted by their length, a number by the longest one
 * takes, a container by CONTAINER_CHARS. Stops as soon as the budget is spent, so it costs a
 * large value next to nothing, and a small one (a job envelope) a fraction of serialising it.
 * JSON text it holds (a job's result as the worker wrote it) goes in as it is, never parsed
 * and serialised again: so an integer beyond 2^53 keeps its digits.
 */
export function smallJson(value: JsonTree): string | null {
  let budget = STRING_SLICE_CHARS;
  let holdsText = false;
  const pending: JsonTree[] = [value];
  while (pending.length > 0 && budget >= 0) {
    const next = pending.pop() as JsonTree;
    if (typeof next === 'string') {
      budget -= next.length + 2;
    } else if (next instanceof JsonText) {
      budget -= next.length;
      holdsText = true;
    } else if (Array.isArray(next)) {
      budget -= CONTAINER_CHARS;
      for (const item of next) pending.push(item);
    } else if (next !== null && typeof next === 'object') {
      budget -= CONTAINER_CHARS;
      for (const key in next) {
        budget -= key.length + 4;
        const bytes = fileBytesAt(next, key);
        if (bytes !== undefined) budget -= base64Chars(bytes.length);
        else pending.push(next[key] as JsonTree);
      }
    } else {
      budget -= NUMBER_CHARS;
    }
  }
  if (budget < 0) return null;
  return holdsText ? joinedChunks(value) : JSON.stringify(value);
}

/** A value's JSON as one string, however large, JSON text it holds written as it is (smallJson). */
export function jsonString(value: JsonTree): string {
  return smallJson(value) ?? joinedChunks(value);
}

function joinedChunks(value: JsonTree): string {
  let text = '';
  for (const piece of jsonChunks(value)) text += typeof piece === 'string' ? piece : piece.toString('utf8');
  return text;
}

/**
 * A character JSON.stringify would write otherwise than as itself: a quote, a backslash, a
 * control character, or half of a surrogate pair (a lone one is escaped; a slice with a pair
 * is left to JSON.stringify too, which keeps it).
 */
const ESCAPED_OR_SURROGATE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** A long string as quoted JSON in slices; a slice never ends between a surrogate pair's halves. */
function* stringChunks(text: string): Generator<string, void, undefined> {
  yield '"';
  for (let start = 0; start < text.length; ) {
    let end = Math.min(start + STRING_SLICE_CHARS, text.length);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end -= 1;
    const slice = text.slice(start, end);
    // Most slices need no escape: testing for one costs a third of writing them escaped.
    yield ESCAPED_OR_SURROGATE.test(slice) ? JSON.stringify(slice).slice(1, -1) : slice;
    start = end;
  }
  yield '"';
}
