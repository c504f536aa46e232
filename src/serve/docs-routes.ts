import type { HttpApp } from './http/http-app.js';
import type { Compute } from '../deployment-target.js';
import type { CallBackend } from './call-backend.js';
import { FAVICON_SVG, renderDocsPage } from './docs-page.js';
import { describeService } from './openapi.js';

const FAVICON_PATH = '/favicon.ico';

/**
 * `GET /openapi.json`, `GET /docs` and `GET /favicon.ico`; all stay open when auth is on.
 * The icon answers the request a browser makes on its own (SVG, which browsers take at that
 * path); a service's own endpoint at /favicon.ico keeps it.
 */
export function registerDocsRoutes(
  app: HttpApp,
  { runner, version, title, compute }: { runner: CallBackend; version: string; title: string; compute: Compute },
): void {
  const document = describeService({ title, version, compute, endpoints: runner.endpoints });
  const page = renderDocsPage(title);
  app.get('/openapi.json', () => document, { public: true });
  app.get('/docs', (_request, reply) => reply.type('text/html; charset=utf-8').send(page), { public: true });
  if (!runner.endpoints.some((endpoint) => endpoint.path.replace(/\/$/, '') === FAVICON_PATH)) {
    app.get(FAVICON_PATH, (_request, reply) => reply.type('image/svg+xml').header('cache-control', 'public, max-age=86400').send(FAVICON_SVG), { public: true });
  }
}
