import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { guardedLookup, privateAddressReason } from './webhook-target.js';

/** What one attempt came to, which decides what happens to the delivery. */
export type AttemptOutcome =
  | { kind: 'delivered' }
  /** 429, 5xx, a time-out or a network error: tried again later. */
  | { kind: 'retry'; error: string }
  /** 410 Gone: the receiver wants no more; nothing more goes to its URL. */
  | { kind: 'gone'; error: string }
  /** Any other answer (4xx, a redirect): trying again would get the same. */
  | { kind: 'rejected'; error: string };

export interface Attempt {
  url: string;
  headers: Record<string, string>;
  body: string | Buffer;
  timeoutMs: number;
  allowPrivate: boolean;
}

/**
 * Connections are kept open between deliveries, as a receiver gets many: a connection each
 * cost a TCP (and TLS) handshake per event. Each connection's address is checked as it opens.
 */
const AGENTS = { 'http:': new HttpAgent({ keepAlive: true, maxSockets: 64 }), 'https:': new HttpsAgent({ keepAlive: true, maxSockets: 64 }) };

/** The most of a receiver's answer read, for the error it names: a receiver cannot make svc read megabytes. */
const MOST_BODY_BYTES = 1024;

/**
 * One POST of a delivery. Redirects are not followed (a 3xx is an answer like any other): a
 * public URL must not bounce svc to a private one. The whole attempt, connection to answer,
 * has `timeoutMs`.
 */
export function attemptDelivery(attempt: Attempt): Promise<AttemptOutcome> {
  const url = new URL(attempt.url);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  // A literal address connects without a lookup, so it is checked here.
  const literal = isIP(host) !== 0 && !attempt.allowPrivate ? privateAddressReason(host) : null;
  if (literal !== null) return Promise.resolve({ kind: 'rejected', error: `${host} is ${literal}` });
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    let settled = false;
    /** `cut`: the connection is dropped (a time-out, an error, an answer too long), else kept for the next delivery. */
    const settle = (outcome: AttemptOutcome, cut = false) => {
      if (settled) return;
      settled = true;
      if (cut) request.destroy();
      resolve(outcome);
    };
    const request = send(url, {
      method: 'POST',
      headers: { ...attempt.headers, 'content-length': String(Buffer.byteLength(attempt.body)) },
      lookup: guardedLookup(attempt.allowPrivate),
      agent: url.protocol === 'https:' ? AGENTS['https:'] : AGENTS['http:'],
    });
    // Until the answer has been read to its end: a receiver that drips an endless body is cut off too.
    const timer = setTimeout(() => {
      request.destroy();
      settle({ kind: 'retry', error: `no answer within ${attempt.timeoutMs / 1000} s` });
    }, attempt.timeoutMs);
    request.on('close', () => clearTimeout(timer));
    request.on('error', (error: NodeJS.ErrnoException) => {
      settle(error.name === 'WebhookTargetError' ? { kind: 'rejected', error: error.message } : { kind: 'retry', error: error.code === undefined || error.message.includes(error.code) ? error.message : `${error.code}: ${error.message}` }, true);
    });
    request.on('response', (response: IncomingMessage) => {
      const status = response.statusCode ?? 0;
      if (status >= 200 && status < 300) {
        // Read to its end, unseen, so the connection can carry the next delivery; past the limit, cut.
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MOST_BODY_BYTES) request.destroy();
        });
        settle({ kind: 'delivered' });
        return;
      }
      let text = '';
      response.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
        if (text.length >= MOST_BODY_BYTES) finish(true);
      });
      response.on('end', () => finish(false));
      response.on('error', () => finish(true));
      function finish(cut: boolean) {
        const said = text.slice(0, 200).replace(/\s+/g, ' ').trim();
        const error = `HTTP ${status}${said === '' ? '' : `: ${said}`}`;
        if (status === 410) settle({ kind: 'gone', error }, cut);
        else if (status === 429 || status >= 500) settle({ kind: 'retry', error }, cut);
        else if (status >= 300 && status < 400) settle({ kind: 'rejected', error: `HTTP ${status}: redirects are not followed (Location: ${response.headers.location ?? 'none'})` }, cut);
        else settle({ kind: 'rejected', error }, cut);
      }
    });
    request.end(attempt.body);
  });
}
