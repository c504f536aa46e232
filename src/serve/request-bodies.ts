import { parse as parseQueryString } from 'node:querystring';
import type { FastifyInstance } from 'fastify';
import { HttpError } from './http-error.js';

/**
 * An `application/x-www-form-urlencoded` body (what `curl -d name=Ada` sends): strings, to
 * be coerced to the endpoint's parameter types as a query string is.
 */
export class FormFields {
  constructor(readonly fields: Record<string, string | string[]>) {}
}

/**
 * Deeper JSON is refused: svc's own recursive passes over arguments overflow the stack
 * somewhere past a thousand levels, and Python's json module (the worker's) fails near 1,000.
 */
export const MAX_JSON_DEPTH = 512;

const JSON_MEDIA_TYPE = /^application\/([\w.+-]+\+)?json\s*(;|$)/i;
const FORM_MEDIA_TYPE = /^application\/x-www-form-urlencoded\s*(;|$)/i;

/**
 * The bodies the gateway reads: JSON (with or without parameters such as `charset=utf-8`),
 * URL-encoded forms, and multipart (registered with its plugin). Any other body is a 415:
 * taken for "no arguments", it would run the endpoint with its defaults and answer 200.
 * An empty body is no arguments whatever its type; the route knows whether that is enough.
 */
export function registerBodyParsers(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(JSON_MEDIA_TYPE, { parseAs: 'string' }, (_request, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, undefined);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      return done(new HttpError(400, 'invalid_request', 'invalid_json', `the body is not valid JSON: ${(error as Error).message}`), undefined);
    }
    if (nestedDeeperThan(value, MAX_JSON_DEPTH)) {
      return done(new HttpError(400, 'invalid_request', 'too_deep', `the body nests arrays or objects more than ${MAX_JSON_DEPTH} levels deep`), undefined);
    }
    done(null, value);
  });
  app.addContentTypeParser(FORM_MEDIA_TYPE, { parseAs: 'string' }, (_request, body, done) => {
    const text = String(body);
    done(null, text.trim() === '' ? undefined : new FormFields({ ...parseQueryString(text) } as Record<string, string | string[]>));
  });
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (request, body, done) => {
    if ((body as Buffer).length === 0) return done(null, undefined);
    const type = request.headers['content-type'];
    done(unsupportedMediaType(type === undefined ? 'a body without a Content-Type' : `Content-Type ${type}`), undefined);
  });
}

/** Walks with its own stack, so no depth of input can overflow the call stack here. */
function nestedDeeperThan(root: unknown, limit: number): boolean {
  const pending: Array<[unknown, number]> = [[root, 0]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [value, depth] = next;
    if (value === null || typeof value !== 'object') continue;
    if (depth >= limit) return true;
    for (const child of Array.isArray(value) ? value : Object.values(value)) pending.push([child, depth + 1]);
  }
  return false;
}

export function unsupportedMediaType(what: string): HttpError {
  return new HttpError(
    415,
    'unsupported_media_type',
    'unsupported_content_type',
    `${what} is not accepted: send application/json, application/x-www-form-urlencoded or multipart/form-data`,
  );
}
