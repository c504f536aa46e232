import type { IncomingHttpHeaders } from 'node:http';
import { HttpError } from '../http-error.js';
import { WEBHOOK_EVENTS, type WebhookEvent } from './webhook-events.js';
import { checkWebhookTarget, WebhookTargetError } from './webhook-target.js';

/**
 * The submit's request headers. Not body fields, as Cog and Replicate have them (`webhook`,
 * `webhook_events_filter`): svc's body is the function's own parameters, and a function may
 * well take a `webhook`. The names are those fields' (what users of those APIs know), as
 * headers, with no `X-` (RFC 6648), in the `webhook-*` family Standard Webhooks gives the
 * delivery's own headers. `Prefer` stays RFC 7240's.
 */
export const WEBHOOK_HEADER = 'webhook';
export const EVENTS_HEADER = 'webhook-events-filter';

/** Every event when the submit names none, as Cog and Replicate do. */
const DEFAULT_EVENTS: readonly WebhookEvent[] = WEBHOOK_EVENTS;
/** Longer URLs are refused: a delivery's target is kept with the job. */
const MOST_URL_CHARACTERS = 2048;

export interface WebhookRequest {
  url: string;
  events: WebhookEvent[];
}

/** Whether a submit asks for a webhook; an events filter without its URL is refused. */
export function asksForWebhook(headers: IncomingHttpHeaders): boolean {
  if (headers[WEBHOOK_HEADER] !== undefined) return true;
  if (headers[EVENTS_HEADER] !== undefined) throw refused(EVENTS_HEADER, 'names events for a webhook, but the Webhook header naming its URL is missing');
  return false;
}

/** The webhook a submit asks for, checked (its address resolved); null when it asks for none. */
export async function readWebhookRequest(headers: IncomingHttpHeaders, allowPrivate: boolean): Promise<WebhookRequest | null> {
  if (!asksForWebhook(headers)) return null;
  const url = single(headers, WEBHOOK_HEADER) as string;
  const filter = single(headers, EVENTS_HEADER);
  if (url.length > MOST_URL_CHARACTERS) throw refused(WEBHOOK_HEADER, `is ${url.length} characters long; a webhook URL has at most ${MOST_URL_CHARACTERS}`);
  try {
    await checkWebhookTarget(url.trim(), allowPrivate);
  } catch (error) {
    if (error instanceof WebhookTargetError) throw refused(WEBHOOK_HEADER, `names a URL webhooks are not sent to: ${error.message}`);
    throw error;
  }
  return { url: url.trim(), events: filter === undefined ? [...DEFAULT_EVENTS] : readEvents(filter) };
}

function readEvents(filter: string): WebhookEvent[] {
  const names = filter.split(',').map((name) => name.trim().toLowerCase()).filter((name) => name !== '');
  const unknown = names.find((name) => !(WEBHOOK_EVENTS as readonly string[]).includes(name));
  if (unknown !== undefined) throw refused(EVENTS_HEADER, `${JSON.stringify(unknown)} is not an event: use ${WEBHOOK_EVENTS.join(', ')}`);
  if (names.length === 0) throw refused(EVENTS_HEADER, `names no event: use ${WEBHOOK_EVENTS.join(', ')}`);
  return WEBHOOK_EVENTS.filter((event) => names.includes(event));
}

function single(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  if (Array.isArray(value)) throw refused(name, 'is given more than once');
  return value;
}

function refused(header: string, problem: string): HttpError {
  const name = header === WEBHOOK_HEADER ? 'Webhook' : 'Webhook-Events-Filter';
  return new HttpError(400, 'invalid_request', 'invalid_webhook', `the ${name} header ${problem}`, { detail: [{ field: name, message: problem }] });
}
