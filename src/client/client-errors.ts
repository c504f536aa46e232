import type { JobEnvelope, JobErrorInfo } from './job-envelope.js';

/** Everything the client throws on purpose is a ServiceError; `instanceof` picks the case. */
export class ServiceError extends Error {
  override readonly name: string = 'ServiceError';
}

/** The request never got an HTTP answer: refused, reset, or a name that does not resolve. */
export class ConnectionError extends ServiceError {
  override readonly name: string = 'ConnectionError';

  constructor(
    readonly url: string,
    cause: unknown,
  ) {
    super(`cannot reach ${url}: ${describeCause(cause)}`, { cause });
  }
}

/** The server answered with a status the client does not turn into a result. */
export class HttpStatusError extends ServiceError {
  override readonly name: string = 'HttpStatusError';
  /** `error.code` of svc's error body, when the server sent one. */
  readonly code: string | null;
  /** `error.type` of svc's error body, when the server sent one. */
  readonly type: string | null;

  constructor(
    readonly status: number,
    readonly method: string,
    readonly url: string,
    /** The response body, parsed as JSON when it is JSON. */
    readonly body: unknown,
    message = `${method} ${url} answered ${status}: ${serverMessage(body)}`,
  ) {
    super(message);
    const error = errorObject(body);
    this.code = typeof error?.code === 'string' ? error.code : null;
    this.type = typeof error?.type === 'string' ? error.type : null;
  }
}

/** 401: no key, a malformed one, or one the server does not know. */
export class AuthenticationError extends HttpStatusError {
  override readonly name: string = 'AuthenticationError';

  constructor(method: string, url: string, body: unknown, sentKey: boolean) {
    const hint = sentKey ? 'check SERVICE_API_KEY' : 'no API key was sent: set SERVICE_API_KEY';
    super(401, method, url, body, `${url} refused the request (401 unauthorized: ${serverMessage(body)}); ${hint}`);
  }
}

/** 403: a valid key that may not call this endpoint. */
export class PermissionError extends HttpStatusError {
  override readonly name: string = 'PermissionError';

  constructor(method: string, url: string, body: unknown) {
    super(403, method, url, body, `the API key may not call ${url} (403 forbidden: ${serverMessage(body)})`);
  }
}

/** 404: no endpoint at that path, or a job that never existed, has expired, or is another key's. */
export class NotFoundError extends HttpStatusError {
  override readonly name: string = 'NotFoundError';

  constructor(method: string, url: string, body: unknown) {
    super(404, method, url, body, `nothing at ${method} ${url} (404 not found: ${serverMessage(body)})`);
  }
}

/**
 * A job that ended other than FINISHED. `envelope` is the job as the server last showed it;
 * null when there was no job (a dedicated server answering the call directly).
 */
export class JobEndedError extends ServiceError {
  override readonly name: string = 'JobEndedError';

  constructor(
    readonly status: 'FAILED' | 'TIMEOUT' | 'CANCELLED',
    readonly envelope: JobEnvelope | null,
    message: string,
  ) {
    super(message);
  }
}

export class JobFailedError extends JobEndedError {
  override readonly name: string = 'JobFailedError';

  constructor(
    envelope: JobEnvelope | null,
    readonly error: JobErrorInfo,
  ) {
    super('FAILED', envelope, `${jobName(envelope)} failed: ${error.type}: ${error.message}`);
  }
}

export class JobTimeoutError extends JobEndedError {
  override readonly name: string = 'JobTimeoutError';

  constructor(envelope: JobEnvelope) {
    super('TIMEOUT', envelope, `${jobName(envelope)} timed out${envelope.error ? `: ${envelope.error.message}` : ''}`);
  }
}

export class JobCancelledError extends JobEndedError {
  override readonly name: string = 'JobCancelledError';

  constructor(envelope: JobEnvelope | null, detail = 'was cancelled') {
    super('CANCELLED', envelope, `${jobName(envelope)} ${detail}`);
  }
}

/** `maxWaitMs` passed before the job ended; the job goes on running on the server. */
export class WaitExpiredError extends ServiceError {
  override readonly name: string = 'WaitExpiredError';

  constructor(
    readonly envelope: JobEnvelope,
    waitedMs: number,
  ) {
    super(`${jobName(envelope)} is still ${envelope.status} after ${waitedMs / 1000} s; it keeps running: ${envelope.refresh_job_url}`);
  }
}

/** `maxWaitMs` passed before the service answered the call at all (a dedicated call, held open). */
export class NoAnswerError extends ServiceError {
  override readonly name: string = 'NoAnswerError';

  constructor(
    readonly url: string,
    waitedMs: number,
  ) {
    super(`${url} did not answer within ${waitedMs / 1000} s; the connection is closed, which stops a call the server was holding`);
  }
}

function jobName(envelope: JobEnvelope | null): string {
  return envelope ? `job ${envelope.id}` : 'the call';
}

function errorObject(body: unknown): Record<string, unknown> | null {
  if (typeof body !== 'object' || body === null) return null;
  const error = (body as { error?: unknown }).error;
  return typeof error === 'object' && error !== null ? (error as Record<string, unknown>) : null;
}

/**
 * What the server said, from svc's one error body (`error.message` and field-level
 * `error.detail`), a FastAPI-style `detail`, or the text itself.
 */
export function serverMessage(body: unknown): string {
  const error = errorObject(body);
  if (error && typeof error.message === 'string') {
    const message = error.message;
    const fields = Array.isArray(error.detail)
      ? (error.detail as Array<{ field?: unknown; message?: unknown }>).map((problem) => `${String(problem.field)}: ${String(problem.message)}`)
      : [];
    // svc's own message already names its fields; another server's may not.
    const unsaid = fields.filter((field) => !message.includes(field));
    return unsaid.length > 0 ? `${message} (${unsaid.join('; ')})` : message;
  }
  if (typeof body === 'object' && body !== null && 'detail' in body) return JSON.stringify((body as { detail: unknown }).detail);
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return text.length > 200 ? `${text.slice(0, 200)}...` : text || '(empty body)';
}

function describeCause(cause: unknown): string {
  // fetch wraps the socket's error ("connect ECONNREFUSED 127.0.0.1:8000") in "fetch failed".
  const inner = cause instanceof Error && cause.cause instanceof Error ? cause.cause : cause;
  return inner instanceof Error ? inner.message : String(inner);
}
