import type { HttpApp } from './http/http-app.js';

const ALLOWED_METHODS = 'GET, POST, OPTIONS';
const ALLOWED_HEADERS = 'authorization, content-type, accept, prefer, webhook, webhook-events-filter';
const EXPOSED_HEADERS = 'content-location, location, retry-after, preference-applied, x-should-retry';
const PREFLIGHT_MAX_AGE_SECONDS = '600';

/**
 * CORS for the origins of --cors-origin (`*` for any), before auth: a browser's preflight
 * carries no key, and a page needs the answer's headers. An answer names the page's origin
 * when it is allowed (`*` when any is); a preflight (OPTIONS with Origin and
 * Access-Control-Request-Method) is answered 204 here, whatever the path; an OPTIONS that
 * is no preflight is a 400.
 */
export function registerCors(app: HttpApp, origins: readonly string[]): void {
  const anyOrigin = origins.includes('*');
  const allowed = new Set(origins);
  app.onRequest((request, reply, done) => {
    const { origin } = request.headers;
    if (!anyOrigin) reply.header('vary', 'Origin');
    const allowedOrigin = anyOrigin ? '*' : origin !== undefined && allowed.has(origin) ? origin : null;
    if (allowedOrigin !== null) reply.header('access-control-allow-origin', allowedOrigin);
    reply.header('access-control-expose-headers', EXPOSED_HEADERS);
    if (request.method !== 'OPTIONS') return done();
    if (origin === undefined || request.headers['access-control-request-method'] === undefined) {
      reply.code(400).type('text/plain').send('Invalid Preflight Request');
      return;
    }
    reply
      .header('access-control-allow-methods', ALLOWED_METHODS)
      .header('access-control-allow-headers', ALLOWED_HEADERS)
      .header('access-control-max-age', PREFLIGHT_MAX_AGE_SECONDS)
      .code(204)
      .send();
  });
}
