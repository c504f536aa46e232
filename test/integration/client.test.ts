import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  ConnectionError,
  HttpStatusError,
  JobCancelledError,
  JobFailedError,
  JobTimeoutError,
  NotFoundError,
  PermissionError,
  ServiceClient,
  run,
  type ClientOptions,
  type ProgressUpdate,
} from '../../src/client/index.js';
import { closedPort } from '../support/ports.js';
import { startSvc, type RunningSvc } from '../support/server.js';
import { REPO_ROOT } from '../support/svc.js';

const CALLS = join(REPO_ROOT, 'test/fixtures/jobs/calls.py');
const MAIN_KEY = 'main-key-0123456789';
const NOOP_KEY = 'noop-only-key-9876';

interface SentRequest {
  method: string;
  url: string;
  prefer: string | null;
  status: number;
  at: number;
}

/** The real fetch, recording what went over the wire, so a test can count requests and read headers. */
function recordingFetch(): { fetch: typeof fetch; sent: SentRequest[] } {
  const sent: SentRequest[] = [];
  const recorded: typeof fetch = async (input, init) => {
    const at = performance.now();
    const response = await fetch(input, init);
    const headers = new Headers(init?.headers);
    sent.push({ method: init?.method ?? 'GET', url: String(input), prefer: headers.get('prefer'), status: response.status, at });
    return response;
  };
  return { fetch: recorded, sent };
}

function expectRejection<T extends Error>(promise: Promise<unknown>, type: new (...args: any[]) => T): Promise<T> {
  return promise.then(
    () => {
      throw new Error(`expected ${type.name}, but the call succeeded`);
    },
    (error: unknown) => {
      expect(error).toBeInstanceOf(type);
      return error as T;
    },
  );
}

describe('the client against a serverless server', () => {
  let server: RunningSvc;
  const client = (options: ClientOptions = {}) => new ServiceClient({ baseUrl: server.url, apiKey: MAIN_KEY, ...options });

  beforeAll(async () => {
    const keysFile = join(mkdtempSync(join(tmpdir(), 'svc-client-keys-')), 'keys.json');
    writeFileSync(keysFile, JSON.stringify({ keys: [{ name: 'noop', key: NOOP_KEY, endpoints: ['/noop'] }] }));
    server = await startSvc(
      [CALLS, '--compute', 'serverless', '--api-keys', keysFile, '--job-timeout', '1', '--endpoint-timeout', '/progress=30', '--endpoint-timeout', '/slow=30'],
      { SERVICE_API_KEY: MAIN_KEY },
    );
  });
  afterAll(async () => {
    await server.stop();
  });

  it('returns the result of a job and reports its progress on the way', async () => {
    const updates: ProgressUpdate[] = [];
    const result = await client().run('/progress', { count: 4, pause: 0.4 }, { onProgress: (update) => updates.push(update) });
    expect(result).toEqual({ steps: 4 });
    const midway = updates.find((update) => update.status === 'PROCESSING' && (update.progress ?? 0) > 0);
    expect(midway?.message).toMatch(/^step \d of 4$/);
    expect(updates.at(-1)).toMatchObject({ status: 'FINISHED', progress: 1 });
    const progress = updates.map((update) => update.progress ?? 0);
    expect([...progress].sort((a, b) => a - b)).toEqual(progress);
  });

  it('gets a quick job in one request, held by the server with Prefer: wait', async () => {
    const { fetch, sent } = recordingFetch();
    expect(await client({ fetch }).run('/noop')).toEqual({ ok: true });
    expect(sent).toEqual([expect.objectContaining({ method: 'POST', url: `${server.url}/noop`, prefer: 'wait=1', status: 200 })]);
  });

  it('follows refresh_job_url every poll interval when told not to ask the server to wait', async () => {
    const { fetch, sent } = recordingFetch();
    const result = await client({ fetch, waitSeconds: 0, pollIntervalMs: 250 }).run('/progress', { count: 3, pause: 0.3 });
    expect(result).toEqual({ steps: 3 });
    const [submit, ...looks] = sent;
    expect(submit).toMatchObject({ method: 'POST', prefer: null });
    expect(looks.length).toBeGreaterThanOrEqual(3);
    for (const look of looks) expect(look).toMatchObject({ method: 'GET', url: expect.stringMatching(/\/v1\/jobs\/[0-9a-f]{32}$/), prefer: null });
    const gaps = looks.map((look, index) => look.at - (index === 0 ? submit!.at : looks[index - 1]!.at));
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(240);
  });

  it('rejects a FAILED job with JobFailedError carrying the envelope', async () => {
    const failed = await expectRejection(client().run('/fail', { reason: 'out of memory' }), JobFailedError);
    expect(failed.status).toBe('FAILED');
    expect(failed.error).toEqual({ type: 'RuntimeError', message: 'out of memory' });
    expect(failed.envelope).toMatchObject({ status: 'FAILED', error: { type: 'RuntimeError' } });
    expect(failed.message).toMatch(/^job [0-9a-f]{32} failed: RuntimeError: out of memory$/);
  });

  it('rejects a job that outlives --job-timeout with JobTimeoutError', async () => {
    const timedOut = await expectRejection(client().run('/hang'), JobTimeoutError);
    expect(timedOut.envelope).toMatchObject({ status: 'TIMEOUT', error: { type: 'Timeout' } });
    expect(timedOut.message).toContain('time-out of 1 s');
  });

  it('cancels a running job through cancel_job_url when its signal aborts', async () => {
    const abort = new AbortController();
    const { fetch, sent } = recordingFetch();
    const cancelled = await expectRejection(
      client({ fetch }).run('/slow', { seconds: 30 }, {
        signal: abort.signal,
        onProgress: (update) => {
          if (update.status === 'PROCESSING') abort.abort();
        },
      }),
      JobCancelledError,
    );
    expect(cancelled.envelope?.status).toBe('CANCELLED');
    expect(sent.at(-1)).toMatchObject({ method: 'POST', url: cancelled.envelope?.cancel_job_url, status: 200 });
    expect((await client().refresh(cancelled.envelope!)).status).toBe('CANCELLED');
  });

  it('cancels a job whose submit is still being held when the signal aborts', async () => {
    const cancelled = await expectRejection(client().run('/slow', { seconds: 30 }, { signal: AbortSignal.timeout(200) }), JobCancelledError);
    expect(cancelled.envelope?.status).toBe('CANCELLED');
    expect(await client().run('/noop')).toEqual({ ok: true });
  });

  it('maps 401 to AuthenticationError, saying whether a key was sent', async () => {
    const missing = await expectRejection(client({ apiKey: null }).run('/noop'), AuthenticationError);
    expect(missing.status).toBe(401);
    expect(missing.message).toContain('no API key was sent: set SERVICE_API_KEY');
    const wrong = await expectRejection(client({ apiKey: 'not-a-key' }).run('/noop'), AuthenticationError);
    expect(wrong.message).toContain('the API key is not valid for this service');
  });

  it('maps 403 to PermissionError for a key outside its endpoints', async () => {
    expect(await client({ apiKey: NOOP_KEY }).run('/noop')).toEqual({ ok: true });
    const refused = await expectRejection(client({ apiKey: NOOP_KEY }).run('/progress'), PermissionError);
    expect(refused.message).toBe(`the API key may not call ${server.url}/progress (403 forbidden: this key may not call /progress)`);
  });

  it("maps 404 to NotFoundError for an unknown endpoint and for another key's job", async () => {
    const unknown = await expectRejection(client().run('/nope'), NotFoundError);
    expect(unknown.message).toContain(`nothing at POST ${server.url}/nope`);
    const submission = await client().submit('/slow', { seconds: 0.2 }, { waitSeconds: 0 });
    expect(submission.kind).toBe('job');
    if (submission.kind !== 'job') return;
    await expectRejection(client({ apiKey: NOOP_KEY }).refresh(submission.envelope), NotFoundError);
    expect(await client().follow(submission.envelope)).toBe(0.2);
  });

  it('reports invalid input with the fields the server named', async () => {
    const invalid = await expectRejection(client().run('/progress', { count: 'many' }), HttpStatusError);
    expect(invalid.status).toBe(422);
    expect(invalid.message).toContain('count: must be an integer');
    expect(invalid.message.split('count: must be an integer')).toHaveLength(2); // said once, not again in brackets
  });

  it('reads the base URL and key from SERVICE_INFER_BACKEND_URL and SERVICE_API_KEY', async () => {
    const fromEnv = new ServiceClient({ env: { SERVICE_INFER_BACKEND_URL: `${server.url}/`, SERVICE_API_KEY: MAIN_KEY } });
    expect(fromEnv.baseUrl).toBe(server.url);
    expect(await fromEnv.run('noop')).toEqual({ ok: true });
    const saved = { url: process.env.SERVICE_INFER_BACKEND_URL, key: process.env.SERVICE_API_KEY };
    process.env.SERVICE_INFER_BACKEND_URL = server.url;
    process.env.SERVICE_API_KEY = MAIN_KEY;
    try {
      expect(await run('/v1/noop')).toEqual({ ok: true });
    } finally {
      restoreEnv('SERVICE_INFER_BACKEND_URL', saved.url);
      restoreEnv('SERVICE_API_KEY', saved.key);
    }
    expect(new ServiceClient({ env: {} }).baseUrl).toBe('http://localhost:8000');
  });
});

describe('the client against a dedicated server', () => {
  let server: RunningSvc;
  const client = (options: ClientOptions = {}) => new ServiceClient({ baseUrl: server.url, apiKey: null, ...options });

  beforeAll(async () => {
    server = await startSvc([CALLS, '--compute', 'dedicated', '--queue-size', '1', '--cancel-grace', '1']);
  });
  afterAll(async () => {
    await server.stop();
  });

  it('returns the body as the result', async () => {
    const { fetch, sent } = recordingFetch();
    expect(await client({ fetch }).run('/progress', { count: 2, pause: 0 })).toEqual({ steps: 2 });
    expect(sent).toHaveLength(1);
  });

  it("turns the function's exception into JobFailedError, without running it again", async () => {
    const { fetch, sent } = recordingFetch();
    const failed = await expectRejection(client({ fetch }).run('/fail'), JobFailedError);
    expect(failed.envelope).toBeNull();
    expect(failed.error).toEqual({ type: 'RuntimeError', message: 'the GPU caught fire' });
    expect(sent.map((request) => request.status)).toEqual([500]);
  });

  it('retries a 500 once after a short delay', async () => {
    const marker = join(mkdtempSync(join(tmpdir(), 'svc-flaky-')), 'crashed');
    const { fetch, sent } = recordingFetch();
    expect(await client({ fetch }).run('/flaky', { marker })).toBe('recovered');
    expect(sent.map((request) => request.status)).toEqual([500, 200]);
    expect(sent[1]!.at - sent[0]!.at).toBeGreaterThanOrEqual(250);
  });

  it('retries a 503 (queue full) no sooner than Retry-After says', async () => {
    const busy = [fetch(`${server.url}/slow`, { method: 'POST', body: '{"seconds": 1.5}', headers: { 'content-type': 'application/json' } })];
    await new Promise((resolve) => setTimeout(resolve, 300));
    busy.push(fetch(`${server.url}/slow`, { method: 'POST', body: '{"seconds": 0.5}', headers: { 'content-type': 'application/json' } }));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const { fetch: recorded, sent } = recordingFetch();
    // Queues are per endpoint: /slow's holds one call, and one runs.
    expect(await client({ fetch: recorded }).run('/slow', { seconds: 0 })).toBe(0);
    expect(sent.map((request) => request.status)).toEqual([503, 200]);
    // svc answers a full queue with Retry-After: 5.
    expect(sent[1]!.at - sent[0]!.at).toBeGreaterThanOrEqual(4900);
    await Promise.all(busy);
  });

  it('stops a call by closing the connection when the signal aborts, freeing the worker', async () => {
    const cancelled = await expectRejection(client().run('/slow', { seconds: 30 }, { signal: AbortSignal.timeout(300) }), JobCancelledError);
    expect(cancelled.envelope).toBeNull();
    expect(await client().run('/noop')).toEqual({ ok: true });
  });

  it('asks for a job envelope with respond-async, and follows it', async () => {
    const submission = await client().submit('/progress', { count: 2, pause: 0.1 }, { respondAsync: true, waitSeconds: 0 });
    expect(submission).toMatchObject({ kind: 'job', envelope: { status: expect.stringMatching(/QUEUED|PROCESSING/) } });
    if (submission.kind === 'job') expect(await client().follow(submission.envelope)).toEqual({ steps: 2 });
  });

  it('says ConnectionError when nothing listens', async () => {
    const port = await closedPort();
    const closed = await expectRejection(new ServiceClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: null }).run('/noop'), ConnectionError);
    expect(closed.message).toBe(`cannot reach http://127.0.0.1:${port}/noop: connect ECONNREFUSED 127.0.0.1:${port}`);
  });
});

describe('the client following a job over a connection that drops', () => {
  it('reads the job again after the connection is lost, and gives up only after its retries', async () => {
    let looks = 0;
    let dropFirst = 2;
    const server = createHttpServer((request, response) => {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const envelope = (status: string) => ({
        id: 'j1', job_id: 'j1', status, progress: 0, message: null, result: status === 'FINISHED' ? { ok: true } : null, error: null,
        refresh_job_url: `${base}/v1/jobs/j1`, cancel_job_url: `${base}/v1/jobs/j1/cancel`,
      });
      if (request.method === 'POST') return response.end(JSON.stringify(envelope('QUEUED')));
      looks += 1;
      if (looks <= dropFirst) return request.socket.destroy(); // as a restarting proxy or a network blip does
      response.end(JSON.stringify(envelope('FINISHED')));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const client = new ServiceClient({ baseUrl: url, apiKey: null, pollIntervalMs: 10, retry: { lostConnectionDelayMs: 10 } });
      expect(await client.run('/x')).toEqual({ ok: true });
      expect(looks).toBe(3);

      looks = 0;
      dropFirst = Infinity;
      const lost = await expectRejection(new ServiceClient({ baseUrl: url, apiKey: null, pollIntervalMs: 10, retry: { lostConnectionRetries: 2, lostConnectionDelayMs: 10 } }).run('/x'), ConnectionError);
      expect([looks, lost.message]).toEqual([3, expect.stringContaining(`cannot reach ${url}/v1/jobs/j1`)]);
    } finally {
      server.close();
    }
  });
});

function restoreEnv(name: string, value: string | undefined): void {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}

describe('the package', () => {
  it('exports the client, bundled, under its npm name (import from "svc-ml")', async () => {
    const script = "const m = await import('svc-ml'); console.log([typeof m.run, typeof m.ServiceClient, typeof m.JobFailedError].join(' '))";
    const imported = await execa(process.execPath, ['--input-type=module', '-e', script], { cwd: REPO_ROOT });
    expect(imported.stdout).toBe('function function function');
  });
});
