import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Standard Webhooks (https://www.standardwebhooks.com, spec v1): a delivery carries
 * `webhook-id`, `webhook-timestamp` (Unix seconds) and `webhook-signature`, a space-separated
 * list of `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, one per secret in use (two while
 * a secret is rotated). A secret is `whsec_` and the base64 of its key bytes.
 */

/** The spec's tolerance: a delivery older or newer than this is refused as a possible replay. */
export const WEBHOOK_TOLERANCE_SECONDS = 5 * 60;

const SECRET_PREFIX = 'whsec_';

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
}

/** The `webhook-signature` value for one message, signed with each secret given; `body` as text or as its UTF-8 bytes. */
export function signWebhook(secrets: readonly string[], id: string, timestamp: number, body: string | Buffer): string {
  return secrets.map((secret) => `v1,${hmac(secret, id, timestamp, body)}`).join(' ');
}

export interface VerifyOptions {
  /** Seconds a delivery's timestamp may differ from now (default 300, as the spec says). */
  toleranceSeconds?: number;
  /** The time to judge the timestamp by (default: now). */
  now?: Date;
}

type HeaderSource = Headers | Record<string, string | string[] | undefined>;

/**
 * Checks a delivery and returns its parsed JSON payload; throws WebhookVerificationError
 * saying what is wrong. `secret` may be several (a receiver that rotates its own). `body`
 * must be the raw bytes as received: re-serialised JSON would not match.
 */
export function verifyWebhook(secret: string | readonly string[], headers: HeaderSource, body: string | Uint8Array, options: VerifyOptions = {}): unknown {
  const id = header(headers, 'webhook-id');
  const timestampText = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  const timestamp = Number(timestampText);
  if (!/^\d+$/.test(timestampText)) throw new WebhookVerificationError(`webhook-timestamp is not Unix seconds: ${JSON.stringify(timestampText)}`);
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  const tolerance = options.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS;
  if (Math.abs(now - timestamp) > tolerance) {
    throw new WebhookVerificationError(`webhook-timestamp is ${now - timestamp} s from now, beyond the ${tolerance} s tolerance (a replay, or a wrong clock)`);
  }
  const text = typeof body === 'string' ? body : Buffer.from(body).toString('utf8');
  const presented = signatures
    .split(' ')
    .filter((entry) => entry.startsWith('v1,'))
    .map((entry) => Buffer.from(entry.slice(3), 'base64'));
  const secrets = typeof secret === 'string' ? [secret] : secret;
  for (const candidate of secrets) {
    const expected = Buffer.from(hmac(candidate, id, timestamp, text), 'base64');
    if (presented.some((signature) => signature.length === expected.length && timingSafeEqual(signature, expected))) return JSON.parse(text);
  }
  throw new WebhookVerificationError('no webhook-signature matches the secret: a wrong secret, or a body changed since it was signed');
}

function hmac(secret: string, id: string, timestamp: number, body: string | Buffer): string {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  return createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64');
}

function header(headers: HeaderSource, name: string): string {
  // Node gives header names in lower case; a framework or a hand-made object may not.
  const value = headers instanceof Headers ? headers.get(name) : headers[name] ?? Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text === null || text === '') throw new WebhookVerificationError(`the delivery has no ${name} header`);
  return text;
}
