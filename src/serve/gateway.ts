import type { ServerResponse } from 'node:http';
import cors from '@fastify/cors';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply } from 'fastify';
import { registerAuth } from './auth.js';
import { registerOriginCheck } from './origin-check.js';
import { registerChatRoutes } from './chat/chat-routes.js';
import { registerDocsRoutes } from './docs-routes.js';
import { registerEndpointRoutes } from './endpoint-routes.js';
import type { ServiceSpecification } from './jobs/job-envelope.js';
import { registerHealthRoute } from './health-route.js';
import { HttpError } from './http-error.js';
import { registerJobRoutes } from './jobs/job-routes.js';
import { registerUnknownRouteAnswers } from './unknown-routes.js';
import { bodyTooLarge, registerBodyParsers, unsupportedMediaType } from './request-bodies.js';
import { wasDisconnectedStalled } from './stalled-client.js';
import type { GatewayOptions } from './gateway-options.js';

/**
 * The HTTP side of `svc start`: routing, body parsing, validation, docs, health, and the
 * single place where errors become the one error body shape. Features are plugins that
 * each own their routes.
 */
export async function createGateway(options: GatewayOptions): Promise<FastifyInstance> {
  const sendError = (error: FastifyError | HttpError, reply: FastifyReply) => {
    const httpError = error instanceof HttpError ? error : fromFastifyError(error, options.maxBodyBytes);
    for (const [name, value] of Object.entries(httpError.extra.headers ?? {})) reply.header(name, value);
    return reply.code(httpError.status).send(httpError.toBody());
  };
  const app = Fastify({
    bodyLimit: options.maxBodyBytes,
    logger: false,
    return503OnClosing: true,
    // `/hello/` is `/hello`, as clients and proxies append slashes freely. A long job id or
    // model name reaches its route (and its 404) rather than a 414 from the router.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 1000 },
    // A URL the router cannot read (bad percent-encoding, an over-long parameter) is refused
    // before any route runs: in the one error shape too, not Fastify's own.
    frameworkErrors: (error, _request, reply) => sendError(error, reply),
  });
  registerBodyParsers(app);

  app.setErrorHandler((error: FastifyError | HttpError, _request, reply) => sendError(error, reply));
  registerUnknownRouteAnswers(app);

  if (options.onRequestLog) {
    const log = options.onRequestLog;
    // On the connection's close rather than Fastify's onResponse, which misses server-sent
    // event streams and requests whose client left: those are the ones worth seeing.
    app.addHook('onRequest', (request, reply, done) => {
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
  if (corsOrigins.length > 0) {
    // Before auth: a browser's preflight carries no key, and a page needs the answer's headers.
    await app.register(cors, {
      origin: corsOrigins.includes('*') ? '*' : [...corsOrigins],
      methods: ['GET', 'POST', 'OPTIONS'],
      allowedHeaders: ['authorization', 'content-type', 'accept', 'prefer', 'webhook', 'webhook-events-filter'],
      exposedHeaders: ['content-location', 'location', 'retry-after', 'preference-applied', 'x-should-retry'],
      maxAge: 600,
    });
  }
  await app.register(registerOriginCheck, { corsOrigins, publicUrl: options.jobs.publicUrl });
  await app.register(registerAuth, { keys: options.keys });
  await app.register(registerHealthRoute, { runner: options.runner, jobs: options.jobBackend });
  await app.register(registerDocsRoutes, { runner: options.runner, version: options.version, title: options.title, compute: options.compute });
  await app.register(registerJobRoutes, jobRoutes);
  await app.register(registerChatRoutes, options);
  await app.register(registerEndpointRoutes, { ...options, jobRoutes });
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

function fromFastifyError(error: FastifyError, maxBodyBytes: number): HttpError {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return bodyTooLarge(maxBodyBytes);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return unsupportedMediaType('this Content-Type');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new HttpError(400, 'invalid_request', 'invalid_body', error.message);
    default: {
      const status = error.statusCode ?? 500;
      if (status >= 400 && status < 500) return new HttpError(status, 'invalid_request', 'invalid_request', error.message);
      return new HttpError(500, 'internal_error', 'internal_error', `svc failed: ${error.message}`);
    }
  }
}
