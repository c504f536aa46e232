import type { HttpReply } from './http/http-reply.js';
import type { EndpointReport, ErrorInfo } from '../worker/protocol.js';
import { PoolClosedError, QueueFullError } from '../worker/worker-pool.js';
import type { CallOutcome } from '../worker/worker-process.js';
import type { GatewayOptions } from './gateway-options.js';
import { HttpError } from './http-error.js';
import { sendResult } from './result-answer.js';
import { crashDescription, type Crash } from './worker-crash.js';

/*
 * A call's outcome as HTTP, in one place for every route that makes calls (endpoints, chat):
 * the pool's refusals, the function's exception, a worker's crash.
 */

/** The pool's refusals as the 503s clients know how to retry; anything else is svc's own fault. */
export function submitFailure(error: unknown, endpoint: EndpointReport, options: Pick<GatewayOptions, 'retryAfterSeconds'>): unknown {
  if (error instanceof QueueFullError) {
    return new HttpError(503, 'queue_full', 'queue_full', `the queue of ${endpoint.path} is full; retry later`, {
      headers: { 'retry-after': String(options.retryAfterSeconds) },
    });
  }
  if (error instanceof PoolClosedError) {
    return new HttpError(503, 'unavailable', 'not_accepting_calls', `the service is not taking calls: ${error.message}`, {
      headers: { 'retry-after': String(options.retryAfterSeconds) },
    });
  }
  return error;
}

/** `accept` is the request's Accept header, `subject` names the result in a 406 ("the result of /grayscale"). */
export function sendOutcome(
  reply: HttpReply,
  outcome: CallOutcome,
  options: Pick<GatewayOptions, 'debug' | 'sendTimeoutMs'>,
  { accept, subject }: { accept: string | undefined; subject: string },
): HttpReply {
  const { debug } = options;
  switch (outcome.kind) {
    case 'result':
      // Its JSON text when the worker's is kept: reading `value` would parse it.
      return sendResult(reply, accept, outcome.json ?? outcome.value, subject, options.sendTimeoutMs);
    case 'error':
      throw endpointFailure(outcome.error, debug);
    case 'crashed':
      throw crashFailure(outcome, debug);
    case 'cancelled':
      throw new HttpError(503, 'unavailable', 'cancelled', 'the call was cancelled before it finished');
  }
}

/**
 * The function raised: a 500 with the exception. An argument the worker could not convert
 * (bad base64, a pydantic model's validation) is the caller's input, so a 422 naming it; so
 * is an input the function refused with the apipod toolkit's JobException, which the toolkit
 * answers with a 422 too.
 */
export function endpointFailure(error: ErrorInfo, debug: boolean): HttpError {
  if (error.argument !== null) {
    const problem = error.message.replace(`argument '${error.argument}': `, '');
    return new HttpError(422, 'validation_error', 'invalid_input', `invalid input: ${error.argument}: ${problem}`, {
      detail: [{ field: error.argument, message: problem }],
    });
  }
  if (error.rejects_input) {
    // Its message alone, as the toolkit's 422 says it (FileUploadException names itself).
    return new HttpError(422, 'validation_error', 'rejected_input', error.message, {
      exception: { type: error.type, message: error.message, ...(debug ? { traceback: error.traceback } : {}) },
    });
  }
  return new HttpError(500, 'endpoint_error', 'exception', `${error.type}: ${error.message}`, {
    exception: { type: error.type, message: error.message, ...(debug ? { traceback: error.traceback } : {}) },
  });
}

/**
 * A worker that died mid-call. Its last stderr lines (already in svc's log) may come from
 * other clients' calls and svc's own internals, so a client sees them only with --debug.
 */
export function crashFailure(outcome: Crash, debug: boolean): HttpError {
  if (outcome.stoppedByShutdown) {
    return new HttpError(503, 'unavailable', 'server_shutdown', 'the server stopped, and its grace period ended during this call; send it again');
  }
  return new HttpError(500, 'worker_crashed', 'worker_crashed', crashDescription(outcome, debug));
}
