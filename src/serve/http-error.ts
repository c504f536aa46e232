/**
 * Every 4xx and 5xx the gateway sends has one body shape (documented in docs/errors.md):
 *
 *   {"error": {"status": 422, "type": "validation_error", "code": "invalid_input",
 *              "message": "...", "detail": [{"field": "steps", "message": "..."}]}}
 *
 * `message`, `type` and `code` are the fields chat-completion clients read, so the same
 * body serves them too. An exception raised by the user's function adds `exception`.
 */
export type ErrorType =
  | 'invalid_request'
  | 'validation_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found'
  | 'method_not_allowed'
  | 'not_acceptable'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'too_many_requests'
  | 'queue_full'
  | 'unavailable'
  | 'endpoint_error'
  | 'worker_crashed'
  | 'timeout'
  | 'internal_error';

export interface FieldProblem {
  field: string;
  message: string;
}

/** Where a problem is, as FieldProblem names it: `['items', 0, 'name']` after `base` is `base.items[0].name`. */
export function fieldPath(keys: ReadonlyArray<string | number>, base = ''): string {
  return keys.reduce<string>((path, key) => (typeof key === 'number' ? `${path}[${key}]` : path ? `${path}.${key}` : key), base);
}

export interface ExceptionInfo {
  type: string;
  message: string;
  traceback?: string;
}

export interface ErrorBody {
  error: {
    status: number;
    type: ErrorType;
    code: string;
    message: string;
    detail?: FieldProblem[];
    exception?: ExceptionInfo;
  };
}

export class HttpError extends Error {
  override readonly name = 'HttpError';

  constructor(
    readonly status: number,
    readonly type: ErrorType,
    readonly code: string,
    message: string,
    readonly extra: { detail?: FieldProblem[]; exception?: ExceptionInfo; headers?: Record<string, string> } = {},
  ) {
    super(message);
  }

  toBody(): ErrorBody {
    const { detail, exception } = this.extra;
    return {
      error: {
        status: this.status,
        type: this.type,
        code: this.code,
        message: this.message,
        ...(detail ? { detail } : {}),
        ...(exception ? { exception } : {}),
      },
    };
  }
}

/** A 405 naming the methods the path does take, in `Allow` too. */
export function methodNotAllowed(method: string, path: string, allowed: readonly string[]): HttpError {
  const allow = allowed.join(', ');
  return new HttpError(405, 'method_not_allowed', 'method_not_allowed', `${method} is not allowed on ${path}; use ${allow}`, { headers: { allow } });
}
