/**
 * The job envelope of the hosted inference API as a client reads it. The client keeps its
 * own copy of the wire format instead of importing the server's types: it talks to any
 * server of that API, not only `svc start`.
 */
export const JOB_STATUSES = [
  'PENDING',
  'QUEUED',
  'PROCESSING',
  'STREAMING',
  'FINISHED',
  'FAILED',
  'TIMEOUT',
  'CANCELLED',
  'UNKNOWN',
] as const;

export type JobStatus = (typeof JOB_STATUSES)[number];

export type EndedStatus = 'FINISHED' | 'FAILED' | 'TIMEOUT' | 'CANCELLED';

const ENDED: ReadonlySet<string> = new Set<EndedStatus>(['FINISHED', 'FAILED', 'TIMEOUT', 'CANCELLED']);

export interface JobErrorInfo {
  type: string;
  message: string;
  traceback?: string;
}

export interface JobEnvelope {
  id: string;
  status: JobStatus;
  /** 0 to 1, or null when the service cannot tell. */
  progress: number | null;
  message: string | null;
  result: unknown;
  error: JobErrorInfo | null;
  refresh_job_url: string;
  cancel_job_url: string | null;
  /** Every other field the server sent (timestamps, `service_specification`, ...), as sent. */
  [field: string]: unknown;
}

export function hasEnded(status: JobStatus): status is EndedStatus {
  return ENDED.has(status);
}

/**
 * The body as an envelope when it has an envelope's shape (`id`, `status` and
 * `refresh_job_url`), else null: a dedicated server's body is the function's result.
 * Statuses are read case-insensitively; one this client does not know reads UNKNOWN.
 */
export function readEnvelope(body: unknown): JobEnvelope | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  const fields = body as Record<string, unknown>;
  const { id, status, refresh_job_url: refreshUrl } = fields;
  if (typeof id !== 'string' || typeof status !== 'string' || typeof refreshUrl !== 'string') return null;
  const upper = status.toUpperCase();
  return {
    ...fields,
    id,
    status: (JOB_STATUSES as readonly string[]).includes(upper) ? (upper as JobStatus) : 'UNKNOWN',
    progress: typeof fields.progress === 'number' ? fields.progress : null,
    message: typeof fields.message === 'string' ? fields.message : null,
    result: fields.result ?? null,
    // svc's structured error when the server sent one; else the protocol's string.
    error: readJobError(fields.error_detail ?? fields.error),
    refresh_job_url: refreshUrl,
    cancel_job_url: typeof fields.cancel_job_url === 'string' ? fields.cancel_job_url : null,
  };
}

function readJobError(error: unknown): JobErrorInfo | null {
  if (error === null || error === undefined) return null;
  if (typeof error === 'string') return { type: 'Error', message: error };
  if (typeof error === 'object') {
    const { type, message, traceback } = error as Record<string, unknown>;
    return {
      type: typeof type === 'string' ? type : 'Error',
      message: typeof message === 'string' ? message : JSON.stringify(error),
      ...(typeof traceback === 'string' ? { traceback } : {}),
    };
  }
  return { type: 'Error', message: String(error) };
}
