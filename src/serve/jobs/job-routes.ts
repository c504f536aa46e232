import type { OutgoingHttpHeaders } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HttpError, methodNotAllowed } from '../http-error.js';
import { readPreferences } from '../prefer-header.js';
import { toEnvelope, type ServiceSpecification } from './job-envelope.js';
import type { JobRunner } from './job-runner.js';
import { isTerminal } from './job-status.js';
import type { JobStore } from './job-store.js';
import type { Job } from './job.js';

export interface JobRoutesOptions {
  store: JobStore;
  runner: JobRunner;
  specification: ServiceSpecification;
  /** The origin clients reach this server by; the request's own Host when null. */
  publicUrl: string | null;
  maxWaitSeconds: number;
}

/**
 * The job API: read a job (`GET /v1/jobs/{id}`, and the toolkit's `GET /status?job_id=`),
 * cancel it, and follow it as server-sent events. A job is visible only to the key that
 * created it; to anyone else it does not exist (404).
 */
export async function registerJobRoutes(app: FastifyInstance, options: JobRoutesOptions): Promise<void> {
  const { store, runner } = options;

  const findJob = (request: FastifyRequest, id: string | undefined): Job => {
    const job = id ? store.get(id, request.apiKey?.id ?? null) : undefined;
    if (!job) throw new HttpError(404, 'not_found', 'unknown_job', `no job ${id ?? '(missing job_id)'}: it never existed, has expired, or belongs to another key`);
    return job;
  };

  const answer = async (request: FastifyRequest, reply: FastifyReply, job: Job) => {
    const preferences = readPreferences(request.headers.prefer, options.maxWaitSeconds);
    if (preferences.waitSeconds !== null) {
      await store.waitUntilEnded(job, preferences.waitSeconds * 1000);
      reply.header('preference-applied', `wait=${preferences.waitSeconds}`);
    }
    return envelopeOf(request, job, options);
  };

  app.get<{ Params: { id: string } }>('/v1/jobs/:id', async (request, reply) => answer(request, reply, findJob(request, request.params.id)));
  app.get<{ Querystring: { job_id?: string } }>('/status', async (request, reply) =>
    answer(request, reply, findJob(request, request.query.job_id)),
  );
  app.post<{ Params: { id: string } }>('/v1/jobs/:id/cancel', async (request) => {
    const job = findJob(request, request.params.id);
    runner.cancel(job);
    return envelopeOf(request, job, options);
  });
  app.get<{ Params: { id: string } }>('/v1/jobs/:id/stream', async (request, reply) => {
    streamJob(request, reply, findJob(request, request.params.id), options, { cancelWhenClientLeaves: false });
  });
  // Another method on a job URL is a 405 naming the one it takes, as on an endpoint's path.
  for (const [url, allowed] of [['/v1/jobs/:id', 'GET'], ['/v1/jobs/:id/cancel', 'POST'], ['/v1/jobs/:id/stream', 'GET']] as const) {
    const others = (['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const).filter((method) => method !== allowed);
    app.route({
      method: [...others],
      url,
      handler: async (request) => {
        throw methodNotAllowed(request.method, request.url.split('?')[0] as string, [allowed]);
      },
    });
  }
}

export function envelopeOf(request: FastifyRequest, job: Job, options: Pick<JobRoutesOptions, 'publicUrl' | 'specification'>) {
  const baseUrl = options.publicUrl ?? `${request.protocol}://${request.host}`;
  return toEnvelope(job, baseUrl, options.specification);
}

/**
 * Server-sent events (the WHATWG EventSource format): `chunk` for every chunk (those sent
 * before the client connected first), `progress` on progress, and one final `status`
 * event with the whole envelope once the job ends; then the stream closes. A client that
 * submitted the call as a stream (`Accept: text/event-stream`) cancels it by leaving, as a
 * dedicated call's client does; one following a job it submitted otherwise does not.
 */
export function streamJob(
  request: FastifyRequest,
  reply: FastifyReply,
  job: Job,
  options: JobRoutesOptions,
  { cancelWhenClientLeaves }: { cancelWhenClientLeaves: boolean },
): void {
  reply.hijack();
  const response = reply.raw;
  response.writeHead(200, {
    // Headers set before the stream took over (CORS) go out with it; hijacked, Fastify would drop them.
    ...(reply.getHeaders() as OutgoingHttpHeaders),
    'content-type': 'text/event-stream; charset=utf-8',
    // Which job this is, from the first byte: the final `status` event says so only at the end.
    'content-location': `/v1/jobs/${job.id}`,
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  const send = (event: string, data: unknown) => response.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  let sentChunks = 0;
  let lastProgress: string | null = null;
  const flush = (current: Job): boolean => {
    for (; sentChunks < current.chunks.length; sentChunks++) send('chunk', current.chunks[sentChunks]);
    const progress = JSON.stringify([current.progress, current.message]);
    if (progress !== lastProgress) {
      lastProgress = progress;
      send('progress', { progress: current.progress, message: current.message, status: current.status });
    }
    if (!isTerminal(current.status)) return false;
    send('status', envelopeOf(request, current, options));
    response.end();
    return true;
  };
  if (flush(job)) return;
  const stop = options.store.watch(job, (changed) => {
    if (flush(changed)) stop();
  });
  response.on('close', () => {
    stop();
    if (!cancelWhenClientLeaves || isTerminal(job.status)) return;
    // Its caller is gone, and nobody else knows the job: watched until it ends, it is not
    // counted among the ended jobs a stopping server waits to have read.
    const forget = options.store.watch(job, (changed) => {
      if (isTerminal(changed.status)) forget();
    });
    options.runner.cancel(job);
  });
}
