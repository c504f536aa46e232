import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson, startSvc, type RunningSvc } from '../support/server.js';
import { REPO_ROOT } from '../support/svc.js';

const LARGE_ANSWERS = join(REPO_ROOT, 'test/fixtures/gateway/large-answers.py');
const MIB = 2 ** 20;

/** A raw HTTP client that sends its request and reads nothing until `read` is called. */
function nonReadingClient(url: string, path: string, body: object, headers = '') {
  const { hostname, port } = new URL(url);
  const json = JSON.stringify(body);
  const socket: Socket = connect(Number(port), hostname, () => {
    socket.write(`POST ${path} HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nContent-Length: ${json.length}\r\n${headers}\r\n${json}`);
  });
  socket.pause();
  return {
    /** Reads what the server sent until it closes the connection: the head and how many body bytes came. */
    read: () =>
      new Promise<{ head: string; bodyBytes: number }>((resolve, reject) => {
        const parts: Buffer[] = [];
        socket.on('data', (chunk: Buffer) => parts.push(chunk));
        socket.on('error', reject);
        socket.on('close', () => {
          const all = Buffer.concat(parts);
          const end = all.indexOf('\r\n\r\n');
          resolve({ head: all.subarray(0, end).toString(), bodyBytes: all.length - end - 4 });
        });
        socket.resume();
      }),
  };
}

describe('clients that ask for a large answer and do not read it', () => {
  let server: RunningSvc;
  beforeAll(async () => {
    server = await startSvc([LARGE_ANSWERS, '--send-timeout', '1']);
  });
  afterAll(async () => {
    await server.stop();
  });

  it('are disconnected after --send-timeout with the answer cut, while a client that reads gets it whole', async () => {
    const idle = nonReadingClient(server.url, '/large', { count: 32 * MIB });
    // The server's log says when it let the client go: no guess at how long that takes.
    await expect.poll(() => server.logs(), { timeout: 20_000, interval: 50 }).toMatch(/POST \/large 200 \d+ms \(disconnected: the client read nothing for --send-timeout\)/);
    const reader = await postJson(`${server.url}/large`, { unit: 'é😀', count: 4 * MIB });
    expect([reader.status, reader.body.length, reader.body.slice(0, 6)]).toEqual([200, 12 * MIB, 'é😀é😀']);

    const cut = await idle.read();
    const length = Number(/content-length: (\d+)/i.exec(cut.head)?.[1]);
    expect(length).toBe(32 * MIB + 2);
    expect(cut.bodyBytes).toBeLessThan(length);
  }, 60_000);

  it('are disconnected after --send-timeout from an event stream too, whose chunks would pile up', async () => {
    nonReadingClient(server.url, '/large-chunks', { count: 8 * MIB, chunks: 4 }, 'Accept: text/event-stream\r\n');
    await expect.poll(() => server.logs(), { timeout: 20_000, interval: 50 }).toMatch(/POST \/large-chunks 200 \d+ms \(disconnected: the client read nothing for --send-timeout\)/);
  }, 60_000);

  it('sends a large answer whole to a client that reads, in dedicated and as a job, with its exact length', async () => {
    const direct = await fetch(`${server.url}/large-object`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ unit: 'a"\n😀', count: MIB }),
    });
    const text = await direct.text();
    expect(Number(direct.headers.get('content-length'))).toBe(Buffer.byteLength(text));
    expect(JSON.parse(text)).toEqual({ text: 'a"\n😀'.repeat(MIB), items: [1, 2.5, null, true, { unit: 'a"\n😀' }], empty: {} });

    const accepted = await postJson(`${server.url}/large`, { unit: 'ü', count: 8 * MIB }, { prefer: 'respond-async' });
    const job = await fetch(accepted.body.refresh_job_url, { headers: { prefer: 'wait=20' } });
    const envelope = (await job.json()) as { status: string; result: string };
    expect([envelope.status, envelope.result.length, envelope.result.slice(0, 2)]).toEqual(['FINISHED', 8 * MIB, 'üü']);
  }, 60_000);
});
