import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson, startSvc, type RunningSvc } from '../support/server.js';
import { type Envelope } from '../support/job-envelope.js';
import { REPO_ROOT } from '../support/svc.js';

const JOBS = join(REPO_ROOT, 'test/fixtures/jobs-server/jobs.py');

async function getJson(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await fetch(url, { headers });
  return { status: response.status, body: await response.json(), headers: response.headers };
}

async function waitForStatus(url: string, statuses: string[], headers: Record<string, string> = {}): Promise<Envelope> {
  let envelope: Envelope | undefined;
  await expect
    .poll(async () => {
      envelope = (await getJson(url, headers)).body;
      return statuses.includes(envelope!.status);
    }, { timeout: 20_000, interval: 50 })
    .toBe(true);
  return envelope!;
}

describe('the job API (serverless compute, localhost provider)', () => {
  let server: RunningSvc;
  beforeAll(async () => {
    server = await startSvc([JOBS, '--queue-size', '2', '--job-ttl', '2', '--cancel-grace', '2', '--endpoint-timeout', '/sleep=1.5']);
  });
  afterAll(async () => {
    await server.stop();
  });

  it('answers a submit at once with an envelope, then reports progress and the result', async () => {
    const submitted = await postJson(`${server.url}/steps`, { count: 4, pause: 0.3 });
    expect(submitted.status).toBe(200);
    const envelope: Envelope = submitted.body;
    expect(envelope).toMatchObject({ progress: 0, result: null, error: null });
    expect(['QUEUED', 'PROCESSING']).toContain(envelope.status);
    expect(envelope.job_id).toBe(envelope.id);
    expect(envelope.id).toMatch(/^[0-9a-f]{32}$/);
    expect(envelope.refresh_job_url).toBe(`${server.url}/v1/jobs/${envelope.id}`);
    expect(envelope.cancel_job_url).toBe(`${server.url}/v1/jobs/${envelope.id}/cancel`);
    expect(submitted.headers.get('content-location')).toBe(`/v1/jobs/${envelope.id}`);

    const midway = await waitForStatus(envelope.refresh_job_url, ['PROCESSING']);
    await expect.poll(async () => (await getJson(midway.refresh_job_url)).body.progress, { timeout: 10_000 }).toBeGreaterThan(0);
    const running: Envelope = (await getJson(envelope.refresh_job_url)).body;
    expect(running.message).toMatch(/^step \d of 4$/);

    const done = await waitForStatus(envelope.refresh_job_url, ['FINISHED']);
    expect(done).toMatchObject({ status: 'FINISHED', progress: 1, result: { steps: 4 }, error: null });
    // Reading never consumes a job: the toolkit's status URL shows the same.
    expect((await getJson(`${server.url}/status?job_id=${envelope.id}`)).body).toMatchObject({ status: 'FINISHED', result: { steps: 4 } });
    expect((await getJson(envelope.refresh_job_url)).body.status).toBe('FINISHED');
  });

  it('validates at submit: a 422 and no job', async () => {
    const invalid = await postJson(`${server.url}/steps`, { count: 'many' });
    expect(invalid.status).toBe(422);
    expect(invalid.body.error.detail).toEqual([{ field: 'count', message: 'must be an integer' }]);
  });

  it('runs the jobs of an endpoint in the order they were submitted', async () => {
    const tags = ['a', 'b', 'c'];
    const envelopes: Envelope[] = [];
    for (const tag of tags) envelopes.push((await postJson(`${server.url}/order`, { tag })).body);
    const finished = await Promise.all(envelopes.map((envelope) => waitForStatus(envelope.refresh_job_url, ['FINISHED'])));
    expect(finished.map((envelope) => envelope.result)).toEqual(tags);
    const finishedAt = finished.map((envelope: any) => Date.parse(envelope.finished_at));
    expect([...finishedAt].sort((a, b) => a - b)).toEqual(finishedAt);
  });

  it('holds the answer with Prefer: wait until the job ends', async () => {
    const answer = await postJson(`${server.url}/order`, { tag: 'waited' }, { prefer: 'wait=10' });
    expect(answer.body).toMatchObject({ status: 'FINISHED', result: 'waited' });
    expect(answer.headers.get('preference-applied')).toBe('wait=10');
  });

  it('fails a job whose function raises, with the exception type and message', async () => {
    const envelope: Envelope = (await postJson(`${server.url}/fail`, {})).body;
    const failed = await waitForStatus(envelope.refresh_job_url, ['FAILED']);
    // The message as a string, as the hosted API and the apipod toolkit give it; svc's detail beside it.
    expect([failed.error, failed.error_detail]).toEqual(['the GPU caught fire', { type: 'RuntimeError', message: 'the GPU caught fire' }]);
  });

  it('cancels a queued job at once and a running one in its worker, which then serves again', async () => {
    const running: Envelope = (await postJson(`${server.url}/spin`, { seconds: 30 })).body;
    await waitForStatus(running.refresh_job_url, ['PROCESSING']);
    const queued: Envelope = (await postJson(`${server.url}/order`, { tag: 'never' })).body;
    expect(queued.status).toBe('QUEUED');

    const cancelledQueued = await fetch(queued.cancel_job_url, { method: 'POST' });
    expect(cancelledQueued.status).toBe(200);
    expect(((await cancelledQueued.json()) as Envelope).status).toBe('CANCELLED');

    const cancelledRunning = await fetch(running.cancel_job_url, { method: 'POST' });
    expect(((await cancelledRunning.json()) as Envelope).status).toBe('CANCELLED');
    expect((await getJson(queued.refresh_job_url)).body).toMatchObject({ status: 'CANCELLED', result: null });

    const after = await postJson(`${server.url}/order`, { tag: 'next' }, { prefer: 'wait=15' });
    expect(after.body).toMatchObject({ status: 'FINISHED', result: 'next' });
    // Cancelling an ended job changes nothing.
    const again = await fetch(after.body.cancel_job_url, { method: 'POST' });
    expect(((await again.json()) as Envelope).status).toBe('FINISHED');
  });

  it('interrupts a job blocked in time.sleep when cancelled: it ends CANCELLED and the same worker takes the next job at once', async () => {
    const before = await postJson(`${server.url}/worker`, {}, { prefer: 'wait=10' });
    const envelope: Envelope = (await postJson(`${server.url}/sleep`, { seconds: 30 })).body;
    await waitForStatus(envelope.refresh_job_url, ['PROCESSING']);
    const cancelledAt = Date.now();
    await fetch(envelope.cancel_job_url, { method: 'POST' });
    const after = await postJson(`${server.url}/worker`, {}, { prefer: 'wait=10' });
    expect(after.body.status).toBe('FINISHED');
    // A worker that ignored the cancel would be killed at the end of --cancel-grace (2 s) and
    // replaced: the next job would run later, in another process.
    expect(after.body.result.pid).toBe(before.body.result.pid);
    expect(after.body.result.started_at * 1000 - cancelledAt).toBeLessThan(2000);
    const cancelled: Envelope = (await getJson(envelope.refresh_job_url)).body;
    expect([cancelled.status, cancelled.result, cancelled.error]).toEqual(['CANCELLED', null, null]);
    expect(server.logs()).not.toContain('did not stop within');
  });

  it('times a job out with TIMEOUT and frees the worker', async () => {
    const envelope: Envelope = (await postJson(`${server.url}/sleep`, { seconds: 30 })).body;
    const timedOut = await waitForStatus(envelope.refresh_job_url, ['TIMEOUT']);
    expect(timedOut.error).toContain('time-out of 1.5 s');
    expect(timedOut.error_detail?.type).toBe('Timeout');
    expect((await postJson(`${server.url}/order`, { tag: 'after' }, { prefer: 'wait=10' })).body.status).toBe('FINISHED');
  });

  it('streams a generator: STREAMING while chunks arrive, SSE events, the chunks as the result', async () => {
    const envelope: Envelope = (await postJson(`${server.url}/words`, { text: 'alpha beta gamma', pause: 0.3 })).body;
    const events: EventSourceMessage[] = [];
    const parser = createParser({ onEvent: (event) => events.push(event) });
    const response = await fetch(envelope.stream_url);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    let sawStreaming = false;
    const poll = setInterval(async () => {
      if ((await getJson(envelope.refresh_job_url)).body.status === 'STREAMING') sawStreaming = true;
    }, 50);
    const decoder = new TextDecoder();
    for await (const chunk of response.body!) parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
    clearInterval(poll);
    expect(events.filter((event) => event.event === 'chunk').map((event) => JSON.parse(event.data))).toEqual(['alpha', 'beta', 'gamma']);
    const final = events.at(-1)!;
    expect(final.event).toBe('status');
    // Its text chunks joined, as the apipod toolkit gives a generator's result.
    expect(JSON.parse(final.data)).toMatchObject({ status: 'FINISHED', result: 'alphabetagamma' });
    expect(sawStreaming).toBe(true);
  });

  it("carries the apipod toolkit's links and metrics, and serves its job routes of both generations", async () => {
    const envelope: Envelope = (await postJson(`${server.url}/steps`, { count: 1, pause: 0 })).body;
    expect(envelope.links).toEqual({ status: `${server.url}/status/${envelope.id}`, cancel: `${server.url}/cancel/${envelope.id}` });
    const done = await waitForStatus(envelope.links.status, ['FINISHED']);
    expect(done).toMatchObject({ job_id: envelope.id, result: { steps: 1 }, metrics: { created_at: envelope.created_at, execution_time_s: expect.any(Number) } });
    // 1.0.5's POST /status?job_id=, and an id pasted with quotes around it, as the toolkit reads
    // it; a job_id given twice counts by its last, as the toolkit's server (Starlette) reads it.
    for (const [method, url] of [['POST', `/status?job_id=${envelope.id}`], ['GET', `/status/%22${envelope.id}%22`], ['GET', `/status?job_id='${envelope.id}'`], ['GET', `/status?job_id=stale&job_id=${envelope.id}`]]) {
      const response = await fetch(`${server.url}${url}`, { method });
      expect([method, url, response.status, ((await response.json()) as Envelope).result]).toEqual([method, url, 200, { steps: 1 }]);
    }
    const unknown = await fetch(`${server.url}/status/0123456789abcdef0123456789abcdef`);
    expect([unknown.status, ((await unknown.json()) as any).error.code]).toEqual([404, 'unknown_job']);
    const wrongMethod = await fetch(`${server.url}/cancel/${envelope.id}`);
    expect([wrongMethod.status, wrongMethod.headers.get('allow')]).toEqual([405, 'POST']);
  });

  it("cancels a running job at the toolkit's /cancel/{id}, and refuses an action the toolkit does not know", async () => {
    const envelope: Envelope = (await postJson(`${server.url}/sleep`, { seconds: 30 })).body;
    await waitForStatus(envelope.refresh_job_url, ['PROCESSING']);
    const refused = await fetch(`${envelope.links.cancel}?action=explode`, { method: 'POST' });
    expect([refused.status, ((await refused.json()) as any).error.detail]).toEqual([422, [{ field: 'action', message: 'must be cancel or interrupt' }]]);
    const cancelled = await fetch(`${envelope.links.cancel}?action=interrupt`, { method: 'POST' });
    expect(((await cancelled.json()) as Envelope).status).toBe('CANCELLED');
    expect((await postJson(`${server.url}/steps`, { count: 1, pause: 0 }, { prefer: 'wait=10' })).body.status).toBe('FINISHED');
  });

  it("streams a generator at the toolkit's /stream/{id}: each chunk a data record, the job as `event: job`", async () => {
    const envelope: Envelope = (await postJson(`${server.url}/lines`, { text: 'one|two\nthree' })).body;
    expect(envelope.links.stream).toBe(`${server.url}/stream/${envelope.id}`);
    const events: EventSourceMessage[] = [];
    const parser = createParser({ onEvent: (event) => events.push(event) });
    const response = await fetch(envelope.links.stream!);
    const decoder = new TextDecoder();
    for await (const chunk of response.body!) parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
    expect(events.filter((event) => event.event === undefined).map((event) => event.data)).toEqual(['one', 'two\nthree']);
    const snapshots = events.filter((event) => event.event === 'job').map((event) => JSON.parse(event.data) as Envelope);
    expect(snapshots.at(-1)).toMatchObject({ job_id: envelope.id, status: 'FINISHED', result: 'onetwo\nthree' });
    expect(events.at(-1)!.event).toBe('job');
  });

  it('answers 503 with Retry-After when the queue is full, and creates no job', async () => {
    const blocker: Envelope = (await postJson(`${server.url}/spin`, { seconds: 30 })).body;
    await waitForStatus(blocker.refresh_job_url, ['PROCESSING']);
    const queued = [(await postJson(`${server.url}/order`, { tag: '1' })).body, (await postJson(`${server.url}/order`, { tag: '2' })).body];
    const refused = await postJson(`${server.url}/order`, { tag: '3' });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    await fetch(blocker.cancel_job_url, { method: 'POST' });
    for (const envelope of queued) expect((await waitForStatus(envelope.refresh_job_url, ['FINISHED'])).status).toBe('FINISHED');
  });

  it('forgets an ended job after its TTL: 404 with a clear body', async () => {
    const done = (await postJson(`${server.url}/order`, { tag: 'short-lived' }, { prefer: 'wait=10' })).body as Envelope;
    expect(done.status).toBe('FINISHED');
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const gone = await getJson(done.refresh_job_url);
    expect(gone.status).toBe(404);
    expect(gone.body.error).toMatchObject({ type: 'not_found', code: 'unknown_job' });
  });

  it('says 404 for a job that never existed', async () => {
    expect((await getJson(`${server.url}/v1/jobs/0123456789abcdef0123456789abcdef`)).status).toBe(404);
    expect((await getJson(`${server.url}/status?job_id=nope`)).status).toBe(404);
  });

  it('answers another method on a job URL with a 405 naming the one it takes', async () => {
    const response = await fetch(`${server.url}/v1/jobs/0123456789abcdef0123456789abcdef/cancel`);
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    expect(((await response.json()) as any).error).toMatchObject({ type: 'method_not_allowed', message: 'GET is not allowed on /v1/jobs/0123456789abcdef0123456789abcdef/cancel; use POST' });
  });

  it('answers URLs the router cannot read in the one error shape', async () => {
    const badEncoding = await getJson(`${server.url}/v1/jobs/%E0%A4%A`);
    expect(badEncoding.status).toBe(400);
    expect(badEncoding.body.error).toMatchObject({ status: 400, type: 'invalid_request', message: expect.stringContaining('not a valid url component') });
    const longId = await getJson(`${server.url}/v1/jobs/${'a'.repeat(101)}`);
    expect(longId.body.error).toMatchObject({ status: 404, code: 'unknown_job' });
    const tooLong = await getJson(`${server.url}/v1/jobs/${'a'.repeat(1001)}`);
    expect(tooLong.body.error).toMatchObject({ status: 414, type: 'invalid_request' });
  });
});

describe('the job API with API keys', () => {
  let server: RunningSvc;
  const keysFile = join(mkdtempSync(join(tmpdir(), 'svc-keys-')), 'keys.json');
  const headers = (key: string) => ({ authorization: `Bearer ${key}` });
  beforeAll(async () => {
    writeFileSync(
      keysFile,
      JSON.stringify({
        keys: [
          { name: 'orders', key: 'orders-key-123', endpoints: ['/order'] },
          { name: 'other', key: 'other-key-4567', endpoints: '*' },
        ],
      }),
    );
    server = await startSvc([JOBS, '--api-keys', keysFile], { SERVICE_API_KEY: 'main-key-abcdef' });
  });
  afterAll(async () => {
    await server.stop();
  });

  it('needs a bearer key: 401 with WWW-Authenticate when missing, malformed or unknown', async () => {
    for (const authorization of [undefined, 'Basic abc', 'Bearer wrong-key']) {
      const answer = await postJson(`${server.url}/order`, { tag: 'x' }, authorization ? { authorization } : {});
      expect(answer.status).toBe(401);
      expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer realm="svc"/);
      expect(answer.body.error.type).toBe('authentication_error');
    }
    expect(server.logs()).not.toContain('wrong-key');
  });

  it('takes the scheme in any case, as RFC 7235 has it', async () => {
    for (const authorization of ['bearer main-key-abcdef', 'BEARER main-key-abcdef']) {
      expect((await postJson(`${server.url}/order`, { tag: 'x' }, { authorization })).status, authorization).toBe(200);
    }
  });

  it('keeps health, docs and the OpenAPI document open', async () => {
    for (const path of ['/health', '/docs', '/openapi.json']) expect((await fetch(`${server.url}${path}`)).status).toBe(200);
  });

  it('refuses a known key outside its endpoints with 403', async () => {
    const answer = await postJson(`${server.url}/steps`, {}, headers('orders-key-123'));
    expect(answer.status).toBe(403);
    expect((await postJson(`${server.url}/order`, { tag: 'ok' }, { ...headers('orders-key-123'), prefer: 'wait=10' })).body.status).toBe('FINISHED');
  });

  it('shows a job only to the key that created it', async () => {
    const envelope: Envelope = (await postJson(`${server.url}/order`, { tag: 'mine' }, headers('main-key-abcdef'))).body;
    expect((await getJson(envelope.refresh_job_url, headers('main-key-abcdef'))).status).toBe(200);
    expect((await getJson(envelope.refresh_job_url, headers('other-key-4567'))).status).toBe(404);
    expect((await fetch(envelope.cancel_job_url, { method: 'POST', headers: headers('other-key-4567') })).status).toBe(404);
    expect((await getJson(envelope.refresh_job_url)).status).toBe(401);
  });
});

describe("each API key's share of the job store", () => {
  let server: RunningSvc;
  const keysFile = join(mkdtempSync(join(tmpdir(), 'svc-keys-')), 'keys.json');
  const as = (key: string) => ({ authorization: `Bearer ${key}` });
  const health = async () => (await getJson(`${server.url}/health`)).body;
  beforeAll(async () => {
    writeFileSync(keysFile, JSON.stringify({ keys: [{ name: 'heavy', key: 'heavy-key-123', endpoints: '*' }, { name: 'light', key: 'light-key-456', endpoints: '*' }] }));
    server = await startSvc([JOBS, '--api-keys', keysFile, '--max-jobs', '4', '--job-ttl', '600']);
  });
  afterAll(async () => {
    await server.stop();
  });

  it('stops a key that leaves its results unread at its share, with a 429 naming the limit, while another key goes on', async () => {
    const heavy: Array<{ status: number; body: any; headers: Headers }> = [];
    for (let index = 0; index < 4; index++) heavy.push(await postJson(`${server.url}/order`, { tag: `heavy ${index}` }, as('heavy-key-123')));
    expect(heavy.map((answer) => answer.status)).toEqual([200, 200, 429, 429]);
    expect(heavy[2]!.body.error).toMatchObject({ status: 429, type: 'too_many_requests', code: 'key_results_unread' });
    expect(heavy[2]!.body.error.message).toContain('(--max-jobs 4 among 2 API keys: 2 each)');
    expect(Number(heavy[2]!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Its two results ended unread; the server says so, and is not full.
    await expect.poll(async () => (await health()).jobs.unread, { timeout: 10_000, interval: 50 }).toBe(2);
    expect(await health()).toMatchObject({ status: 'READY', jobs: { unread: 2, max_jobs: 4, full: false } });

    const light = [];
    for (const tag of ['light 0', 'light 1']) light.push(await postJson(`${server.url}/order`, { tag }, as('light-key-456')));
    expect(light.map((answer) => answer.status)).toEqual([200, 200]);
    // Both shares unread fill the store: /health says so, though the workers are ready.
    await expect.poll(async () => (await health()).jobs.unread, { timeout: 10_000, interval: 50 }).toBe(4);
    expect(await health()).toMatchObject({ status: 'READY', jobs: { unread: 4, max_jobs: 4, full: true } });

    // A result read frees its place in the key's share.
    expect((await getJson(heavy[0]!.body.refresh_job_url, as('heavy-key-123'))).body).toMatchObject({ status: 'FINISHED', result: 'heavy 0' });
    expect((await postJson(`${server.url}/order`, { tag: 'heavy again' }, { ...as('heavy-key-123'), prefer: 'wait=10' })).body).toMatchObject({ status: 'FINISHED', result: 'heavy again' });
    expect((await health()).jobs).toMatchObject({ unread: 3, full: false });
  });
});

describe('a dedicated server asked to answer asynchronously', () => {
  it('returns a 202 envelope with Prefer: respond-async, and the result without it', async () => {
    const server = await startSvc([JOBS, '--compute', 'dedicated']);
    try {
      expect((await postJson(`${server.url}/order`, { tag: 'direct' })).body).toBe('direct');
      const accepted = await postJson(`${server.url}/order`, { tag: 'later' }, { prefer: 'respond-async' });
      expect(accepted.status).toBe(202);
      expect((await waitForStatus(accepted.body.refresh_job_url, ['FINISHED'])).result).toBe('later');
    } finally {
      await server.stop();
    }
  });
});

describe('a call asked for as server-sent events (Accept: text/event-stream)', () => {
  /** The call's events, read as they come; `onEvent` sees each one first. */
  async function streamCall(url: string, body: object, onEvent: (event: EventSourceMessage) => void, signal?: AbortSignal) {
    const events: EventSourceMessage[] = [];
    const parser = createParser({ onEvent: (event) => { events.push(event); onEvent(event); } });
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify(body),
      signal,
    });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const decoder = new TextDecoder();
    for await (const chunk of response.body!) parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
    return events;
  }

  it("streams a generator's chunks as it yields them from a dedicated server, then the envelope; leaving cancels it", async () => {
    const server = await startSvc([JOBS, '--compute', 'dedicated']);
    try {
      const marker = join(mkdtempSync(join(tmpdir(), 'svc-stream-')), 'go-on');
      // The function yields the rest only once the marker exists, which the test writes on the first chunk.
      const events = await streamCall(`${server.url}/first-then-rest`, { marker }, (event) => {
        if (event.event === 'chunk') writeFileSync(marker, '');
      });
      expect(events.filter((event) => event.event === 'chunk').map((event) => JSON.parse(event.data))).toEqual(['first', 'second', 'third']);
      expect(JSON.parse(events.at(-1)!.data)).toMatchObject({ status: 'FINISHED', result: 'firstsecondthird' });

      const leaving = new AbortController();
      const never = join(mkdtempSync(join(tmpdir(), 'svc-stream-')), 'never');
      await streamCall(`${server.url}/first-then-rest`, { marker: never }, (event) => {
        if (event.event === 'chunk') leaving.abort();
      }, leaving.signal).catch(() => null);
      // The only worker is free again at once: the call that would wait 30 s was cancelled.
      const next = await postJson(`${server.url}/order`, { tag: 'next' });
      expect(next.body).toBe('next');
    } finally {
      expect(await server.stop()).toBe(0);
    }
    // Nobody will read the job of a caller who left: stopping does not wait for it.
    expect(server.logs()).not.toContain('for clients to read');
  }, 20_000);
});

describe('SIGTERM with jobs waiting', () => {
  it('lets the running job finish and, with jobs in memory, fails the queued ones with a clear error', async () => {
    const server = await startSvc([JOBS, '--grace-period', '5', '--job-store', 'memory']);
    const running: Envelope = (await postJson(`${server.url}/steps`, { count: 2, pause: 0.5 })).body;
    await waitForStatus(running.refresh_job_url, ['PROCESSING']);
    const queued: Envelope = (await postJson(`${server.url}/order`, { tag: 'late' })).body;
    const watcher = fetch(queued.refresh_job_url, { headers: { prefer: 'wait=10' } }).then((response) => response.json() as Promise<Envelope>);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const stopping = server.stop();
    const queuedEnd = await watcher;
    expect(queuedEnd.status).toBe('FAILED');
    expect(queuedEnd.error).toContain('the server stopped before this job could run');
    expect((await waitForStatus(running.refresh_job_url, ['FINISHED'])).result).toEqual({ steps: 2 });
    expect(await stopping).toBe(0);
    expect(server.logs()).toMatch(/POST \/steps 200/);
  });

  it('keeps serving job reads while it drains, refuses new jobs with 503, and waits for the last result to be read', async () => {
    const server = await startSvc([JOBS, '--grace-period', '20']);
    const running: Envelope = (await postJson(`${server.url}/steps`, { count: 3, pause: 0.4 })).body;
    await waitForStatus(running.refresh_job_url, ['PROCESSING']);
    const stopping = server.stop();
    await expect.poll(() => server.logs(), { timeout: 5_000, interval: 20 }).toContain('SIGTERM: finishing in-flight calls');
    const refused = await postJson(`${server.url}/order`, { tag: 'too late' });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).not.toBeNull();
    await expect.poll(() => server.logs(), { timeout: 10_000, interval: 20 }).toContain('for clients to read 1 ended job');
    const finished = await getJson(running.refresh_job_url);
    expect(finished.body).toMatchObject({ status: 'FINISHED', result: { steps: 3 } });
    expect(await stopping).toBe(0);
  });

  it('with jobs in memory, fails a job still running when the grace period ends as a shutdown, readable by a client that polls', async () => {
    const server = await startSvc([JOBS, '--grace-period', '1', '--job-store', 'memory']);
    const running: Envelope = (await postJson(`${server.url}/steps`, { count: 60, pause: 0.5 })).body;
    await waitForStatus(running.refresh_job_url, ['PROCESSING']);
    const stopping = server.stop();
    await expect.poll(() => server.logs(), { timeout: 10_000, interval: 20 }).toContain('for clients to read 1 ended job');
    const ended = await getJson(running.refresh_job_url);
    expect(ended.body).toMatchObject({ status: 'FAILED', error_detail: { type: 'ServerShutdown', message: expect.stringContaining('submit it again') } });
    expect(await stopping).toBe(0);
  });
});
