import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { HttpApp } from '../http/http-app.js';
import type { HttpReply } from '../http/http-reply.js';
import type { HttpRequest } from '../http/http-request.js';
import type { CancelSignal } from '../../worker/cancel-signal.js';
import { isJsonObject, type EndpointReport, type Value } from '../../worker/protocol.js';
import type { CallOutcome } from '../../worker/worker-process.js';
import type { CallBackend } from '../call-backend.js';
import { CallDeadline, callTimedOut, timeoutMsFor } from '../call-timeout.js';
import { cancelledWhenClientLeaves } from '../client-disconnect.js';
import type { JobSettings } from '../gateway-options.js';
import { crashFailure, endpointFailure, submitFailure } from '../call-outcome-http.js';
import { HttpError } from '../http-error.js';
import { sendJson } from '../json-reply.js';
import { completionFrom, type CompletionContext } from './chat-completion.js';
import { ChatRequestReader, type ChatRequestBody } from './chat-request.js';
import { ChunkFeed, completionEvents } from './chat-stream.js';
import { countPromptTokens } from './token-count.js';

export interface ChatRoutesOptions {
  runner: CallBackend;
  /** The service's title, which is its model name. */
  title: string;
  debug: boolean;
  retryAfterSeconds: number;
  /** How long a client may take none of a large completion before it is disconnected (--send-timeout). */
  sendTimeoutMs: number;
  /** The time-outs a chat call gets once a worker takes it, as any dedicated call. */
  jobs: Pick<JobSettings, 'timeoutsMs' | 'defaultTimeoutMs'>;
}

/**
 * OpenAI-compatible routes for the service's chat endpoints (those whose function takes a
 * ChatCompletionRequest), so a chat client works by changing its base URL alone. Each
 * chat endpoint answers at its path, `{path}/completions` and `{path}/chat/completions`,
 * each also under /v1; the first one also at `/chat/completions` and `/v1/chat/completions`.
 * So the base URL can be the server root, `/v1`, or the endpoint's path. `GET /models`
 * (and `/v1/models`, `{path}/models`) lists the service's model. A URL a non-chat
 * endpoint already serves stays that endpoint's. Chat routes always answer with the
 * completion (or its stream), whatever the compute mode: chat clients do not poll jobs.
 */
export function registerChatRoutes(app: HttpApp, options: ChatRoutesOptions): void {
  const chatEndpoints = options.runner.endpoints.filter((endpoint) => endpoint.is_chat);
  if (chatEndpoints.length === 0) return;
  const taken = urlsOfOtherEndpoints(options.runner.endpoints);
  const claim = (url: string, method: string) => {
    const key = `${method} ${url}`;
    if (taken.has(key)) return false;
    taken.add(key);
    return true;
  };

  chatEndpoints.forEach((endpoint, index) => {
    const handler = completionHandler(endpoint, options);
    const urls = [endpoint.path, `${endpoint.path}/completions`, `${endpoint.path}/chat/completions`];
    if (index === 0) urls.push('/chat/completions');
    for (const url of withV1(urls)) {
      if (claim(url, 'POST')) app.post(url, handler, { endpoint: endpoint.path });
    }
  });

  const models = modelList(modelNames(options.title));
  const modelUrls = ['/models', ...chatEndpoints.map((endpoint) => `${endpoint.path}/models`)];
  for (const url of withV1(modelUrls)) {
    if (claim(url, 'GET')) app.get(url, async () => models);
    if (claim(`${url}/:model`, 'GET')) {
      app.get(`${url}/:model`, async (request) => {
        const { model } = request.params as { model: string };
        const found = models.data.find((entry) => entry.id === model);
        if (!found) throw new HttpError(404, 'not_found', 'model_not_found', `this service has no model ${JSON.stringify(model)}; GET /v1/models lists them`);
        return found;
      });
    }
  }
}

/**
 * The model names `GET /v1/models` lists: the service's title, `APIPod(title=...)`, or
 * the project directory's name. Clients may send any `model`; it is echoed back.
 */
export function modelNames(title: string): string[] {
  return [title];
}

function modelList(names: readonly string[]) {
  const created = Math.floor(Date.now() / 1000);
  return { object: 'list' as const, data: names.map((id) => ({ id, object: 'model' as const, created, owned_by: 'svc' })) };
}

function completionHandler(endpoint: EndpointReport, options: ChatRoutesOptions) {
  const reader = new ChatRequestReader(endpoint);
  const defaultModel = modelNames(options.title)[0] as string;
  return async (request: HttpRequest, reply: HttpReply) => {
    const body = await reader.read(request);
    const context: CompletionContext = {
      id: `chatcmpl-${randomBytes(12).toString('hex')}`,
      created: Math.floor(Date.now() / 1000),
      model: typeof body.model === 'string' && body.model !== '' ? body.model : defaultModel,
      promptTokens: countPromptTokens(body.messages),
    };
    const args = { [reader.parameter]: body };
    const signal = cancelledWhenClientLeaves(reply);
    const deadline = new CallDeadline(signal, timeoutMsFor(endpoint.path, options.jobs));
    const failure = (failed: Exclude<CallOutcome, { kind: 'result' }>): HttpError =>
      deadline.timedOut && failed.kind === 'cancelled' ? notToRetry(callTimedOut(endpoint.path, options.jobs)) : failureOf(failed, options.debug);
    if (body.stream === true) return streamCompletion(reply, endpoint, args, body, context, { signal, deadline, failure }, options);

    const outcome = await startCall(options, endpoint, args, { signal, onStart: deadline.start }).finally(() => deadline.clear());
    if (outcome.kind !== 'result') throw failure(outcome);
    // A completion is JSON through and through; its interface only names the fields.
    return sendJson(reply, completionFrom(outcome.value, context) as unknown as Value, options.sendTimeoutMs);
  };
}

async function streamCompletion(
  reply: HttpReply,
  endpoint: EndpointReport,
  args: { [parameter: string]: Value },
  body: ChatRequestBody,
  context: CompletionContext,
  call: { signal: CancelSignal; deadline: CallDeadline; failure: (failed: Exclude<CallOutcome, { kind: 'result' }>) => HttpError },
  options: ChatRoutesOptions,
): Promise<HttpReply> {
  const feed = new ChunkFeed();
  let ended: CallOutcome | null = null;
  const outcome = startCall(options, endpoint, args, { signal: call.signal, onStart: call.deadline.start, onChunk: (value) => feed.push(value) });
  void outcome.then((value) => {
    call.deadline.clear();
    ended = value;
    feed.close();
  });
  // Until the first chunk, a failure is still a plain HTTP error with its own status.
  await feed.started;
  const early = ended as CallOutcome | null;
  if (early && early.kind !== 'result') throw call.failure(early);

  const streamOptions = isJsonObject(body.stream_options) ? body.stream_options : {};
  const events = completionEvents(feed, outcome, {
    context,
    includeUsage: streamOptions.include_usage === true,
    failureOf: call.failure,
  });
  return reply
    .type('text/event-stream; charset=utf-8')
    .header('cache-control', 'no-cache')
    .header('x-accel-buffering', 'no') // proxies must pass each event on at once
    .send(Readable.from(events));
}

/** Queues the call; a full queue or a closed pool is a 503 at once, before any response starts. */
function startCall(
  options: ChatRoutesOptions,
  endpoint: EndpointReport,
  args: { [parameter: string]: Value },
  callOptions: { signal: CancelSignal; onStart?: () => void; onChunk?: (value: Value) => void },
): Promise<CallOutcome> {
  try {
    return options.runner.submit(endpoint.path, args, callOptions);
  } catch (error) {
    throw submitFailure(error, endpoint, options);
  }
}

function failureOf(outcome: Exclude<CallOutcome, { kind: 'result' }>, debug: boolean): HttpError {
  switch (outcome.kind) {
    case 'error':
      return notToRetry(endpointFailure(outcome.error, debug));
    case 'crashed':
      return notToRetry(crashFailure(outcome, debug));
    case 'cancelled':
      return new HttpError(503, 'unavailable', 'cancelled', 'the call was cancelled before it finished');
  }
}

/**
 * The official clients retry a 500 or 504 twice unless told not to: the same request would
 * raise the same exception, kill a worker again (each new one loading its model), or run
 * as long again.
 */
function notToRetry(failure: HttpError): HttpError {
  return new HttpError(failure.status, failure.type, failure.code, failure.message, { ...failure.extra, headers: { ...failure.extra.headers, 'x-should-retry': 'false' } });
}

function withV1(urls: readonly string[]): string[] {
  return [...new Set(urls.flatMap((url) => [url, `/v1${url}`]))];
}

/** The method and URL pairs the endpoint routes serve, which chat routes must leave alone. */
function urlsOfOtherEndpoints(endpoints: readonly EndpointReport[]): Set<string> {
  const taken = new Set<string>();
  for (const endpoint of endpoints.filter((candidate) => !candidate.is_chat)) {
    for (const url of [endpoint.path, `/v1${endpoint.path}`]) endpoint.methods.forEach((method) => taken.add(`${method} ${url}`));
  }
  return taken;
}
