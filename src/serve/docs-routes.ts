import type { FastifyInstance } from 'fastify';
import type { Compute } from '../deployment-target.js';
import type { CallBackend } from './call-backend.js';
import { renderDocsPage } from './docs-page.js';
import { describeService } from './openapi.js';

/** `GET /openapi.json` and `GET /docs`; both stay open when auth is on. */
export async function registerDocsRoutes(
  app: FastifyInstance,
  { runner, version, title, compute }: { runner: CallBackend; version: string; title: string; compute: Compute },
): Promise<void> {
  const document = describeService({ title, version, compute, endpoints: runner.endpoints });
  const page = renderDocsPage(title);
  app.get('/openapi.json', { config: { public: true } }, async () => document);
  app.get('/docs', { config: { public: true } }, async (_request, reply) => reply.type('text/html; charset=utf-8').send(page));
}
