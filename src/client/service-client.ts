import {
  AuthenticationError,
  ConnectionError,
  HttpStatusError,
  JobCancelledError,
  JobFailedError,
  JobTimeoutError,
  NoAnswerError,
  NotFoundError,
  PermissionError,
  ServiceError,
  WaitExpiredError,
  serverMessage,
} from './client-errors.js';
import { hasEnded, readEnvelope, type JobEnvelope, type JobErrorInfo, type JobStatus } from './job-envelope.js';
import { DEFAULT_RETRY_POLICY, retryDelayMs, type RetryPolicy } from './retry-policy.js';

export const DEFAULT_BASE_URL = 'http://localhost:8000';

/**
 * How long an aborted submit may still take to answer, beyond its `Prefer: wait`, before
 * the client closes the connection: a job server answers within the wait with an envelope
 * to cancel through; a dedicated server stops the call when the connection closes.
 */
const SUBMIT_ABORT_GRACE_MS = 500;
const CANCEL_TIMEOUT_MS = 10_000;

export interface ClientOptions {
  /** Where the service is. Default: $SERVICE_INFER_BACKEND_URL, else http://localhost:8000. */
  baseUrl?: string;
  /** Sent as `Authorization: Bearer <key>`. Default: $SERVICE_API_KEY; null sends none. */
  apiKey?: string | null;
  /** Time between two looks at a running job. Default: one second. */
  pollIntervalMs?: number;
  /**
   * `Prefer: wait=N` (RFC 7240) sent with the submit and every look, so a server that
   * honours it answers the moment the job ends instead of at the next poll. Default: the
   * poll interval in whole seconds, at least 1; 0 never asks.
   */
  waitSeconds?: number;
  retry?: Partial<RetryPolicy>;
  /** Called before each retry, with why and for how long the client waits (a 503's Retry-After). */
  onRetry?: (notice: RetryNotice) => void;
  /** The fetch to send requests with; the global one by default. */
  fetch?: typeof globalThis.fetch;
  /** Where the defaults are read from; process.env by default. */
  env?: Readonly<Record<string, string | undefined>>;
}

export interface ProgressUpdate {
  status: JobStatus;
  progress: number | null;
  message: string | null;
  envelope: JobEnvelope;
}

/** A retry the client is about to make: the answer that caused it and the pause before it. */
export interface RetryNotice {
  method: string;
  url: string;
  status: number;
  /** What the server said (its error message, else the body). */
  reason: string;
  /** The server's Retry-After, as it sent it; null when it sent none. */
  retryAfter: string | null;
  delayMs: number;
  /** 1 for the first retry of this status. */
  attempt: number;
  /** The retries the policy allows for this status. */
  maxAttempts: number;
}

/**
 * A result the server sent as the bytes of one media file, with their content type, when
 * asked for with `accept` (an endpoint returning one image answers `Accept: image/*` so).
 */
export class MediaResult {
  constructor(
    readonly contentType: string,
    readonly bytes: Uint8Array,
    /** From the answer's Content-Disposition; null when it gave none. */
    readonly fileName: string | null,
  ) {}
}

export interface RunOptions {
  /** Called with the job's first state, then whenever its status, progress or message changes. */
  onProgress?: (update: ProgressUpdate) => void;
  /** Aborting cancels the job through its `cancel_job_url`; the call rejects with JobCancelledError. */
  signal?: AbortSignal;
  /**
   * Stop waiting after this long: a job keeps running (WaitExpiredError); a call the server
   * holds open (dedicated) is abandoned, which stops it there (NoAnswerError).
   */
  maxWaitMs?: number;
  /** POST (default) sends the input as JSON; GET, for endpoints declared `methods=["GET"]`, as the query string. */
  method?: EndpointMethod;
  /**
   * The Accept header of the call, JSON by default; `image/*, application/json;q=0.5` asks a
   * server that can for a media result's bytes, which then resolve as a MediaResult.
   */
  accept?: string;
  /** Have the server post the job's events to this URL (its `Webhook` headers; docs/webhooks.md). */
  webhook?: WebhookOptions;
}

export interface WebhookOptions {
  url: string;
  /** Of started, progress, streaming, completed; every one when left out. */
  events?: string[];
}

export type EndpointMethod = 'GET' | 'POST';

export interface SubmitOptions {
  signal?: AbortSignal;
  /** Ask a dedicated server for a job envelope instead of the result (`Prefer: respond-async`). */
  respondAsync?: boolean;
  /** `Prefer: wait=N` on the submit; the client's `waitSeconds` by default. */
  waitSeconds?: number;
  /** POST (default) sends the input as JSON; GET as the query string. */
  method?: EndpointMethod;
  /** Give up on an answer after this long (NoAnswerError), closing the connection. */
  answerWithinMs?: number;
  /** The Accept header, as in RunOptions. */
  accept?: string;
  /** As in RunOptions. */
  webhook?: WebhookOptions;
}

/** What a submit brought back: the result itself (a dedicated server), or a job to follow. */
export type Submission =
  | { kind: 'result'; value: unknown }
  | { kind: 'job'; envelope: JobEnvelope; /** the server held the answer for `Prefer: wait` */ waited: boolean };

interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
}

/** What one request sends besides its method and URL. */
interface RequestInit {
  body?: string | FormData;
  prefer?: string;
  accept?: string | undefined;
  webhook?: WebhookOptions | undefined;
}

/** Signals for one request: `request` aborts the HTTP exchange, `pause` the waits between retries. */
interface RequestSignals {
  request?: AbortSignal | undefined;
  pause?: AbortSignal | undefined;
}

/**
 * A client for services that speak the hosted inference API: `svc start` in either compute
 * mode, or a hosted deployment. It only ever follows the URLs a job envelope gives it.
 */
export class ServiceClient {
  readonly baseUrl: string;
  private readonly apiKey: string | null;
  private readonly pollIntervalMs: number;
  private readonly waitSeconds: number;
  private readonly retryPolicy: RetryPolicy;
  private readonly fetch: typeof globalThis.fetch;
  private readonly onRetry: ((notice: RetryNotice) => void) | undefined;

  constructor(options: ClientOptions = {}) {
    const env = options.env ?? (typeof process === 'undefined' ? {} : process.env);
    this.baseUrl = (options.baseUrl ?? (env.SERVICE_INFER_BACKEND_URL || DEFAULT_BASE_URL)).replace(/\/+$/, '');
    this.apiKey = options.apiKey === undefined ? env.SERVICE_API_KEY || null : options.apiKey;
    this.pollIntervalMs = options.pollIntervalMs ?? 1000;
    this.waitSeconds = options.waitSeconds ?? Math.max(1, Math.round(this.pollIntervalMs / 1000));
    this.retryPolicy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    this.fetch = options.fetch ?? globalThis.fetch;
    this.onRetry = options.onRetry;
  }

  /**
   * Calls an endpoint and returns its result, whether the service answers with the result
   * (dedicated) or with a job envelope (serverless), which it then follows to the end.
   * FAILED, TIMEOUT and CANCELLED reject with JobFailedError, JobTimeoutError and
   * JobCancelledError, each carrying the envelope.
   */
  async run<T = unknown>(path: string, input: unknown = {}, options: RunOptions = {}): Promise<T> {
    const started = Date.now();
    const deadline = options.maxWaitMs === undefined ? Infinity : started + options.maxWaitMs;
    const waitSeconds = Math.min(this.waitSeconds, Math.floor(Math.max(0, deadline - started) / 1000));
    const answerWithinMs = options.maxWaitMs === undefined ? undefined : options.maxWaitMs + SUBMIT_ABORT_GRACE_MS;
    const submission = await this.submit(path, input, { signal: options.signal, waitSeconds, method: options.method, answerWithinMs, accept: options.accept, webhook: options.webhook });
    if (submission.kind === 'result') return submission.value as T;
    return (await this.followUntil(submission.envelope, options, deadline, !submission.waited)) as T;
  }

  /**
   * Sends the input to an endpoint; `path` is relative to the base URL, or a whole URL. A
   * FormData input is sent as a multipart form (files as uploads), anything else as JSON.
   */
  async submit(path: string, input: unknown = {}, options: SubmitOptions = {}): Promise<Submission> {
    const url = this.endpointUrl(path);
    const { signal } = options;
    if (signal?.aborted) throw new JobCancelledError(null, 'was cancelled before it was sent');
    const waitSeconds = options.waitSeconds ?? this.waitSeconds;
    const prefer = [options.respondAsync ? 'respond-async' : null, waitSeconds > 0 ? `wait=${waitSeconds}` : null].filter(Boolean).join(', ');

    const connection = new AbortController();
    let closeTimer: NodeJS.Timeout | undefined;
    const closeLater = () => {
      closeTimer = setTimeout(() => connection.abort(), waitSeconds * 1000 + SUBMIT_ABORT_GRACE_MS);
    };
    signal?.addEventListener('abort', closeLater, { once: true });
    const answerDeadline = options.answerWithinMs === undefined ? null : AbortSignal.timeout(options.answerWithinMs);
    const request = answerDeadline === null ? connection.signal : AbortSignal.any([connection.signal, answerDeadline]);
    let answer: Answer;
    try {
      const { accept, webhook } = options;
      if (options.method === 'GET' && input instanceof FormData) throw new ServiceError('a GET call sends no files: its input is its query string');
      answer = options.method === 'GET'
        ? await this.send('GET', withQuery(url, input), { prefer, accept, webhook }, { request, pause: signal })
        : await this.send('POST', url, { body: input instanceof FormData ? input : JSON.stringify(input ?? {}), prefer, accept, webhook }, { request, pause: signal });
    } catch (error) {
      if (signal?.aborted) throw new JobCancelledError(null, 'was cancelled before the server answered; closing the connection stops it there');
      if (answerDeadline?.aborted) throw new NoAnswerError(url, options.answerWithinMs as number);
      if (error instanceof HttpStatusError && error.status === 500 && error.type === 'endpoint_error') {
        throw new JobFailedError(null, exceptionOf(error));
      }
      throw error;
    } finally {
      signal?.removeEventListener('abort', closeLater);
      clearTimeout(closeTimer);
    }

    const envelope = answer.body instanceof MediaResult ? null : readEnvelope(answer.body);
    if (signal?.aborted) throw envelope ? await this.cancelled(envelope) : new JobCancelledError(null, 'was cancelled, though the server had answered');
    if (envelope === null) return { kind: 'result', value: answer.body };
    return { kind: 'job', envelope, waited: waitApplied(answer.headers) };
  }

  /** Follows a job to its end through its `refresh_job_url`; resolves with the result as `run` does. */
  async follow<T = unknown>(envelope: JobEnvelope, options: RunOptions = {}): Promise<T> {
    const deadline = options.maxWaitMs === undefined ? Infinity : Date.now() + options.maxWaitMs;
    return (await this.followUntil(envelope, options, deadline, false)) as T;
  }

  /** The job as the server shows it now, or once it ends within `waitSeconds`. */
  async refresh(envelope: JobEnvelope, options: { waitSeconds?: number; signal?: AbortSignal } = {}): Promise<JobEnvelope> {
    return (await this.look(envelope, options.waitSeconds ?? 0, options.signal)).envelope;
  }

  /** Cancels a job through its `cancel_job_url`; resolves with the envelope the server returns. */
  async cancel(envelope: JobEnvelope, options: { signal?: AbortSignal } = {}): Promise<JobEnvelope> {
    if (envelope.cancel_job_url === null) throw new ServiceError(`job ${envelope.id} has no cancel_job_url to cancel it through`);
    const signal = options.signal ?? AbortSignal.timeout(CANCEL_TIMEOUT_MS);
    const answer = await this.send('POST', envelope.cancel_job_url, {}, { request: signal, pause: signal });
    return readEnvelope(answer.body) ?? envelope;
  }

  /**
   * The service's OpenAPI document, which describes its endpoints' parameters: `/openapi.json`
   * under the base URL, or at the origin of `path` when that is a whole URL.
   */
  async openApi(path = '/'): Promise<unknown> {
    const url = isWholeUrl(path) ? new URL('/openapi.json', path).href : this.endpointUrl('/openapi.json');
    return (await this.send('GET', url, {}, {})).body;
  }

  /** An endpoint's URL: a whole URL as it is, a path under the base URL. */
  endpointUrl(path: string): string {
    if (isWholeUrl(path)) return path;
    return `${this.baseUrl}/${path.replace(/^\/+/, '')}`;
  }

  private async followUntil(envelope: JobEnvelope, options: RunOptions, deadline: number, pauseFirst: boolean): Promise<unknown> {
    const { signal, onProgress } = options;
    let current = envelope;
    let reported = '';
    const report = (job: JobEnvelope) => {
      const key = JSON.stringify([job.status, job.progress, job.message]);
      if (key === reported) return;
      reported = key;
      onProgress?.({ status: job.status, progress: job.progress, message: job.message, envelope: job });
    };
    report(current);
    try {
      let pause = pauseFirst ? this.pollIntervalMs : 0;
      let lostLooks = 0;
      while (!hasEnded(current.status)) {
        if (pause > 0) await sleep(Math.min(pause, Math.max(0, deadline - Date.now())), signal);
        const remaining = deadline - Date.now();
        if (remaining <= 0) throw new WaitExpiredError(current, options.maxWaitMs ?? 0);
        const lookStarted = Date.now();
        let look: { envelope: JobEnvelope; waited: boolean };
        try {
          look = await this.look(current, Math.min(this.waitSeconds, Math.floor(remaining / 1000)), signal);
          lostLooks = 0;
        } catch (error) {
          // Reading a job is safe to repeat: a server restarting or a network blip is waited out a while.
          if (!(error instanceof ConnectionError) || lostLooks >= this.retryPolicy.lostConnectionRetries) throw error;
          pause = this.retryPolicy.lostConnectionDelayMs * 2 ** lostLooks;
          lostLooks += 1;
          continue;
        }
        current = look.envelope;
        report(current);
        // A server that held the look has already spent (part of) the interval waiting.
        pause = look.waited ? this.pollIntervalMs - (Date.now() - lookStarted) : this.pollIntervalMs;
      }
    } catch (error) {
      if (signal?.aborted) throw await this.cancelled(current);
      throw error;
    }
    return settle(current);
  }

  private async look(envelope: JobEnvelope, waitSeconds: number, signal: AbortSignal | undefined): Promise<{ envelope: JobEnvelope; waited: boolean }> {
    const url = envelope.refresh_job_url;
    const answer = await this.send('GET', url, { prefer: waitSeconds > 0 ? `wait=${waitSeconds}` : '' }, { request: signal, pause: signal });
    const next = readEnvelope(answer.body);
    if (next === null) throw new HttpStatusError(answer.status, 'GET', url, answer.body, `GET ${url} did not answer with a job envelope`);
    return { envelope: next, waited: waitApplied(answer.headers) };
  }

  /** Cancels a job its caller has given up on, and says how that went. */
  private async cancelled(envelope: JobEnvelope): Promise<JobCancelledError> {
    try {
      const after = await this.cancel(envelope);
      return new JobCancelledError(after, after.status === 'CANCELLED' ? 'was cancelled' : `was cancelled after it had ended ${after.status}`);
    } catch (error) {
      return new JobCancelledError(envelope, `was abandoned, but cancelling it on the server failed: ${(error as Error).message}`);
    }
  }

  /** One request with the retry policy; any answer but a 2xx becomes the error for its status. */
  private async send(method: string, url: string, init: RequestInit, signals: RequestSignals): Promise<Answer> {
    const retries = new Map<number, number>();
    for (;;) {
      let response: Response;
      let body: unknown;
      try {
        response = await this.fetch(url, { method, headers: this.headers(init), body: init.body ?? null, signal: signals.request ?? null });
        body = await readBody(response);
      } catch (error) {
        if (signals.request?.aborted) throw error;
        throw new ConnectionError(url, error);
      }
      if (response.ok) return { status: response.status, headers: response.headers, body };
      const failure = statusError(response.status, method, url, body, this.apiKey !== null);
      const retried = retries.get(response.status) ?? 0;
      const delay = retryDelayMs(this.retryPolicy, {
        status: response.status,
        errorType: failure.type,
        retryAfter: response.headers.get('retry-after'),
        retries: retried,
      });
      if (delay === null) throw failure;
      retries.set(response.status, retried + 1);
      this.onRetry?.({
        method,
        url,
        status: response.status,
        reason: serverMessage(body),
        retryAfter: response.headers.get('retry-after'),
        delayMs: delay,
        attempt: retried + 1,
        maxAttempts: response.status === 503 ? this.retryPolicy.unavailableRetries : this.retryPolicy.serverErrorRetries,
      });
      await sleep(delay, signals.pause);
    }
  }

  private headers(init: RequestInit): Record<string, string> {
    return {
      accept: init.accept ?? 'application/json',
      // A FormData body sets its own multipart type, with its boundary.
      ...(typeof init.body === 'string' ? { 'content-type': 'application/json' } : {}),
      ...(init.prefer ? { prefer: init.prefer } : {}),
      ...(init.webhook ? { webhook: init.webhook.url, ...(init.webhook.events ? { 'webhook-events-filter': init.webhook.events.join(',') } : {}) } : {}),
      ...(this.apiKey !== null ? { authorization: `Bearer ${this.apiKey}` } : {}),
    };
  }
}

/** Calls an endpoint with a client configured from the environment; see `ServiceClient.run`. */
export function run<T = unknown>(path: string, input?: unknown, options?: RunOptions): Promise<T> {
  return new ServiceClient().run<T>(path, input, options);
}

function isWholeUrl(path: string): boolean {
  return /^[a-z][a-z\d+.-]*:\/\//i.test(path);
}

function settle(envelope: JobEnvelope): unknown {
  switch (envelope.status) {
    case 'FAILED':
      throw new JobFailedError(envelope, envelope.error ?? { type: 'Error', message: 'the job failed without saying why' });
    case 'TIMEOUT':
      throw new JobTimeoutError(envelope);
    case 'CANCELLED':
      throw new JobCancelledError(envelope);
    default:
      return envelope.result;
  }
}

/** The input as a query string, as a GET endpoint reads it: strings as they are, a list as repeated keys, anything else as JSON. */
function withQuery(url: string, input: unknown): string {
  if (input === null || input === undefined) return url;
  if (typeof input !== 'object' || Array.isArray(input)) throw new ServiceError('the input of a GET call is an object of parameters');
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(input)) {
    for (const item of Array.isArray(value) ? value : [value]) query.append(name, typeof item === 'string' ? item : JSON.stringify(item));
  }
  const text = query.toString();
  return text === '' ? url : `${url}${url.includes('?') ? '&' : '?'}${text}`;
}

function statusError(status: number, method: string, url: string, body: unknown, sentKey: boolean): HttpStatusError {
  if (status === 401) return new AuthenticationError(method, url, body, sentKey);
  if (status === 403) return new PermissionError(method, url, body);
  if (status === 404) return new NotFoundError(method, url, body);
  return new HttpStatusError(status, method, url, body);
}

/** The exception a dedicated server reports when the function raised (svc's `error.exception`). */
function exceptionOf(error: HttpStatusError): JobErrorInfo {
  const exception = (error.body as { error?: { exception?: { type?: unknown; message?: unknown } } }).error?.exception;
  if (typeof exception?.type === 'string' && typeof exception.message === 'string') {
    return { type: exception.type, message: exception.message };
  }
  return { type: 'Error', message: error.message };
}

/** `Preference-Applied: wait=N` (RFC 7240): the server held the answer rather than reply at once. */
function waitApplied(headers: Headers): boolean {
  return /(^|,)\s*wait\b/i.test(headers.get('preference-applied') ?? '');
}

/**
 * The body as JSON when it is, a MediaResult when it is a file (asked for with Accept: a
 * media type, or any type with a Content-Disposition, as svc sends a text file), else text.
 */
async function readBody(response: Response): Promise<unknown> {
  const type = (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  const isFile = /^(image|audio|video)\/|^application\/(?!json$|problem\+json$)/.test(type) || (response.headers.has('content-disposition') && !/json/.test(type));
  if (response.ok && isFile) {
    return new MediaResult(type, new Uint8Array(await response.arrayBuffer()), fileNameOf(response.headers.get('content-disposition')));
  }
  const text = await response.text();
  if (text === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** `filename*=UTF-8''...` (RFC 6266) over `filename="..."`. */
function fileNameOf(disposition: string | null): string | null {
  if (disposition === null) return null;
  const extended = /filename\*\s*=\s*UTF-8''([^;]+)/i.exec(disposition);
  if (extended) {
    try {
      return decodeURIComponent(extended[1]!.trim());
    } catch {
      // a malformed escape: the plain name below
    }
  }
  return /filename\s*=\s*"([^"]*)"/i.exec(disposition)?.[1] ?? /filename\s*=\s*([^;\s]+)/i.exec(disposition)?.[1] ?? null;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    function onAbort() {
      clearTimeout(timer);
      reject(signal?.reason);
    }
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
