import type { HttpApp } from './http/http-app.js';
import type { HttpRequest } from './http/http-request.js';
import type { ApiKey, ApiKeys } from './api-keys.js';
import { HttpError } from './http-error.js';

const BEARER = /^Bearer +([\x21-\x7e]+)$/i; // the scheme is case-insensitive (RFC 7235)

/**
 * Bearer-key auth for every route not marked public (RFC 6750): 401 with WWW-Authenticate
 * when the key is missing, malformed or unknown; 403 when a known key may not call the
 * route's endpoint. Keys are never logged.
 */
export function registerAuth(app: HttpApp, { keys }: { keys: ApiKeys }): void {
  if (!keys.enabled) return;
  // A callback hook, not an async one: every request passes here, and a Promise for each costs.
  app.onRequest((request, _reply, done) => {
    // A browser's CORS preflight carries no key, and no endpoint answers OPTIONS.
    if (request.routeOptions.config.public || request.method === 'OPTIONS') return done();
    try {
      request.apiKey = authenticate(request, keys);
    } catch (error) {
      return done(error as HttpError);
    }
    const endpoint = request.routeOptions.config.endpoint;
    const allowed = request.apiKey.endpoints;
    if (endpoint !== undefined && allowed !== null && !allowed.has(endpoint)) {
      return done(new HttpError(403, 'permission_error', 'key_not_entitled', `this key may not call ${endpoint}`));
    }
    done();
  });
}

function authenticate(request: HttpRequest, keys: ApiKeys): ApiKey {
  const header = request.headers.authorization;
  if (header === undefined) {
    throw unauthorized('missing_key', 'send the service API key as "Authorization: Bearer <key>"', 'Bearer realm="svc"');
  }
  const match = BEARER.exec(header);
  if (!match) {
    throw unauthorized('malformed_key', 'the Authorization header must be "Bearer <key>"', 'Bearer realm="svc", error="invalid_request"');
  }
  const check = keys.check(match[1] as string);
  if (check.kind === 'unknown') {
    throw unauthorized('invalid_key', 'the API key is not valid for this service', 'Bearer realm="svc", error="invalid_token"');
  }
  return check.key;
}

function unauthorized(code: string, message: string, challenge: string): HttpError {
  return new HttpError(401, 'authentication_error', code, message, { headers: { 'www-authenticate': challenge } });
}
