import type { HttpApp } from '../http/http-app.js';
import type { HttpReply } from '../http/http-reply.js';
import type { HttpRequest } from '../http/http-request.js';
import { HttpError, methodNotAllowed } from '../http-error.js';
import { readPreferences } from '../prefer-header.js';
import { envelopeOf, sendEnvelope, streamJob, SVC_FRAMING, TOOLKIT_FRAMING, type JobStreamOptions } from './job-stream.js';
import type { Job } from './job.js';
import type { JobEnvelope } from './job-envelope.js';
import { isTerminal } from './job-status.js';
import { chooseResultForm } from '../accept-header.js';
import { mediaTypeOf, notAcceptable, offeredAs, sendResult } from '../result-answer.js';

export interface JobRoutesOptions extends JobStreamOptions {
  maxWaitSeconds: number;
}

/**
 * The job API: read a job, cancel it, and follow it as server-sent events, at svc's routes
 * (`/v1/jobs/{id}`, `/cancel`, `/stream`) and at the apipod toolkit's of each generation
 * (`/status?job_id=`, `/status/{id}`, `/cancel/{id}`, `/stream/{id}`). A job is visible only
 * to the key that created it; to anyone else it does not exist (404).
 */
export function registerJobRoutes(app: HttpApp, options: JobRoutesOptions): void {
  const { jobs } = options;

  const findJob = async (request: HttpRequest, id: string | undefined): Promise<Job> => {
    const job = id ? await jobs.find(id, request.apiKey?.id ?? null) : undefined;
    if (!job) throw new HttpError(404, 'not_found', 'unknown_job', `no job ${id ?? '(missing job_id)'}: it never existed, has expired, or belongs to another key`);
    return job;
  };

  const answer = async (request: HttpRequest, reply: HttpReply, found: Promise<Job>) => {
    let job = await found;
    const preferences = readPreferences(request.headers.prefer, options.maxWaitSeconds);
    if (preferences.waitSeconds !== null) {
      job = await jobs.waitUntilEnded(job, preferences.waitSeconds * 1000);
      reply.header('preference-applied', `wait=${preferences.waitSeconds}`);
    }
    return answerJob(request, reply, job, envelopeOf(request, job, options), options.sendTimeoutMs);
  };

  const cancel = async (request: HttpRequest, reply: HttpReply, id: string | undefined) => {
    const job = await jobs.cancel(await findJob(request, id));
    return sendEnvelope(reply, envelopeOf(request, job, options), options.sendTimeoutMs);
  };
  const follow = async (request: HttpRequest, reply: HttpReply, id: string | undefined, framing: typeof SVC_FRAMING) => {
    streamJob(request, reply, await findJob(request, id), options, { cancelWhenClientLeaves: false, framing });
  };

  app.get('/v1/jobs/:id', async (request, reply) => answer(request, reply, findJob(request, request.params.id)));
  app.post('/v1/jobs/:id/cancel', async (request, reply) => cancel(request, reply, request.params.id));
  app.get('/v1/jobs/:id/stream', async (request, reply) => follow(request, reply, request.params.id, SVC_FRAMING));

  // The apipod toolkit's routes, of each generation: 1.0.5's `POST /status?job_id=`, 1.0.6's
  // `/status/{id}`, `/cancel/{id}` and `/stream/{id}` (the envelope's `links`), with svc's
  // cancel behind them. A job id is read as the toolkit reads it: without the quotes and
  // stray `?` or `#` clients paste around it.
  app.get('/status', async (request, reply) => answer(request, reply, findJob(request, toolkitJobId(lastOf(request.query.job_id)))));
  app.post('/status', async (request, reply) => answer(request, reply, findJob(request, toolkitJobId(lastOf(request.query.job_id)))));
  app.get('/status/:id', async (request, reply) => answer(request, reply, findJob(request, toolkitJobId(request.params.id))));
  app.post('/cancel/:id', async (request, reply) => {
    const action = lastOf(request.query.action);
    if (action !== undefined && action !== 'cancel' && action !== 'interrupt') {
      throw new HttpError(422, 'validation_error', 'invalid_input', `action must be cancel or interrupt, not ${JSON.stringify(action)}`, {
        detail: [{ field: 'action', message: 'must be cancel or interrupt' }],
      });
    }
    return cancel(request, reply, toolkitJobId(request.params.id));
  });
  app.get('/stream/:id', async (request, reply) => follow(request, reply, toolkitJobId(request.params.id), TOOLKIT_FRAMING));

  // Another method on a job URL is a 405 naming those it takes, as on an endpoint's path.
  const jobUrls: ReadonlyArray<readonly [string, readonly string[]]> = [
    ['/v1/jobs/:id', ['GET']],
    ['/v1/jobs/:id/cancel', ['POST']],
    ['/v1/jobs/:id/stream', ['GET']],
    ['/status', ['GET', 'POST']],
    ['/status/:id', ['GET']],
    ['/cancel/:id', ['POST']],
    ['/stream/:id', ['GET']],
  ];
  for (const [url, allowed] of jobUrls) {
    const others = (['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const).filter((method) => !allowed.includes(method));
    app.route({
      method: [...others],
      url,
      handler: async (request) => {
        throw methodNotAllowed(request.method, request.url.split('?')[0] as string, [...allowed]);
      },
    });
  }
}

/**
 * A FINISHED job whose result is one media file answers with its bytes when Accept asks for
 * its type, as a dedicated call does; any other read, the envelope (JSON), or a 406 when
 * the client takes no JSON.
 */
function answerJob(request: HttpRequest, reply: HttpReply, job: Job, envelope: JobEnvelope, sendTimeoutMs: number): HttpReply {
  const { accept } = request.headers;
  const subject = `job ${job.id}`;
  const mediaType = job.status === 'FINISHED' ? mediaTypeOf(job.result) : null;
  if (mediaType !== null && chooseResultForm(accept, mediaType) === 'media') return sendResult(reply, accept, job.result, `the result of ${subject}`, sendTimeoutMs);
  if (chooseResultForm(accept, null) !== 'none') return sendEnvelope(reply, envelope, sendTimeoutMs);
  if (!isTerminal(job.status)) throw notAcceptable(accept, subject, `its JSON envelope (application/json) only while it is ${job.status}; its result's file once it ends FINISHED`);
  throw notAcceptable(accept, `the result of ${subject}`, job.status === 'FINISHED' ? offeredAs(mediaType) : `its JSON envelope (application/json) only: it ended ${job.status}`);
}

/** A query parameter given more than once counts by its last value, as the toolkit's server reads it. */
function lastOf(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[value.length - 1] : value;
}

function toolkitJobId(id: string | undefined): string | undefined {
  return id?.trim().replace(/^["'?#]+|["'?#]+$/g, '');
}
