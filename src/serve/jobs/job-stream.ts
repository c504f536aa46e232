import type { OutgoingHttpHeaders } from 'node:http';
import type { HttpReply } from '../http/http-reply.js';
import type { HttpRequest } from '../http/http-request.js';
import type { Value } from '../../worker/protocol.js';
import { jsonString, type JsonTree } from '../json-chunks.js';
import { sendJson } from '../json-reply.js';
import { disconnectWhenStalled } from '../stalled-client.js';
import { toEnvelope, type JobEnvelope, type ServiceSpecification, type WebhookStatus } from './job-envelope.js';
import type { JobBackend } from './job-backend.js';
import { isTerminal } from './job-status.js';
import type { Job } from './job.js';

export interface JobStreamOptions {
  jobs: JobBackend;
  specification: ServiceSpecification;
  /** The origin clients reach this server by; the request's own Host when null. */
  publicUrl: string | null;
  /** How long a client may take none of what waits to be sent before it is disconnected (--send-timeout). */
  sendTimeoutMs: number;
  /** The job's webhook deliveries, for its envelope; undefined for a job submitted without one. */
  webhookStatus?: (id: string) => WebhookStatus | undefined;
}

/** How one protocol frames a job's chunks and changes as server-sent events. */
interface EventFraming {
  chunk(value: Value): string;
  /** What of a running job, when it changes, is sent as `progress`. */
  progressKey(job: Job): string;
  progress(job: Job, envelope: () => JobEnvelope): string;
  end(envelope: JobEnvelope): string;
}

/**
 * svc's framing (the WHATWG EventSource format): `chunk` for every chunk, `progress` when
 * progress or message change, and one final `status` event with the whole envelope.
 */
export const SVC_FRAMING: EventFraming = {
  chunk: (value) => namedEvent('chunk', value),
  progressKey: (job) => JSON.stringify([job.progress, job.message]),
  progress: (job) => namedEvent('progress', { progress: job.progress, message: job.message, status: job.status }),
  end: (envelope) => namedEvent('status', envelope),
};

/**
 * The apipod toolkit's `GET /stream/{id}` as its client fastsdk reads it: each chunk an
 * unnamed `data:` record (text as it is, anything else as JSON), and the job's envelope
 * as an `event: job` record on each change and at the end, which is how fastsdk learns
 * the job ended (the toolkit's own local server sends chunks only).
 */
export const TOOLKIT_FRAMING: EventFraming = {
  chunk: (value) => `${dataLines(typeof value === 'string' ? value : JSON.stringify(value))}\n`,
  progressKey: (job) => JSON.stringify([job.progress, job.message, job.status]),
  progress: (_job, envelope) => namedEvent('job', envelope()),
  end: (envelope) => namedEvent('job', envelope),
};

/**
 * Follows a job as server-sent events: the chunks sent before the client connected first,
 * then each change, until the job ends; then the stream closes. A client that submitted
 * the call as a stream (`Accept: text/event-stream`) cancels it by leaving, as a dedicated
 * call's client does; one following a job it submitted otherwise does not.
 */
export function streamJob(
  request: HttpRequest,
  reply: HttpReply,
  job: Job,
  options: JobStreamOptions,
  { cancelWhenClientLeaves, framing }: { cancelWhenClientLeaves: boolean; framing: EventFraming },
): void {
  reply.hijack();
  const response = reply.raw;
  response.writeHead(200, {
    // Headers set before the stream took over (CORS) go out with it.
    ...(reply.getHeaders() as OutgoingHttpHeaders),
    'content-type': 'text/event-stream; charset=utf-8',
    // Which job this is, from the first byte: the final event says so only at the end.
    'content-location': `/v1/jobs/${job.id}`,
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  const envelopeNow = (current: Job) => envelopeOf(request, current, options);
  const wrote = disconnectWhenStalled(response, options.sendTimeoutMs);
  const send = (text: string) => wrote(response.write(text));
  let sentChunks = 0;
  let lastProgress: string | null = null;
  const flush = (current: Job): boolean => {
    for (; sentChunks < current.chunks.length; sentChunks++) send(framing.chunk(current.chunks[sentChunks] as Value));
    if (isTerminal(current.status)) {
      send(framing.end(envelopeNow(current)));
      response.end();
      return true;
    }
    const progress = framing.progressKey(current);
    if (progress !== lastProgress) {
      lastProgress = progress;
      send(framing.progress(current, () => envelopeNow(current)));
    }
    return false;
  };
  if (flush(job)) return;
  let current = job;
  const stop = options.jobs.watch(job, (changed) => {
    current = changed;
    if (flush(changed)) stop();
  });
  response.on('close', () => {
    stop();
    if (!cancelWhenClientLeaves || isTerminal(current.status)) return;
    // Its caller is gone, and nobody else knows the job: watched until it ends, it is not
    // counted among the ended jobs a stopping server waits to have read.
    const forget = options.jobs.watch(current, (changed) => {
      if (isTerminal(changed.status)) forget();
    });
    void options.jobs.cancel(current).catch(forget);
  });
}

export function envelopeOf(request: HttpRequest, job: Job, options: Pick<JobStreamOptions, 'publicUrl' | 'specification' | 'webhookStatus'>): JobEnvelope {
  const envelope = toEnvelope(job, baseUrlOf(request, options), options.specification);
  const webhook = options.webhookStatus?.(job.id);
  return webhook === undefined ? envelope : { ...envelope, webhook };
}

/** The origin clients reach this server by: --public-url, else the request's own. */
export function baseUrlOf(request: HttpRequest, options: Pick<JobStreamOptions, 'publicUrl'>): string {
  return options.publicUrl ?? `${request.protocol}://${request.host}`;
}

/** An envelope as a response body; one holding a large result is sent as the client reads it. */
export function sendEnvelope(reply: HttpReply, envelope: JobEnvelope, sendTimeoutMs: number): HttpReply {
  // An envelope is JSON through and through; its interface only names the fields.
  return sendJson(reply, envelope as unknown as JsonTree, sendTimeoutMs);
}

function namedEvent(event: string, data: unknown): string {
  // A result the worker wrote goes in as its text, digits and all (json-chunks.ts).
  return `event: ${event}\ndata: ${jsonString(data as JsonTree)}\n\n`;
}

/** A text as `data:` lines: a line break in the text would otherwise end the field. */
function dataLines(text: string): string {
  return text
    .split(/\r\n|\r|\n/)
    .map((line) => `data: ${line}\n`)
    .join('');
}
