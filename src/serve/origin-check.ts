import type { HttpApp } from './http/http-app.js';
import type { HttpRequest } from './http/http-request.js';
import { HttpError } from './http-error.js';

/** Methods a browser sends from another site's page without asking first, and that run an endpoint. */
const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Refuses a call a web page of another origin makes (a form POST, which no CORS preflight
 * precedes): without it, any page a user visits could run this service's endpoints from the
 * user's browser, key or no key. A browser names the page's origin in `Origin`; clients that
 * are no browser (curl, SDKs) send none and pass. Allowed: the service's own origin (its
 * /docs page), the one of --public-url, and those of --cors-origin.
 */
export function registerOriginCheck(app: HttpApp, { corsOrigins, publicUrl }: { corsOrigins: readonly string[]; publicUrl: string | null }): void {
  if (corsOrigins.includes('*')) return;
  const allowed = new Set(corsOrigins);
  if (publicUrl !== null) allowed.add(new URL(publicUrl).origin);
  // A callback hook, not an async one: every request passes here, and a Promise for each costs.
  app.onRequest((request, _reply, done) => {
    const origin = request.headers.origin;
    if (origin === undefined || SAFE_METHODS.has(request.method) || allowed.has(origin) || origin === ownOrigin(request)) return done();
    done(
      new HttpError(
        403,
        'permission_error',
        'origin_not_allowed',
        `a web page from ${origin} may not call this service; start it with --cors-origin ${origin} to let it`,
      ),
    );
  });
}

function ownOrigin(request: HttpRequest): string {
  return `${request.protocol}://${request.host}`;
}
