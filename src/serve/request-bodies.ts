import { isAscii, isUtf8 } from 'node:buffer';
import type { BodyParser } from './http/http-app.js';
import type { RouteConfig } from './http/http-request.js';
import { MAX_VALUE_DEPTH, type LongString } from '../worker/protocol.js';
import { fieldPath, HttpError } from './http-error.js';
import { splitLongStrings } from './long-strings.js';

/**
 * An `application/x-www-form-urlencoded` body (what `curl -d name=Ada` sends): strings, to
 * be coerced to the endpoint's parameter types as a query string is.
 */
export class FormFields {
  constructor(readonly fields: Record<string, string | string[]>) {}
}

/**
 * A multipart/form-data body, left unread on the socket for the route to read as it stages
 * its files (request-arguments.ts): read as bytes, it would be held whole in memory.
 */
export class MultipartBody {}
const MULTIPART_BODY = new MultipartBody();

const JSON_MEDIA_TYPE = /^application\/([\w.+-]+\+)?json\s*(;|$)/i;
const MULTIPART_MEDIA_TYPE = /^multipart\/form-data\s*(;|$)/i;
const FORM_MEDIA_TYPE = /^application\/x-www-form-urlencoded\s*(;|$)/i;

/**
 * The bodies the gateway reads: JSON (with or without parameters such as `charset=utf-8`),
 * URL-encoded forms, and multipart (MultipartBody). Any other body is a 415:
 * taken for "no arguments", it would run the endpoint with its defaults and answer 200.
 * An empty body is no arguments whatever its type; the route knows whether that is enough.
 */
/** The bodies kept as the client sent them, by the value they parsed to (jsonTextOf). */
const bodyTexts = new WeakMap<object, Buffer>();
/** A JSON body at least this long is kept as bytes too: a call may forward it rather than serialise it again. */
const KEPT_BODY_BYTES = 64 * 1024;
const BYTE_ORDER_MARK = Buffer.from([0xef, 0xbb, 0xbf]);

/** The long strings taken out of a JSON body, by the value the rest parsed to (longStringsOf). */
const bodyLongStrings = new WeakMap<object, LongString[]>();

/** The bytes a large JSON object body came as (without a byte order mark), or undefined. */
export function jsonTextOf(value: unknown): Buffer | undefined {
  return typeof value === 'object' && value !== null ? bodyTexts.get(value) : undefined;
}

/**
 * The long strings a JSON body's value holds as `""`, their bytes kept apart (long-strings.ts):
 * only on a route whose config names `longStringParameters`, which must put them back.
 */
export function longStringsOf(value: unknown): LongString[] | undefined {
  return typeof value === 'object' && value !== null ? bodyLongStrings.get(value) : undefined;
}

export const bodyParsers: readonly BodyParser[] = [
  { mediaType: JSON_MEDIA_TYPE, reads: 'bytes', parse: (request, body) => parseJsonBody(body!, request.routeOptions.config) },
  {
    mediaType: FORM_MEDIA_TYPE,
    reads: 'bytes',
    parse: (_request, body) => {
      const text = orThrow(utf8Text(body!));
      return text.trim() === '' ? undefined : new FormFields(orThrow(formFields(text)));
    },
  },
  { mediaType: MULTIPART_MEDIA_TYPE, reads: 'stream', parse: () => MULTIPART_BODY },
  {
    mediaType: '*',
    reads: 'bytes',
    parse: (request, body) => {
      if (body!.length === 0) return undefined;
      const type = request.headers['content-type'];
      throw unsupportedMediaType(type === undefined ? 'a body without a Content-Type' : `Content-Type ${type}`);
    },
  },
];

function parseJsonBody(body: Buffer, { longStringParameters, base64Parameters }: RouteConfig): unknown {
  if (longStringParameters !== undefined && longStringParameters.size > 0 && body.length >= KEPT_BODY_BYTES) {
    if (!isUtf8(body)) throw notUtf8();
    const split = splitLongStrings(body, longStringParameters, base64Parameters);
    if (split !== null) {
      const value = parseJson(split.rest);
      throwIfProblem(jsonProblem(value));
      bodyLongStrings.set(value as object, split.strings);
      return value;
    }
  }
  const text = orThrow(utf8Text(body));
  if (text.trim() === '') return undefined;
  const value = parseJson(text);
  throwIfProblem(jsonProblem(value));
  if (body.length >= KEPT_BODY_BYTES && typeof value === 'object' && value !== null) {
    bodyTexts.set(value, body.subarray(0, 3).equals(BYTE_ORDER_MARK) ? body.subarray(3) : body);
  }
  return value;
}

function orThrow<T>(value: T | HttpError): T {
  if (value instanceof HttpError) throw value;
  return value;
}

function throwIfProblem(problem: HttpError | null): void {
  if (problem !== null) throw problem;
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });
const ASCII_CHECKED_BYTES = 4096;

/**
 * A body's text. Bytes that are not UTF-8 are refused rather than read as U+FFFD, which
 * would change the value on its way to the function (JSON is UTF-8 by RFC 8259, and so are
 * the forms browsers send from a UTF-8 page). A lone surrogate written as a JSON escape
 * (`"\ud800"`) is what the client sent, and reaches Python as such.
 */
function utf8Text(body: Buffer): string | HttpError {
  // ASCII reads the same as Latin-1, which Node copies into a string ~4x faster than a strict
  // decode for 1.6 MB (1.23 -> 0.29 ms); for a small body the extra check costs more than it saves.
  if (body.length >= ASCII_CHECKED_BYTES && isAscii(body)) return body.toString('latin1');
  try {
    return STRICT_UTF8.decode(body);
  } catch {
    return notUtf8();
  }
}

function notUtf8(): HttpError {
  return new HttpError(400, 'invalid_request', 'invalid_encoding', 'the body is not valid UTF-8: send its text encoded as UTF-8');
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new HttpError(400, 'invalid_request', 'invalid_json', `the body is not valid JSON: ${(error as Error).message}`);
  }
}

/**
 * What JSON.parse accepts but cannot pass on unchanged: nesting deeper than the protocol
 * carries (MAX_VALUE_DEPTH), and a number beyond a double's range (`1e999`), which
 * JavaScript reads as infinity and JSON would send on as null. `name` is where the value
 * came from: the body (null) or a form field. Walks with its own stack, so no depth of input
 * can overflow the call stack here, and to the end, so the answer says how deep it went.
 */
export function jsonProblem(root: unknown, name: string | null = null): HttpError | null {
  // One frame per array or object, none per element: a body of 200,000 numbers made 400,000
  // small objects here, which with their collection were most of ~130 ms of gateway CPU.
  type Frame = { container: unknown[] | { [key: string]: unknown }; keys: string[] | null; index: number };
  const frameOf = (container: object): Frame =>
    Array.isArray(container) ? { container, keys: null, index: 0 } : { container: container as { [key: string]: unknown }, keys: Object.keys(container), index: 0 };
  const stack: Frame[] = [];
  let deepest = 0;
  let beyondDouble: Array<string | number> | null = typeof root === 'number' && !Number.isFinite(root) ? [] : null;
  if (root !== null && typeof root === 'object') {
    stack.push(frameOf(root));
    deepest = 1;
  }
  walk: while (stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    const { container, keys } = frame;
    const length = keys === null ? (container as unknown[]).length : keys.length;
    while (frame.index < length) {
      const child = keys === null ? (container as unknown[])[frame.index] : (container as { [key: string]: unknown })[keys[frame.index]!];
      frame.index += 1;
      if (typeof child === 'number') {
        if (beyondDouble === null && !Number.isFinite(child)) beyondDouble = stack.map((open) => (open.keys === null ? open.index - 1 : open.keys[open.index - 1]!));
      } else if (child !== null && typeof child === 'object') {
        stack.push(frameOf(child));
        deepest = Math.max(deepest, stack.length);
        continue walk;
      }
    }
    stack.pop();
  }
  if (deepest > MAX_VALUE_DEPTH) {
    const what = name === null ? 'the body' : `the form field ${JSON.stringify(name)}`;
    return new HttpError(400, 'invalid_request', 'too_deep', `${what} nests arrays or objects ${deepest} levels deep, more than the ${MAX_VALUE_DEPTH} this server takes`);
  }
  if (beyondDouble !== null) {
    const field = fieldPath(beyondDouble, name ?? '') || '(the body)';
    return new HttpError(422, 'validation_error', 'invalid_input', `invalid input: ${field}: is a number beyond the range of a double, which would read as infinity`, {
      detail: [{ field, message: 'is a number beyond the range of a double, which would read as infinity' }],
    });
  }
  return null;
}

/**
 * `a=1&b=2&b=3` as {a: '1', b: ['2', '3']}, as Node's querystring reads it, but strictly: a
 * percent-escape that is no UTF-8 is refused rather than read as U+FFFD, and every field is
 * kept (querystring drops those past its 1,000th).
 */
function formFields(text: string): Record<string, string | string[]> | HttpError {
  // No prototype: a field named __proto__ is a field like any other.
  const fields: Record<string, string | string[]> = Object.create(null);
  for (const pair of text.split('&')) {
    if (pair === '') continue;
    const equals = pair.indexOf('=');
    const [rawName, rawValue] = equals < 0 ? [pair, ''] : [pair.slice(0, equals), pair.slice(equals + 1)];
    let name: string;
    let value: string;
    try {
      name = decodeURIComponent(rawName.replace(/\+/g, ' '));
      value = decodeURIComponent(rawValue.replace(/\+/g, ' '));
    } catch {
      return new HttpError(400, 'invalid_request', 'invalid_encoding', `the form field ${JSON.stringify(rawName)} is not valid percent-encoded UTF-8`);
    }
    const known = fields[name];
    if (known === undefined) fields[name] = value;
    else if (Array.isArray(known)) known.push(value);
    else fields[name] = [known, value];
  }
  return fields;
}

/** A body past --max-body-size, however it came (read whole, or a multipart form read as it arrives). */
export function bodyTooLarge(maxBodyBytes: number): HttpError {
  return new HttpError(
    413,
    'payload_too_large',
    'body_too_large',
    `the request body is larger than this server accepts (${maxBodyBytes / 2 ** 20} MiB; svc start --max-body-size MiB raises it)`,
  );
}

export function unsupportedMediaType(what: string): HttpError {
  return new HttpError(
    415,
    'unsupported_media_type',
    'unsupported_content_type',
    `${what} is not accepted: send application/json, application/x-www-form-urlencoded or multipart/form-data`,
  );
}
