import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyWebhook } from '../client/index.js';
import { SvcError } from '../svc-error.js';

/** The environment variable `svc call --webhook-listen` reads the secret from: never on a command line, where `ps` shows it. */
export const WEBHOOK_SECRET_ENV = 'SVC_WEBHOOK_SECRET';

/** The most of one delivery read: an envelope with its result; more is refused. */
const MOST_BODY_BYTES = 64 * 2 ** 20;

export interface WebhookListener {
  port: number;
  /** Resolves once a `completed` delivery came, or after `timeoutMs` (false). */
  completed(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * A receiver on this machine for trying webhooks by hand (`svc call --webhook-listen`): it
 * answers each delivery 200, checks its signature with `secret` when given, and tells `print`
 * what came, one line each.
 */
export async function listenForWebhooks(host: string, port: number, secret: string | undefined, print: (line: string) => void): Promise<WebhookListener> {
  let onCompleted: () => void = () => {};
  let sawCompleted = false;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MOST_BODY_BYTES) request.destroy();
      else chunks.push(chunk);
    });
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      response.writeHead(200).end();
      let payload: { event?: string; status?: string; progress?: number; message?: string | null; chunks?: unknown[] } = {};
      let check = `signature not checked: set $${WEBHOOK_SECRET_ENV} to the secret svc webhook-secret gave`;
      try {
        if (secret !== undefined) {
          payload = verifyWebhook(secret, request.headers, body) as typeof payload;
          check = 'signature verified';
        } else {
          payload = JSON.parse(body) as typeof payload;
        }
      } catch (error) {
        check = `SIGNATURE NOT VERIFIED: ${(error as Error).message}`;
        try {
          payload = JSON.parse(body) as typeof payload;
        } catch {
          // not JSON: the line says what it can
        }
      }
      const detail = payload.event === 'streaming' ? ` ${payload.chunks?.length ?? 0} chunk(s)` : payload.event === 'progress' ? ` ${payload.progress ?? ''} ${payload.message ?? ''}`.trimEnd() : '';
      print(`webhook ${payload.event ?? '?'} ${payload.status ?? '?'}${detail} (${request.headers['webhook-id'] ?? 'no webhook-id'}; ${check})`);
      if (payload.event === 'completed') {
        sawCompleted = true;
        onCompleted();
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(new SvcError('usage', `--webhook-listen ${port}: cannot listen on ${host}:${port} (${error.code ?? error.message})`)),
    );
    server.listen(port, host, resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    completed: (timeoutMs) =>
      sawCompleted
        ? Promise.resolve(true)
        : new Promise((resolve) => {
            const timer = setTimeout(() => resolve(false), timeoutMs);
            onCompleted = () => {
              clearTimeout(timer);
              resolve(true);
            };
          }),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
