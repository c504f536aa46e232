/**
 * Long strings of a JSON body, found without decoding them. A 2 MB string parameter costs
 * the gateway ~1.5 ms to decode as UTF-8 and ~1.8 ms to parse, and the worker ~2 ms to parse
 * again, though neither looks inside it: the gateway checks the bytes instead (valid UTF-8,
 * no escape, no control character, so the bytes are exactly the string's) and sends them
 * to the worker as they came (docs/worker-protocol.md, `texts`).
 */

import { hasControlByte } from '../worker/control-bytes.js';
import type { LongString } from '../worker/protocol.js';
import { HttpError } from './http-error.js';

/** A string this long (in bytes) is worth finding: below it, parsing costs less than the search. */
export const LONG_STRING_BYTES = 32 * 1024;


/**
 * A JSON object body (valid UTF-8, checked by the caller) as the rest of it, with `""` in
 * place of each long string, and those strings: a value of a top-level key in `parameters`,
 * at least LONG_STRING_BYTES long, with no backslash and no control character in it. Null
 * when the body is no such object, has no such string, or is not well formed: the caller
 * then parses it whole, which also says what is wrong with it.
 *
 * The strings of `base64Parameters` (media parameters, whose base64 the gateway decodes)
 * are not searched for control characters here, ~10 % of the gateway's work on a photo
 * sent as base64: a decode that succeeds shows there are none. One that is not decoded goes
 * through refuseControlBytes.
 */
export function splitLongStrings(
  body: Buffer,
  parameters: { has(key: string): boolean },
  base64Parameters: ReadonlySet<string> = NO_PARAMETERS,
): { rest: string; strings: LongString[] } | null {
  const pieces: string[] = [];
  const strings: LongString[] = [];
  let restStart = startOf(body);
  let at = skipSpace(body, restStart);
  if (body[at] !== OPEN_BRACE) return null;
  at = skipSpace(body, at + 1);
  if (body[at] === CLOSE_BRACE) return null;
  for (;;) {
    if (body[at] !== QUOTE) return null;
    const keyEnd = stringEnd(body, at);
    if (keyEnd === -1) return null;
    let key: unknown;
    try {
      key = JSON.parse(body.toString('utf8', at, keyEnd + 1));
    } catch {
      return null;
    }
    at = skipSpace(body, keyEnd + 1);
    if (body[at] !== COLON) return null;
    const valueStart = skipSpace(body, at + 1);
    const valueEnd = valueEndOf(body, valueStart);
    if (valueEnd === -1) return null;
    const checksControlBytes = typeof key === 'string' && !base64Parameters.has(key);
    if (typeof key === 'string' && parameters.has(key) && isPlainLongString(body, valueStart, valueEnd, checksControlBytes)) {
      // The same key twice: JSON.parse keeps the last; leave such a body to it.
      if (strings.some((string) => string.parameter === key)) return null;
      pieces.push(body.toString('utf8', restStart, valueStart), '""');
      strings.push({ parameter: key, bytes: body.subarray(valueStart + 1, valueEnd - 1) });
      restStart = valueEnd;
    }
    at = skipSpace(body, valueEnd);
    if (body[at] === COMMA) {
      at = skipSpace(body, at + 1);
      continue;
    }
    if (body[at] !== CLOSE_BRACE || skipSpace(body, at + 1) !== body.length) return null;
    break;
  }
  if (strings.length === 0) return null;
  pieces.push(body.toString('utf8', restStart));
  return { rest: pieces.join(''), strings };
}

/** Every key of an object: what splitLongStrings takes the long strings of in a job's arguments as a store wrote them. */
export const EVERY_KEY = { has: (_key: string) => true };

/**
 * A 400, as JSON.parse's for the whole body would be, when a string splitLongStrings left
 * unsearched (one of `base64Parameters`) holds a control character: JSON strings must escape them.
 */
export function refuseControlBytes(strings: readonly LongString[], base64Parameters: ReadonlySet<string>): void {
  for (const string of strings) {
    if (!base64Parameters.has(string.parameter) || !hasControlByte(string.bytes, 0, string.bytes.length)) continue;
    const message = `the body is not valid JSON: the string of ${JSON.stringify(string.parameter)} holds a control character, which JSON must escape (\\n, \\t, \\u0001)`;
    throw new HttpError(400, 'invalid_request', 'invalid_json', message);
  }
}

const NO_PARAMETERS: ReadonlySet<string> = new Set();
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;

/** After a byte order mark, which JSON.parse of the decoded text would not see either. */
function startOf(body: Buffer): number {
  return body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
}

function skipSpace(body: Buffer, at: number): number {
  while (at < body.length) {
    const byte = body[at];
    if (byte !== 0x20 && byte !== 0x0a && byte !== 0x0d && byte !== 0x09) break;
    at += 1;
  }
  return at;
}

/** The index of the quote that closes the string opening at `start`, or -1. */
function stringEnd(body: Buffer, start: number): number {
  let from = start + 1;
  for (;;) {
    const quote = body.indexOf(QUOTE, from);
    if (quote === -1) return -1;
    let backslashes = 0;
    while (body[quote - 1 - backslashes] === BACKSLASH) backslashes += 1;
    if (backslashes % 2 === 0) return quote;
    from = quote + 1;
  }
}

/** The index just past the value starting at `start` (skipped, not checked: JSON.parse checks the rest), or -1. */
function valueEndOf(body: Buffer, start: number): number {
  const first = body[start];
  if (first === QUOTE) {
    const end = stringEnd(body, start);
    return end === -1 ? -1 : end + 1;
  }
  if (first === OPEN_BRACE || first === OPEN_BRACKET) {
    let depth = 0;
    for (let at = start; at < body.length; at += 1) {
      const byte = body[at];
      if (byte === QUOTE) {
        at = stringEnd(body, at);
        if (at === -1) return -1;
      } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
        depth += 1;
      } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
        depth -= 1;
        if (depth === 0) return at + 1;
      }
    }
    return -1;
  }
  // A number, true, false or null: up to the next delimiter.
  let at = start;
  while (at < body.length && body[at] !== COMMA && body[at] !== CLOSE_BRACE && body[at] !== 0x20 && body[at] !== 0x0a && body[at] !== 0x0d && body[at] !== 0x09) at += 1;
  return at === start ? -1 : at;
}

/** `scheme://`: a URL a media parameter's string may be, which the gateway downloads, so it must see it. */
const URL_START = /^[a-z][a-z0-9+.-]*:\/\//i;

/**
 * A string value (`start` and `end` take in its quotes) long enough, whose bytes are its
 * characters (but for control characters, unless `checksControlBytes`), and no URL.
 */
function isPlainLongString(body: Buffer, start: number, end: number, checksControlBytes: boolean): boolean {
  if (body[start] !== QUOTE || end - start - 2 < LONG_STRING_BYTES || URL_START.test(body.toString('latin1', start + 1, start + 65))) return false;
  const backslash = body.indexOf(BACKSLASH, start + 1);
  return (backslash === -1 || backslash >= end - 1) && !(checksControlBytes && hasControlByte(body, start + 1, end - 1));
}
