import type { HttpApp } from './http/http-app.js';
import { HttpError, methodNotAllowed } from './http-error.js';
import { withoutTrailingSlash } from './route-aliases.js';

/**
 * Answers for a request no route takes: 405 with `Allow` where the path is served under
 * other methods, 404 otherwise, both in the one error shape. The methods are those of every
 * route (endpoints, their aliases and /v1 copies, chat, models, docs), so no plugin keeps
 * its own list. Parametric routes (`/status/:id`) answer their own 405s.
 */
export function registerUnknownRouteAnswers(app: HttpApp): void {
  app.setNotFoundHandler(async (request) => {
    const path = request.url.split('?')[0] as string;
    const allowed = app.methodsAt(path) ?? app.methodsAt(withoutTrailingSlash(path));
    if (allowed) throw methodNotAllowed(request.method, path, allowed);
    throw new HttpError(404, 'not_found', 'unknown_route', `no endpoint at ${request.method} ${path}; see /docs for the endpoints`);
  });
}
