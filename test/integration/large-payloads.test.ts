import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noisePng } from '../support/images.js';
import { startRedis } from '../support/redis-server.js';
import { startSvc, type RunningSvc } from '../support/server.js';
import { REPO_ROOT } from '../support/svc.js';

// Large bodies and results cross the gateway as the bytes they came as (docs/worker-protocol.md).
const LARGE_ANSWERS = join(REPO_ROOT, 'test/fixtures/gateway/large-answers.py');
const PADDING = 'x'.repeat(100_000);

async function post(url: string, body: string): Promise<{ status: number; text: string }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return { status: response.status, text: await response.text() };
}

describe('large payloads', () => {
  let server: RunningSvc;
  beforeAll(async () => {
    server = await startSvc([LARGE_ANSWERS]);
  });
  afterAll(async () => {
    await server.stop();
  });

  it('answers a large result with the JSON the worker wrote, so an integer beyond a double arrives with every digit', async () => {
    const { status, text } = await post(`${server.url}/large-with-id`, JSON.stringify({ count: 2 ** 20 }));
    expect([status, text.slice(0, 30), text.length]).toEqual([200, '{"id":18446744073709551617,"te', 2 ** 20 + '{"id":18446744073709551617,"text":""}'.length]);
  });

  it('hands a large body to the function as the client wrote it, newlines between its tokens and all', async () => {
    const body = `{\n  "value": 1.0,\n  "padding": "a\\nb${PADDING}"\n}\n`;
    const { status, text } = await post(`${server.url}/type-of`, body);
    expect([status, JSON.parse(text)]).toEqual([200, { type: 'float', padding: 'a\nbx', length: PADDING.length + 3 }]);
  });

  it('hands long strings to the function exactly, whether they travel undecoded or are parsed, as a call or a job', async () => {
    const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
    const long = `é😀 ${'y'.repeat(300_000)} \u2028`;
    const escaped = `line\n"quoted"\t${'z'.repeat(100_000)}`;
    for (const [first, second] of [[long, 'short'], [long, long.toUpperCase()], [escaped, long]] as const) {
      const body = JSON.stringify({ first, count: 3, second });
      const expected = { first: sha256(first), second: sha256(second) };
      const direct = await post(`${server.url}/texts`, body);
      expect([direct.status, JSON.parse(direct.text)]).toEqual([200, expected]);
      const job = await fetch(`${server.url}/texts`, { method: 'POST', headers: { 'content-type': 'application/json', prefer: 'respond-async, wait=30' }, body });
      expect(((await job.json()) as { result: unknown }).result).toEqual(expected);
    }
  });

  it('answers with long strings of a result exactly, whichever way they cross from the worker', async () => {
    // Plain text, text JSON must escape, text with a line break (sent as JSON), and a lone surrogate (also JSON).
    for (const unit of ['é😀y', '"\\\u0001', 'a\nb', 'a\rb', '\ud800']) {
      for (const path of ['/large', '/large-object']) {
        const { status, text } = await post(`${server.url}${path}`, JSON.stringify({ unit, count: 40_000 }));
        const expected = path === '/large' ? unit.repeat(40_000) : { text: unit.repeat(40_000), items: [1, 2.5, null, true, { unit }], empty: {} };
        expect([status, JSON.parse(text)]).toEqual([200, expected]);
      }
    }
  });

  it("answers a job's large result with the JSON the worker wrote, when it ends, when polled and after a restart, whether its server keeps jobs in memory or in a SQLite file", async () => {
    const digits = '{"id":18446744073709551617,"te';
    const resultOf = (envelope: string) => envelope.slice(envelope.indexOf('"result":') + '"result":'.length, envelope.indexOf('"result":') + '"result":'.length + 2 ** 20 + 37);
    const expected = `{"id":18446744073709551617,"text":"${'x'.repeat(2 ** 20)}"}`;
    const state = { XDG_STATE_HOME: mkdtempSync(join(tmpdir(), 'svc-test-state-')) };
    let serverless = await startSvc([LARGE_ANSWERS, '--compute', 'serverless'], state);
    try {
      let id = '';
      for (const url of [server.url, serverless.url]) {
        const submitted = await fetch(`${url}/large-with-id`, { method: 'POST', headers: { 'content-type': 'application/json', prefer: 'respond-async, wait=30' }, body: JSON.stringify({ count: 2 ** 20 }) });
        const text = await submitted.text();
        const result = text.slice(text.indexOf('"result":') + '"result":'.length);
        expect([submitted.status < 300, JSON.parse(text).status, result.slice(0, digits.length)]).toEqual([true, 'FINISHED', digits]);
        id = JSON.parse(text).id;
        expect(resultOf(await (await fetch(`${url}/v1/jobs/${id}`)).text())).toBe(expected);
      }
      // The SQLite file's job, read by the next server on that file.
      await serverless.stop();
      serverless = await startSvc([LARGE_ANSWERS, '--compute', 'serverless'], state);
      expect(resultOf(await (await fetch(`${serverless.url}/v1/jobs/${id}`)).text())).toBe(expected);
    } finally {
      await serverless.stop();
    }
  });

  it('answers a small result with the JSON the worker wrote too: as a call, a job when it ends, polled, as an event and after a restart', async () => {
    const exact = '{"id":18446744073709551617,"text":"x"}';
    const { status, text } = await post(`${server.url}/large-with-id`, JSON.stringify({ count: 1 }));
    expect([status, text]).toEqual([200, exact]);
    const state = { XDG_STATE_HOME: mkdtempSync(join(tmpdir(), 'svc-test-state-')) };
    let serverless = await startSvc([LARGE_ANSWERS, '--compute', 'serverless'], state);
    try {
      const submitted = await fetch(`${serverless.url}/large-with-id`, { method: 'POST', headers: { 'content-type': 'application/json', prefer: 'wait=30' }, body: JSON.stringify({ count: 1 }) });
      const envelope = await submitted.text();
      expect(envelope).toContain(`"result":${exact}`);
      const { id } = JSON.parse(envelope) as { id: string };
      expect(await (await fetch(`${serverless.url}/v1/jobs/${id}`)).text()).toContain(`"result":${exact}`);
      // Both framings: svc's own, and the one fastsdk reads.
      for (const stream of [`/v1/jobs/${id}/stream`, `/stream/${id}`]) {
        expect(await (await fetch(`${serverless.url}${stream}`)).text()).toContain(`"result":${exact}`);
      }
      await serverless.stop();
      serverless = await startSvc([LARGE_ANSWERS, '--compute', 'serverless'], state);
      expect(await (await fetch(`${serverless.url}/v1/jobs/${id}`)).text()).toContain(`"result":${exact}`);
    } finally {
      await serverless.stop();
    }
  });

  it('answers lists of floats, sent by the worker as doubles, with the same numbers, whole ones written as floats, as a call and as a job', async () => {
    const embedding = Array.from({ length: 1536 }, (_, index) => index / 7 - 100);
    const rows = [embedding, embedding].map((row) => row.map((number) => Math.fround(number)));
    const whole = Array.from({ length: 64 }, (_, index) => index);
    for (const prefer of [null, 'respond-async, wait=30']) {
      const response = await fetch(`${server.url}/floats`, { method: 'POST', headers: { 'content-type': 'application/json', ...(prefer === null ? {} : { prefer }) }, body: '{}' });
      const text = await response.text();
      const result = (prefer === null ? JSON.parse(text) : JSON.parse(text).result) as Record<string, unknown>;
      expect([response.status, result]).toEqual([prefer === null ? 200 : 202, { embedding, whole, rows, ints: whole }]);
      // Python's json, as fastsdk reads it, takes 1.0 as a float and 1 as an int.
      expect(text).toContain(`"whole":[${whole.map((number) => `${number}.0`).join(',')}],`);
      expect(text).toContain(`"ints":[${whole.join(',')}]`);
    }
  });

  it("hands a long base64 image to the function as the bytes it stands for, and refuses bad base64 as for a short one", async () => {
    const png = noisePng(200, 200);
    const expected = { size: png.length, sha256: createHash('sha256').update(png).digest('hex'), content_type: 'image/png' };
    const base64 = png.toString('base64');
    for (const image of [base64, png.toString('base64url'), `data:image/png;base64,${base64}`, `\n${base64}\n`]) {
      const { status, text } = await post(`${server.url}/image-digest`, JSON.stringify({ image }));
      expect([status, JSON.parse(text)]).toEqual([200, expected]);
      // As a job, whose arguments keep the base64 as the bytes the client sent.
      const job = await fetch(`${server.url}/image-digest`, { method: 'POST', headers: { 'content-type': 'application/json', prefer: 'respond-async, wait=30' }, body: JSON.stringify({ image }) });
      expect(((await job.json()) as { result: unknown }).result).toEqual(expected);
    }
    const refusals: Array<[string, string]> = [
      [`${base64.slice(0, 100)} ${base64.slice(101)}`, 'holds spaces'],
      [`${base64.slice(0, 100)}-${base64.slice(101)}`, 'not valid base64'],
      [Buffer.from('not an image '.repeat(5000)).toString('base64'), 'expected an image'],
    ];
    for (const [image, message] of refusals) {
      const { status, text } = await post(`${server.url}/image-digest`, JSON.stringify({ image }));
      expect([status, JSON.parse(text).error.detail[0]]).toEqual([422, { field: 'image', message: expect.stringContaining(message) }]);
    }
  });

  it("stages a job's long base64 image for its worker as the file it stands for, and leaves no file behind, whether the job ran, was cancelled in the queue, found the queue full or was refused", async () => {
    // The server's file directory (APIPOD_FILE_DIR) is made in its TMPDIR: this test's own.
    const temporary = mkdtempSync(join(tmpdir(), 'svc-test-tmp-'));
    const serverless = await startSvc([LARGE_ANSWERS, '--compute', 'serverless', '--queue-size', '1'], { TMPDIR: temporary });
    const staged = () => readdirSync(temporary).flatMap((name) => (name.startsWith('svc-files-') ? readdirSync(join(temporary, name)) : []));
    type Envelope = { id: string; status: string; result: unknown; error: string | null };
    const submit = async (path: string, body: unknown, prefer = 'respond-async') => {
      const response = await fetch(`${serverless.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', prefer }, body: JSON.stringify(body) });
      return (await response.json()) as Envelope;
    };
    const read = async (url: string, init?: RequestInit) => (await (await fetch(url, init)).json()) as Envelope;
    try {
      const png = noisePng(200, 200);
      const running = await submit('/pause', { seconds: 2 });
      const queued = await submit('/image-digest', { image: png.toString('base64') });
      expect(queued.status).toBe('QUEUED');
      expect(staged()).toHaveLength(1); // decoded by the gateway as the call was queued
      // The queue is full: the job is refused, and the file decoded for it goes at once.
      const refusedByQueue = await fetch(`${serverless.url}/image-digest`, { method: 'POST', headers: { 'content-type': 'application/json', prefer: 'respond-async' }, body: JSON.stringify({ image: png.toString('base64') }) });
      expect([refusedByQueue.status, staged()]).toEqual([503, [expect.any(String)]]);
      expect((await read(`${serverless.url}/v1/jobs/${queued.id}/cancel`, { method: 'POST' })).status).toBe('CANCELLED');
      await expect.poll(() => staged()).toEqual([]);
      const ran = await submit('/image-digest', { image: png.toString('base64') }, 'wait=30');
      expect([ran.status, ran.result]).toEqual(['FINISHED', { size: png.length, sha256: createHash('sha256').update(png).digest('hex'), content_type: 'image/png' }]);
      const refused = await submit('/image-digest', { image: Buffer.from('not an image '.repeat(5000)).toString('base64') }, 'wait=30');
      expect([refused.status, refused.error]).toEqual(['FAILED', expect.stringContaining('expected an image')]);
      expect((await read(`${serverless.url}/v1/jobs/${running.id}`)).status).toBe('FINISHED');
      await expect.poll(() => staged()).toEqual([]);
    } finally {
      await serverless.stop();
      rmSync(temporary, { recursive: true, force: true });
    }
  });

  it('hands the long base64 image of a job kept in Redis to the function as the bytes it stands for, its arguments read back from Redis', async () => {
    const redis = await startRedis();
    const replica = await startSvc([LARGE_ANSWERS, '--compute', 'serverless', '--job-store', `${redis.url}/3`]);
    try {
      const png = noisePng(200, 200);
      const expected = { size: png.length, sha256: createHash('sha256').update(png).digest('hex'), content_type: 'image/png' };
      for (const image of [png.toString('base64'), png.toString('base64url'), `data:image/png;base64,${png.toString('base64')}`]) {
        const job = await fetch(`${replica.url}/image-digest`, { method: 'POST', headers: { 'content-type': 'application/json', prefer: 'wait=30' }, body: JSON.stringify({ image }) });
        expect(((await job.json()) as { result: unknown }).result).toEqual(expected);
      }
      // Large results come back from Redis as the worker wrote them: an object, and an integer past 2**53 unchanged.
      const object = await fetch(`${replica.url}/large-object`, { method: 'POST', headers: { 'content-type': 'application/json', prefer: 'wait=30' }, body: JSON.stringify({ unit: 'é"', count: 50_000 }) });
      expect(((await object.json()) as { result: unknown }).result).toEqual({ text: 'é"'.repeat(50_000), items: [1, 2.5, null, true, { unit: 'é"' }], empty: {} });
      const withId = await fetch(`${replica.url}/large-with-id`, { method: 'POST', headers: { 'content-type': 'application/json', prefer: 'wait=30' }, body: JSON.stringify({ count: 100_000 }) });
      expect(await withId.text()).toContain('"result":{"id":18446744073709551617,');
    } finally {
      await replica.stop();
      await redis.stop();
    }
  });

  it('refuses a long string with a raw control character, and bytes that are no UTF-8, as it does a short one', async () => {
    for (const padding of ['', 'y'.repeat(100_000)]) {
      const tab = await post(`${server.url}/texts`, `{"first": "${padding}\u0009${padding}"}`);
      expect([tab.status, JSON.parse(tab.text).error.code]).toEqual([400, 'invalid_json']);
      // A media parameter's base64, which the gateway decodes rather than search, as a call and as a job.
      const base64 = noisePng(40, 40).toString('base64');
      for (const image of [`${padding}${base64}\u0009`, `${base64}\u0001${padding}${base64}`]) {
        for (const prefer of ['', 'respond-async, wait=30']) {
          const response = await fetch(`${server.url}/image-digest`, { method: 'POST', headers: { 'content-type': 'application/json', prefer }, body: `{"image": "${image}"}` });
          expect([response.status, ((await response.json()) as { error: { code: string } }).error.code]).toEqual([400, 'invalid_json']);
        }
      }
      const body = Buffer.concat([Buffer.from(`{"first": "${padding}`), Buffer.from([0xe9]), Buffer.from('"}')]);
      const latin1 = await fetch(`${server.url}/texts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      expect([latin1.status, ((await latin1.json()) as { error: { code: string } }).error.code]).toEqual([400, 'invalid_encoding']);
    }
  });

  it('hands a long list of numbers to a list[float] parameter as the floats the client wrote, as a call or a job, long or short', async () => {
    const digest = (numbers: number[]) => createHash('sha256').update(Buffer.from(new Float64Array(numbers).buffer)).digest('hex');
    // Integers (which the function gets as floats), the extremes of a double, and digits past what a double holds.
    const edges = [1, 0, 2 ** 60, 5e-324, 1.7976931348623157e308, -2.2250738585072014e-308, 0.1, 123456789.123456789, -7];
    const long = Array.from({ length: 5000 }, (_, index) => (index % 10 === 0 ? edges[(index / 10) % edges.length]! : Math.sin(index) * 10 ** ((index % 40) - 20)));
    for (const values of [long, long.slice(0, 100)]) {
      const text = JSON.stringify({ values, label: 'é', scale: 2 }).replace('[1,', '[1.0000000000000000000001,');
      const expected = { count: values.length, types: ['float'], negative_zeros: 0, sha256: digest(values), label: 'é', scale: 2 };
      for (const prefer of ['', 'respond-async, wait=30']) {
        const response = await fetch(`${server.url}/numbers-digest`, { method: 'POST', headers: { 'content-type': 'application/json', prefer }, body: text });
        const answer = (await response.json()) as { result?: unknown };
        expect([response.status, prefer === '' ? answer : answer.result]).toEqual([prefer === '' ? 200 : 202, expected]);
      }
    }
  });

  it('still gives an integer parameter an int when a large body spells it 2.0, as a small body does', async () => {
    const { status, text } = await post(`${server.url}/count-type`, JSON.stringify({ count: 2, padding: PADDING }).replace('"count":2', '"count":2.0'));
    expect([status, JSON.parse(text)]).toEqual([200, 'int']);
  });
});
