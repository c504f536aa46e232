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
    try {
      done(null, JSON.parse(text));
    } catch (error) {
      done(new HttpError(400, 'invalid_request', 'invalid_json', `the body is not valid JSON: ${(error as Error).message}`), undefined);
    }
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

export function unsupportedMediaType(what: string): HttpError {
  return new HttpError(
    415,
    'unsupported_media_type',
    'unsupported_content_type',
    `${what} is not accepted: send application/json, application/x-www-form-urlencoded or multipart/form-data`,
  );
}
