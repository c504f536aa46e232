/**
 * When to send a request again, as data: a 500 once after a short pause (a passing fault of
 * the server), a 503 (queue full, or starting) with exponential backoff that never retries
 * sooner than the server's `Retry-After` (RFC 9110, 10.2.3), and a look at a job whose
 * server cannot be reached with backoff (1 + 2 + 4 + 8 s by default).
 */
export interface RetryPolicy {
  /** Times a 500 is retried. */
  serverErrorRetries: number;
  serverErrorDelayMs: number;
  /** Times a 503 is retried. */
  unavailableRetries: number;
  /** First backoff for a 503; doubled on every retry. */
  unavailableDelayMs: number;
  /** A 503 whose Retry-After asks for longer than this is not retried. */
  maxDelayMs: number;
  /** Times reading a job is tried again when the server cannot be reached. */
  lostConnectionRetries: number;
  /** First pause before such a retry; doubled on every one. */
  lostConnectionDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  serverErrorRetries: 1,
  serverErrorDelayMs: 300,
  unavailableRetries: 5,
  unavailableDelayMs: 500,
  maxDelayMs: 60_000,
  lostConnectionRetries: 4,
  lostConnectionDelayMs: 1_000,
};

export interface FailedAttempt {
  status: number;
  /** `error.type` of the error body: a 500 saying the user's own function raised is not a passing fault. */
  errorType: string | null;
  retryAfter: string | null;
  /** Earlier retries of the same request for this status. */
  retries: number;
}

/** Milliseconds to wait before retrying, or null when the failure is final. */
export function retryDelayMs(policy: RetryPolicy, attempt: FailedAttempt, now: number = Date.now()): number | null {
  if (attempt.status === 500) {
    // The function ran and raised: running it again would repeat its side effects for the same error.
    if (attempt.errorType === 'endpoint_error') return null;
    return attempt.retries < policy.serverErrorRetries ? policy.serverErrorDelayMs : null;
  }
  if (attempt.status === 503) {
    if (attempt.retries >= policy.unavailableRetries) return null;
    const backoff = policy.unavailableDelayMs * 2 ** attempt.retries;
    const delay = Math.max(backoff, readRetryAfterMs(attempt.retryAfter, now) ?? 0);
    return delay <= policy.maxDelayMs ? delay : null;
  }
  return null;
}

/** `Retry-After` as delay-seconds or an HTTP-date, in milliseconds from `now`; null when absent or unreadable. */
export function readRetryAfterMs(header: string | null, now: number): number | null {
  if (header === null || header.trim() === '') return null;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}
