import type { ServerResponse } from 'node:http';
import { registerAuth } from './auth.js';
import { registerCors } from './cors.js';
import { HttpApp } from './http/http-app.js';
import { registerOriginCheck } from './origin-check.js';
import { registerChatRoutes } from './chat/chat-routes.js';
import { registerDocsRoutes } from './docs-routes.js';
import { registerEndpointRoutes } from './endpoint-routes.js';
import type { ServiceSpecification } from './jobs/job-envelope.js';
import { registerHealthRoute } from './health-route.js';
import { registerJobRoutes } from './jobs/job-routes.js';
import { registerUnknownRouteAnswers } from './unknown-routes.js';
import { bodyParsers, bodyTooLarge } from './request-bodies.js';
import { wasDisconnectedStalled } from './stalled-client.js';
import type { GatewayOptions } from './gateway-options.js';

/**
 * The HTTP side of `svc start`: routing, body parsing, validation, docs, health, and the
 * single place where errors become the one error body shape. Features are plugins that
 * each own their routes.
 */
export function createGateway(options: GatewayOptions): HttpApp {
  const app = new HttpApp({ bodyLimit: options.maxBodyBytes, bodyTooLarge: () => bodyTooLarge(options.maxBodyBytes) });
  app.setBodyParsers(bodyParsers);
  registerUnknownRouteAnswers(app);

  if (options.onRequestLog) {
    const log = options.onRequestLog;
    // On the connection's close rather than when the answer is sent, which would miss
    // server-sent event streams and requests whose client left: those are the ones worth seeing.
    app.onRequest((request, reply, done) => {
      const response = reply.raw;
      response.once('close', () => log(requestLogLine(request.method, request.url, response, reply.elapsedTime)));
      done();
    });
  }

  const jobRoutes = {
    jobs: options.jobBackend,
    specification: serviceSpecification(options.title, options.version),
    publicUrl: options.jobs.publicUrl,
    maxWaitSeconds: options.jobs.maxWaitSeconds,
    sendTimeoutMs: options.sendTimeoutMs,
    ...(options.webhooks ? { webhookStatus: (id: string) => options.webhooks?.dispatcher.status(id) } : {}),
  };
  const corsOrigins = options.corsOrigins ?? [];
  // Before auth: a browser's preflight carries no key, and a page needs the answer's headers.
  if (corsOrigins.length > 0) registerCors(app, corsOrigins);
  registerOriginCheck(app, { corsOrigins, publicUrl: options.jobs.publicUrl });
  registerAuth(app, { keys: options.keys });
  registerHealthRoute(app, { runner: options.runner, jobs: options.jobBackend });
  registerDocsRoutes(app, { runner: options.runner, version: options.version, title: options.title, compute: options.compute });
  registerJobRoutes(app, jobRoutes);
  registerChatRoutes(app, options);
  registerEndpointRoutes(app, { ...options, jobRoutes });
  return app;
}

/** What the job envelope says of the service that ran the job. */
export function serviceSpecification(title: string, version: string): ServiceSpecification {
  return { service_id: title, version, hardware: process.env.NVIDIA_VISIBLE_DEVICES ? 'gpu' : 'cpu' };
}

/**
 * `POST /x 200 12ms`; `-` for a status never sent, and a note when the client left first, or
 * was let go for reading nothing (`--send-timeout`).
 */
function requestLogLine(method: string, url: string, response: ServerResponse, elapsedMs: number): string {
  const status = response.headersSent ? String(response.statusCode) : '-';
  const note = wasDisconnectedStalled(response)
    ? ' (disconnected: the client read nothing for --send-timeout)'
    : response.writableFinished
      ? ''
      : ' (the client left)';
  return `${method} ${url} ${status} ${Math.round(elapsedMs)}ms${note}`;
}
