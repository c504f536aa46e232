import { execFileSync } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { postJson, startSvc, type RunningSvc } from '../support/server.js';
import { PNG_BASE64 } from '../support/images.js';
import { REPO_ROOT, runSvc } from '../support/svc.js';
import { isRunning } from '../support/processes.js';

const BEHAVIOURS = join(REPO_ROOT, 'test/fixtures/gateway/behaviours.py');
const MiB = 1024 * 1024;

/** `{"<field>": "xx..."}`, exactly `bytes` long. */
function jsonOfLength(field: string, bytes: number): string {
  return JSON.stringify({ [field]: 'x'.repeat(bytes - `{"${field}":""}`.length) });
}

/** Announces a JSON body of `bytes` in Content-Length and sends none: what the server answers from the header alone. */
function postDeclaredLength(url: string, bytes: number): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(bytes) } }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => {
        request.destroy();
        resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) });
      });
    });
    request.on('error', reject);
    request.flushHeaders();
  });
}

describe('svc start serving examples/hello', () => {
  let server: RunningSvc;
  beforeAll(async () => {
    server = await startSvc([join(REPO_ROOT, 'examples/hello')]);
  });
  afterAll(async () => {
    await server.stop();
  });

  it('answers with the function result, at the path and under /v1', async () => {
    expect(await postJson(`${server.url}/hello`, { name: 'Ada', excited: true })).toMatchObject({
      status: 200,
      body: { greeting: 'Hello, Ada!' },
    });
    expect((await postJson(`${server.url}/v1/add`, { a: 2, b: 0.5 })).body).toEqual({ sum: 2.5 });
  });

  it('answers at the path with a trailing slash too', async () => {
    const slashed = await postJson(`${server.url}/hello/`, { name: 'Ada' });
    expect([slashed.status, slashed.body]).toEqual([200, { greeting: 'Hello, Ada.' }]);
  });

  it('treats an empty body as no arguments: defaults apply, missing required ones are a 422', async () => {
    expect((await postJson(`${server.url}/hello`, '')).body).toEqual({ greeting: 'Hello, world.' });
    const missing = await postJson(`${server.url}/add`, '');
    expect(missing.status).toBe(422);
    expect(missing.body.error.detail).toEqual([
      { field: 'a', message: 'is required' },
      { field: 'b', message: 'is required' },
    ]);
  });

  it('rejects input that does not match the signature with field-level detail', async () => {
    const wrong = await postJson(`${server.url}/add`, { a: 'two', b: 1, c: 3 });
    expect(wrong.status).toBe(422);
    expect(wrong.body.error).toMatchObject({ status: 422, type: 'validation_error' });
    expect(wrong.body.error.detail).toEqual(
      expect.arrayContaining([
        { field: 'a', message: 'must be a number' },
        { field: 'c', message: 'is not a parameter of this endpoint' },
      ]),
    );
  });

  it('answers malformed JSON with a 400, never a 500', async () => {
    const bad = await postJson(`${server.url}/hello`, '{"name": ');
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_json');
    const array = await postJson(`${server.url}/hello`, '[1, 2]');
    expect(array.status).toBe(422);
    const nested = (depth: number) => `{"name": ${'['.repeat(depth)}${']'.repeat(depth)}}`;
    const deep = await postJson(`${server.url}/hello`, nested(100_000));
    expect(deep.status).toBe(400);
    expect(deep.body.error.code).toBe('too_deep');
    expect((await postJson(`${server.url}/hello`, nested(500))).status).toBe(422); // deep, but within the limit: the signature decides
  });

  it('never changes a value on its way: a number beyond a double, bytes that are not UTF-8 and a bad percent-escape are refused', async () => {
    const huge = await postJson(`${server.url}/add`, '{"a": 1e999, "b": 1}');
    expect([huge.status, huge.body.error.detail]).toEqual([422, [{ field: 'a', message: 'is a number beyond the range of a double, which would read as infinity' }]]);
    expect((await postJson(`${server.url}/add`, '{"a": -1e400, "b": 1}')).status).toBe(422);
    const latin1 = await fetch(`${server.url}/hello`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.from('{"name": "Ren\xe9"}', 'latin1') });
    expect([latin1.status, ((await latin1.json()) as any).error.code]).toEqual([400, 'invalid_encoding']);
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const badEscape = await postJson(`${server.url}/hello`, 'name=Ren%E9', form);
    expect([badEscape.status, badEscape.body.error.message]).toEqual([400, 'the form field "name" is not valid percent-encoded UTF-8']);
    expect((await postJson(`${server.url}/hello`, 'name=Ren%C3%A9+D', form)).body).toEqual({ greeting: 'Hello, René D.' });
    // A lone surrogate sent as a JSON escape is what the client sent: it reaches the function as such.
    const surrogate = await fetch(`${server.url}/hello`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name": "\\ud800"}' });
    expect(await surrogate.text()).toBe('{"greeting":"Hello, \\ud800."}');
  });

  it('says a form has too many parts when it has, not that it is too large', async () => {
    const form = new FormData();
    for (let index = 0; index < 1200; index++) form.append(`field${index}`, 'x');
    const answer = await fetch(`${server.url}/hello`, { method: 'POST', body: form });
    expect([answer.status, ((await answer.json()) as any).error.message]).toEqual([413, 'the form has more than 1000 fields and files together, the most this server reads']);
  });

  it('refuses a multipart text field that is not text in its charset, and a part with no name, saying which', async () => {
    const multipart = (headers: string, body: Buffer) =>
      fetch(`${server.url}/hello`, {
        method: 'POST',
        headers: { 'content-type': 'multipart/form-data; boundary=XX' },
        body: Buffer.concat([Buffer.from(`--XX\r\nContent-Disposition: form-data; ${headers}\r\n\r\n`), body, Buffer.from('\r\n--XX--\r\n')]),
      });
    const latin1 = await multipart('name="name"', Buffer.from('Ren\xe9', 'latin1'));
    expect([latin1.status, ((await latin1.json()) as any).error.message]).toEqual([400, 'the form field "name" is not valid UTF-8: send its text encoded as UTF-8']);
    const declared = await multipart('name="name"\r\nContent-Type: text/plain; charset=iso-8859-1', Buffer.from('Ren\xe9', 'latin1'));
    expect(((await declared.json()) as any).greeting).toBe('Hello, René.');
    const unknown = await multipart('name="name"\r\nContent-Type: text/plain; charset=x-unheard-of', Buffer.from('Ren'));
    expect([unknown.status, ((await unknown.json()) as any).error.code]).toEqual([415, 'unsupported_charset']);
    const nameless = await multipart('filename="a.txt"', Buffer.from('Ren'));
    expect([nameless.status, ((await nameless.json()) as any).error.message]).toEqual([
      400,
      'the multipart body cannot be read: a part has no name (Content-Disposition: form-data; name="...")',
    ]);
  });

  it('reads JSON whatever its parameters, and URL-encoded forms coerced to the parameter types', async () => {
    const charset = await postJson(`${server.url}/hello`, { name: 'Ada' }, { 'content-type': 'application/json; charset=utf-8' });
    expect(charset).toMatchObject({ status: 200, body: { greeting: 'Hello, Ada.' } });
    const form = await postJson(`${server.url}/add`, 'a=2&b=0.5', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(form).toMatchObject({ status: 200, body: { sum: 2.5 } });
    const badForm = await postJson(`${server.url}/add`, 'a=two&b=1', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(badForm.status).toBe(422);
  });

  it('answers 415 for a body it cannot read, rather than running the endpoint with its defaults', async () => {
    for (const type of ['application/xml', 'text/plain']) {
      const refused = await postJson(`${server.url}/hello`, '<name>Ada</name>', { 'content-type': type });
      expect(refused.status, type).toBe(415);
      expect(refused.body.error.message).toContain(`Content-Type ${type} is not accepted`);
    }
    const empty = await postJson(`${server.url}/hello`, '', { 'content-type': 'text/plain' });
    expect(empty).toMatchObject({ status: 200, body: { greeting: 'Hello, world.' } });
  });

  it('survives a lone surrogate, which is valid JSON, sent through a worker and back', async () => {
    const response = await fetch(`${server.url}/hello`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"name":"\\ud800"}',
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('{"greeting":"Hello, \\ud800."}');
    expect(((await (await fetch(`${server.url}/health`)).json()) as { status: string }).status).toBe('READY');
  });

  it('refuses file references smuggled into JSON, which only svc may create', async () => {
    const smuggled = await postJson(`${server.url}/hello`, { name: { $file: { path: '/etc/passwd' } } });
    expect(smuggled.status).toBe(422);
    expect(smuggled.body.error.detail).toEqual([{ field: 'name.$file', message: expect.stringContaining('cannot be sent') }]);
    const inList = await postJson(`${server.url}/hello`, { name: [1.5, 'two', { three: [{ $file: { path: '/etc/passwd' } }] }] });
    expect([inList.status, inList.body.error.detail]).toEqual([422, [{ field: 'name[2].three[0].$file', message: expect.stringContaining('cannot be sent') }]]);
  });

  it('says 404 for an unknown route and 405 for a known path with the wrong method', async () => {
    const unknown = await postJson(`${server.url}/nope`, {});
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.type).toBe('not_found');
    const wrongMethod = await fetch(`${server.url}/hello`);
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('POST');
    for (const [method, path, allow] of [['PATCH', '/v1/hello', 'POST'], ['POST', '/health', 'GET, HEAD'], ['DELETE', '/openapi.json', 'GET, HEAD']]) {
      const response = await fetch(`${server.url}${path}`, { method });
      expect([method, path, response.status, response.headers.get('allow')]).toEqual([method, path, 405, allow]);
    }
  });

  it("refuses a call from another site's web page (a form POST, which no preflight precedes), and takes its own page's", async () => {
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const foreign = await postJson(`${server.url}/hello`, 'name=Mallory', { ...form, origin: 'https://evil.example' });
    expect([foreign.status, foreign.body.error.code]).toEqual([403, 'origin_not_allowed']);
    expect(foreign.body.error.message).toBe('a web page from https://evil.example may not call this service; start it with --cors-origin https://evil.example to let it');
    const sandboxed = await postJson(`${server.url}/hello`, 'name=Mallory', { ...form, origin: 'null' });
    expect(sandboxed.status).toBe(403);
    expect((await postJson(`${server.url}/hello`, 'name=Ada', { ...form, origin: server.url })).body).toEqual({ greeting: 'Hello, Ada.' });
    expect((await postJson(`${server.url}/hello`, 'name=Ada', form)).status).toBe(200); // curl, SDKs: no Origin
  });

  it('publishes an OpenAPI 3.1 document with one operation per endpoint', async () => {
    const document: any = await (await fetch(`${server.url}/openapi.json`)).json();
    expect(document.openapi).toBe('3.1.0');
    expect(document.info.title).toBe('Hello');
    expect(Object.keys(document.paths).sort()).toEqual(['/add', '/hello']);
    expect(document.paths['/add'].post.requestBody.content['application/json'].schema.required).toEqual(['a', 'b']);
  });

  it('logs one line per request: method, path, status and time', async () => {
    const names = Array.from({ length: 20 }, (_, index) => `log-${index}`);
    await Promise.all(names.map((name) => postJson(`${server.url}/hello?burst`, { name })));
    await postJson(`${server.url}/add?after-burst`, { a: 'one' });
    await vi.waitFor(() => expect(server.logs()).toMatch(/^POST \/add\?after-burst 422 \d+ms$/m));
    const lines = server.logs().split('\n');
    const burst = lines.flatMap((line, index) => (/^POST \/hello\?burst 200 \d+ms$/.test(line) ? [index] : []));
    expect(burst).toHaveLength(names.length);
    // Lines written together under load still come whole and in order: the 422 came last.
    expect(Math.max(...burst)).toBeLessThan(lines.findIndex((line) => line.startsWith('POST /add?after-burst 422')));
  });

  it('takes bodies far above 1 MiB by default, and refuses one announced above 100 MiB with 413', async () => {
    const taken = await postJson(`${server.url}/hello`, jsonOfLength('name', 3 * MiB));
    expect([taken.status, taken.body.greeting?.length]).toEqual([200, 3 * MiB - '{"name":""}'.length + 'Hello, .'.length]);
    const refused = await postDeclaredLength(`${server.url}/hello`, 100 * MiB + 1);
    expect([refused.status, refused.body.error.message]).toEqual([413, 'the request body is larger than this server accepts (100 MiB; svc start --max-body-size MiB raises it)']);
  });

  it('reports READY on /health once the workers are up', async () => {
    const health = await fetch(`${server.url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'READY', workers: 1 });
  });
});

describe('svc start serving endpoints that misbehave', () => {
  let server: RunningSvc;
  const marker = join(mkdtempSync(join(tmpdir(), 'svc-shutdown-')), 'marker');
  beforeAll(async () => {
    server = await startSvc([BEHAVIOURS, '--workers', '2', '--max-body-size', '2', '--queue-size', '1', '--endpoint-timeout', '/async-sleep=0.5'], {
      SHUTDOWN_MARKER: marker,
    });
  });
  afterAll(async () => {
    if (server.process.exitCode === null) await server.stop();
  });

  it('converts enums, literals and optionals, and keeps user prints out of the protocol', async () => {
    const answer = await postJson(`${server.url}/echo`, { text: 'ab', times: 2, colour: 'blue', mode: 'loud' });
    expect(answer.body).toEqual({ text: 'ABAB', colour: 'blue', note: null });
    expect((await postJson(`${server.url}/echo`, { text: 'x', colour: 'green' })).body.error.detail).toEqual([
      { field: 'colour', message: 'must be one of "red", "blue"' },
    ]);
    expect(server.logs()).toContain('echo was called');
  });

  it('turns an exception in user code into a 500 carrying its type and message', async () => {
    const failed = await postJson(`${server.url}/fail`, { reason: 'no cats allowed' });
    expect(failed.status).toBe(500);
    expect(failed.body.error).toMatchObject({
      type: 'endpoint_error',
      message: 'ValueError: no cats allowed',
      exception: { type: 'ValueError', message: 'no cats allowed' },
    });
  });

  it('runs async endpoints, GET endpoints with query strings, and generators', async () => {
    expect((await postJson(`${server.url}/async-sleep`, { seconds: 0.01 })).body).toEqual({ slept: 0.01 });
    expect(await (await fetch(`${server.url}/items?limit=3&prefix=x`)).json()).toEqual(['x-0', 'x-1', 'x-2']);
    expect((await postJson(`${server.url}/count`, { to: 4 })).body).toEqual([0, 1, 2, 3]);
  });

  it('takes a body of exactly --max-body-size MiB, above the 1 MiB Fastify would allow, and refuses one byte more with 413', async () => {
    const taken = await postJson(`${server.url}/echo`, jsonOfLength('text', 2 * MiB));
    expect([taken.status, taken.body.text?.length]).toEqual([200, 2 * MiB - '{"text":""}'.length]);
    const large = await postJson(`${server.url}/echo`, jsonOfLength('text', 2 * MiB + 1));
    expect(large.status).toBe(413);
    expect(large.body.error).toMatchObject({
      type: 'payload_too_large',
      message: 'the request body is larger than this server accepts (2 MiB; svc start --max-body-size MiB raises it)',
    });
    // A multipart form is held to the same size, counted as it arrives.
    const head = '--XX\r\nContent-Disposition: form-data; name="text"\r\n\r\n';
    const tail = '\r\n--XX--\r\n';
    const form = (size: number, sendLength: boolean) => {
      const body = head + 'x'.repeat(size - head.length - tail.length) + tail;
      // Sent in pieces with no Content-Length, the limit is found while reading.
      const stream = new ReadableStream({ start: (controller) => (controller.enqueue(Buffer.from(body)), controller.close()) });
      return fetch(`${server.url}/echo`, {
        method: 'POST',
        headers: { 'content-type': 'multipart/form-data; boundary=XX' },
        ...(sendLength ? { body } : { body: stream, duplex: 'half' }),
      } as RequestInit);
    };
    const takenForm = await form(2 * MiB, true);
    expect([takenForm.status, ((await takenForm.json()) as any).text.length]).toEqual([200, 2 * MiB - head.length - tail.length]);
    for (const sendLength of [true, false]) {
      const refused = await form(2 * MiB + 1, sendLength);
      expect([refused.status, ((await refused.json()) as any).error.code]).toEqual([413, 'body_too_large']);
    }
    // A client still sending when the 413 is decided reads it, not a broken pipe: the rest is read and dropped.
    const upload = new FormData();
    upload.append('text', new Blob([Buffer.alloc(3 * MiB, 'x')]), 'text.txt');
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const refused = await fetch(`${server.url}/echo`, { method: 'POST', body: upload });
      expect([refused.status, ((await refused.json()) as any).error.code]).toEqual([413, 'body_too_large']);
    }
  });

  it("says so when JSON comes as a URL-encoded form, as curl -d sends it", async () => {
    const response = await fetch(`${server.url}/echo`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '{"text": "hi"}' });
    expect([response.status, ((await response.json()) as any).error.message]).toEqual([415, expect.stringContaining('Content-Type: application/json')]);
  });

  it('answers 503 with Retry-After when the endpoint queue is full', async () => {
    const running = [postJson(`${server.url}/sleep`, { seconds: 1.5 }), postJson(`${server.url}/sleep`, { seconds: 1.5 })];
    await new Promise((resolve) => setTimeout(resolve, 300));
    const queued = postJson(`${server.url}/sleep`, { seconds: 0.01 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const refused = await postJson(`${server.url}/sleep`, { seconds: 0.01 });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect((await Promise.all([...running, queued])).map((answer) => answer.status)).toEqual([200, 200, 200]);
  });

  it('cancels the call of a client that disconnects, freeing its worker', async () => {
    const abandoned = new AbortController();
    const call = fetch(`${server.url}/sleep`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ seconds: 20 }),
      signal: abandoned.signal,
    }).catch(() => 'aborted');
    await new Promise((resolve) => setTimeout(resolve, 500));
    abandoned.abort();
    expect(await call).toBe('aborted');
    await expect.poll(async () => ((await (await fetch(`${server.url}/health`)).json()) as { busy: number }).busy, { timeout: 10_000 }).toBe(0);
  });

  it('cuts a call off at its endpoint time-out with a 504, and its worker serves again', async () => {
    const slow = await postJson(`${server.url}/async-sleep`, { seconds: 30 });
    expect(slow.status).toBe(504);
    expect(slow.body.error).toMatchObject({ type: 'timeout', message: 'the call ran longer than the time-out of /async-sleep, 0.5 s' });
    expect((await postJson(`${server.url}/async-sleep`, { seconds: 0.05 })).status).toBe(200);
  });

  it('fails the call of a worker that dies, and serves the next call on a fresh worker', async () => {
    const crashed = await postJson(`${server.url}/crash`, {});
    expect(crashed.status).toBe(500);
    expect(crashed.body.error.type).toBe('worker_crashed');
    // What the worker wrote to stderr goes to svc's log only: it can be anyone's (or svc's own).
    expect(crashed.body.error.message).toMatch(/^worker \d+ exited with code 3 during call \S+ \(\/crash\)$/);
    expect(server.logs()).toContain('worker internals a client must not see');
    expect((await postJson(`${server.url}/echo`, { text: 'still here' })).body.text).toBe('still here');
  });

  it('logs a request whose client left, and a server-sent event stream, when each ends', async () => {
    const left = await fetch(`${server.url}/sleep?left`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ seconds: 0.5 }),
      signal: AbortSignal.timeout(100),
    }).catch((caught: unknown) => caught);
    expect(left).toBeInstanceOf(Error);
    const streamed = await fetch(`${server.url}/count?streamed`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ to: 2 }),
    });
    expect(await streamed.text()).toContain('event: status');
    await vi.waitFor(() => expect(server.logs()).toMatch(/^POST \/sleep\?left - \d+ms \(the client left\)$/m));
    await vi.waitFor(() => expect(server.logs()).toMatch(/^POST \/count\?streamed 200 \d+ms$/m));
  });

  it("sends a generator's chunks as server-sent events as they are yielded, not once it ends", async () => {
    // The function waits for a file before its second chunk: were its first held back, the file would never be made.
    const gate = join(mkdtempSync(join(tmpdir(), 'svc-gate-')), 'open');
    const response = await fetch(`${server.url}/gated-words`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ gate }),
    });
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    for (let gateMade = false; ; ) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      if (!gateMade && text.includes('data: "first"')) {
        writeFileSync(gate, '');
        gateMade = true;
      }
    }
    expect([...text.matchAll(/^event: chunk\ndata: (.*)$/gm)].map((match) => JSON.parse(match[1]!))).toEqual(['first', 'second']);
  });

  it('finishes the in-flight call on SIGTERM, runs the lifespan shutdown and exits 0', async () => {
    const inFlight = postJson(`${server.url}/sleep`, { seconds: 1 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const exitCode = await server.stop();
    expect((await inFlight).body).toEqual({ slept: 1 });
    expect(exitCode).toBe(0);
    // The drained call's log line is written before the server says it stopped.
    const lines = server.logs().split('\n');
    const drained = lines.findIndex((line) => /^POST \/sleep 200 \d+ms$/.test(line));
    expect(drained, 'the drained call logs its request line').toBeGreaterThan(-1);
    expect(lines.findIndex((line) => line.endsWith('stopped'))).toBeGreaterThan(drained);
    expect(existsSync(marker) && readFileSync(marker, 'utf8')).toBe('lifespan shutdown ran');
  });
});

describe('svc start publishing the schemas of pydantic models', () => {
  it('gives an OpenAPI document that the official validator accepts, its models under components/schemas', async () => {
    const server = await startSvc([join(REPO_ROOT, 'test/fixtures/gateway/models.py')]);
    try {
      const text = await (await fetch(`${server.url}/openapi.json`)).text();
      const document = JSON.parse(text);
      expect(Object.keys(document.components.schemas).sort()).toEqual(['Box', 'Colour', 'Error']);
      expect(text).not.toContain('#/$defs/');
      expect([document.paths['/scene'].post.operationId, document.paths['/v2/scene'].post.operationId]).toEqual(['scene_scene_post', 'scene_v2_scene_post']);
      // info.apipod, the apipod toolkit's marker that its client fastsdk looks for, is not an
      // x- extension: the one field the standard does not allow, left out for the validator.
      expect(document.info.apipod).toEqual({ compute: 'dedicated', version: expect.any(String) });
      const { apipod: _marker, ...standardInfo } = document.info;
      const validator = 'import json, sys; from openapi_spec_validator import validate; validate(json.load(sys.stdin))';
      execFileSync('python3', ['-c', validator], { input: JSON.stringify({ ...document, info: standardInfo }) }); // throws with the validator's complaint
      const infinite = await postJson(`${server.url}/scene`, '{"scene": {"boxes": [{"width": 3}, {"width": 1e999}]}}');
      expect([infinite.status, infinite.body.error.detail[0].field]).toEqual([422, 'scene.boxes[1].width']);
      const answer = await postJson(`${server.url}/scene`, { scene: { boxes: [{ width: 3 }] } });
      expect(answer.body).toEqual({ boxes: [{ width: 3, colour: 'red' }], background: 'green' });
    } finally {
      await server.stop();
    }
  });
});

describe('svc start killed outright', () => {
  it('leaves no worker behind, even one in a call that never ends', async () => {
    const server = await startSvc([BEHAVIOURS]);
    const call = postJson(`${server.url}/sleep`, { seconds: 3600 }).catch(() => null);
    const health = async () => ((await (await fetch(`${server.url}/health`)).json()) as { status: string }).status;
    await expect.poll(health, { timeout: 5_000 }).toBe('BUSY');
    const workers = execFileSync('ps', ['-o', 'pid=', '--ppid', String(server.process.pid)], { encoding: 'utf8' })
      .split('\n').map((line) => Number(line.trim())).filter((pid) => pid > 0);
    expect(workers).toHaveLength(1);
    server.process.kill('SIGKILL');
    await call;
    await expect.poll(() => workers.some(isRunning), { timeout: 10_000, interval: 100 }).toBe(false);
  });
});

describe('svc start with a model that takes a while to load', () => {
  it('stops at once when stopped while the model loads, rather than waiting out the grace period', async () => {
    const startupLog = join(mkdtempSync(join(tmpdir(), 'svc-startup-')), 'log');
    const server = await startSvc(
      [join(REPO_ROOT, 'test/fixtures/gateway/slow-start.py'), '--grace-period', '600'],
      { STARTUP_LOG: startupLog, STARTUP_SECONDS: '600' },
      { until: 'starting' },
    );
    await expect.poll(() => existsSync(startupLog)).toBe(true); // the lifespan is loading
    expect(await server.stop()).toBe(0);
    const [pid] = readFileSync(startupLog, 'utf8').trim().split('\n').map(Number);
    expect(isRunning(pid!)).toBe(false);
  }, 30_000);

  it('says STARTING, then READY, runs the lifespan once per worker, and BUSY when every worker is busy', async () => {
    const startupLog = join(mkdtempSync(join(tmpdir(), 'svc-startup-')), 'log');
    const server = await startSvc(
      [join(REPO_ROOT, 'test/fixtures/gateway/slow-start.py'), '--workers', '2'],
      { STARTUP_LOG: startupLog, STARTUP_SECONDS: '2' },
      { until: 'starting' },
    );
    try {
      const early = await fetch(`${server.url}/health`);
      expect(early.status).toBe(200);
      expect(await early.json()).toEqual({ status: 'STARTING' });
      const tooEarly = await postJson(`${server.url}/pid`, {});
      expect(tooEarly.status).toBe(503);
      // A body above Fastify's 1 MiB default is not read while starting either: the same 503, not a 413.
      const largeTooEarly = await postJson(`${server.url}/pid`, { padding: 'x'.repeat(2 * MiB) });
      expect([largeTooEarly.status, largeTooEarly.body.error?.message]).toEqual([503, 'the service is starting; retry shortly']);

      await expect.poll(async () => {
        try {
          return ((await (await fetch(`${server.url}/health`)).json()) as { status: string }).status;
        } catch {
          return 'switching';
        }
      }, { timeout: 20_000, interval: 100 }).toBe('READY');

      const calls = [postJson(`${server.url}/sleep`, { seconds: 1.5 }), postJson(`${server.url}/sleep`, { seconds: 1.5 })];
      await expect.poll(async () => ((await (await fetch(`${server.url}/health`)).json()) as { status: string }).status).toBe('BUSY');
      expect((await Promise.all(calls)).map((answer) => answer.status)).toEqual([200, 200]);

      const pids = new Set<number>();
      for (let attempt = 0; attempt < 10; attempt++) pids.add((await postJson(`${server.url}/pid`, {})).body);
      const started = readFileSync(startupLog, 'utf8').trim().split('\n').map(Number);
      expect(started).toHaveLength(2);
      expect([...pids].every((pid) => started.includes(pid))).toBe(true);
    } finally {
      await server.stop();
    }
  });
});

describe('svc start serving examples/image', () => {
  let server: RunningSvc;
  beforeAll(async () => {
    server = await startSvc([join(REPO_ROOT, 'examples/image')]);
  });
  afterAll(async () => {
    await server.stop();
  });

  it('takes an image as a multipart upload and returns an image as JSON', async () => {
    const form = new FormData();
    form.append('image', new Blob([Buffer.from(PNG_BASE64, 'base64')], { type: 'image/png' }), 'red.png');
    const response = await fetch(`${server.url}/grayscale`, { method: 'POST', body: form });
    expect(response.status).toBe(200);
    const image: any = await response.json();
    expect(image).toMatchObject({ file_name: 'grayscale.png', content_type: 'image/png' });
    expect(Buffer.from(image.content, 'base64').subarray(1, 4).toString()).toBe('PNG');
  });

  it('refuses a form that gives a parameter twice, rather than keeping one of them', async () => {
    const png = () => new Blob([Buffer.from(PNG_BASE64, 'base64')], { type: 'image/png' });
    const twoFiles = new FormData();
    twoFiles.append('image', png(), 'a.png');
    twoFiles.append('image', png(), 'b.png');
    const twoSizes = new FormData();
    twoSizes.append('image', png(), 'a.png');
    twoSizes.append('size', '100');
    twoSizes.append('size', '50');
    for (const [path, form, field] of [['/grayscale', twoFiles, 'image'], ['/thumbnail', twoSizes, 'size']] as const) {
      const response = await fetch(`${server.url}${path}`, { method: 'POST', body: form });
      expect(response.status).toBe(422);
      expect(((await response.json()) as any).error.detail).toEqual([{ field, message: expect.stringContaining('is given more than once') }]);
    }
  });

  it('takes an image as base64 or as a data URL', async () => {
    const plain = await postJson(`${server.url}/thumbnail`, { image: PNG_BASE64, size: 1 });
    expect(plain.status).toBe(200);
    const dataUrl = await postJson(`${server.url}/thumbnail`, { image: `data:image/png;base64,${PNG_BASE64}` });
    expect(dataUrl.body.content_type).toBe('image/png');
  });

  it('answers an image that is not base64 with a 422 naming it: the input is wrong, not the function', async () => {
    const bad = await postJson(`${server.url}/thumbnail`, { image: 'not base64 !!!' });
    expect(bad.status).toBe(422);
    expect(bad.body.error).toMatchObject({ type: 'validation_error', detail: [{ field: 'image', message: expect.stringContaining('not valid base64') }] });
  });
});

describe('svc start taking optional files and lists of files from a form', () => {
  let server: RunningSvc;
  beforeAll(async () => {
    server = await startSvc([join(REPO_ROOT, 'test/fixtures/gateway/uploads.py')]);
  });
  afterAll(async () => {
    await server.stop();
  });
  const png = (extra = 0) => new Blob([Buffer.from(PNG_BASE64, 'base64'), Buffer.alloc(extra)], { type: 'image/png' });

  it('takes an Optional file as one part and a list of files as repeated parts, in order', async () => {
    const form = new FormData();
    form.append('image', png(), 'photo.png');
    form.append('mask', png(), 'mask.png');
    form.append('references', png(1), 'first.png');
    form.append('strength', '0.8');
    form.append('references', png(2), 'second.png');
    const response = await fetch(`${server.url}/inpaint`, { method: 'POST', body: form });
    const size = Buffer.from(PNG_BASE64, 'base64').length;
    expect(await response.json()).toEqual({
      image: 'photo.png',
      mask: 'mask.png',
      references: [['first.png', size + 1], ['second.png', size + 2]],
      strength: 0.8,
    });
  });

  it("keeps a text field's text for a str parameter, takes an empty file input as no file, and says 400 to a broken form", async () => {
    // As a browser sends a form whose mask input was left empty (fetch's FormData would leave out the empty file name).
    const part = (headers: string, body: string) => `--XX\r\nContent-Disposition: form-data; ${headers}\r\n\r\n${body}\r\n`;
    const browserForm = [
      part('name="image"; filename="photo.png"\r\nContent-Type: image/png', Buffer.from(PNG_BASE64, 'base64').toString('latin1')),
      part('name="caption"', ' "quoted" [1] '),
      part('name="mask"; filename=""\r\nContent-Type: application/octet-stream', ''),
    ].join('') + '--XX--\r\n';
    const response = await fetch(`${server.url}/caption`, {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=XX' },
      body: Buffer.from(browserForm, 'latin1'),
    });
    expect(await response.json()).toEqual({ image: 'photo.png', caption: ' "quoted" [1] ', mask: false });
    const emptyImage = await postJson(`${server.url}/caption`, { image: '' });
    expect([emptyImage.status, emptyImage.body.error.detail]).toEqual([422, [{ field: 'image', message: expect.stringContaining('is empty') }]]);

    const cut = await fetch(`${server.url}/caption`, {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=XX' },
      body: '--XX\r\nContent-Disposition: form-data; name="image"; filename="a.png"\r\n\r\nabc',
    });
    expect([cut.status, ((await cut.json()) as any).error.message]).toEqual([400, expect.stringContaining('the multipart body cannot be read')]);
  });

  it("follows no file reference it did not write: not from a form's text field, nor from a function's result", async () => {
    const victim = join(mkdtempSync(join(tmpdir(), 'svc-victim-')), 'secret.txt');
    writeFileSync(victim, 'not for clients');
    const reference = JSON.stringify({ content: '', $file: { path: victim } });
    const form = new FormData();
    form.append('image', reference);
    const smuggled = await fetch(`${server.url}/inpaint`, { method: 'POST', body: form });
    expect([smuggled.status, ((await smuggled.json()) as any).error.detail]).toEqual([
      422,
      [{ field: 'image.$file', message: expect.stringContaining('cannot be sent') }],
    ]);
    const passedOn = await postJson(`${server.url}/parse`, { text: JSON.stringify({ $file: { path: victim } }) });
    expect(passedOn.status).toBe(500);
    expect(JSON.stringify(passedOn.body)).not.toContain(Buffer.from('not for clients').toString('base64'));
    expect(readFileSync(victim, 'utf8')).toBe('not for clients');
  });

  it("saves an upload under its base name only, whatever path the client's file name holds", async () => {
    const directory = mkdtempSync(join(tmpdir(), 'svc-saved-'));
    for (const fileName of ['../escaped.png', '/tmp/absolute.png', '..\\windows.png']) {
      const saved = await postJson(`${server.url}/saved`, { image: { file_name: fileName, content: PNG_BASE64 }, directory });
      expect(saved.body).toBe(join(directory, fileName.replace(/^.*[\\/]/, '')));
    }
  });

  it('leaves parts that are not sent to their defaults, and still refuses a single file given twice', async () => {
    const alone = new FormData();
    alone.append('image', png(), 'photo.png');
    const response = await fetch(`${server.url}/inpaint`, { method: 'POST', body: alone });
    expect(await response.json()).toEqual({ image: 'photo.png', mask: null, references: [], strength: 0.5 });

    const twoMasks = new FormData();
    twoMasks.append('image', png(), 'photo.png');
    twoMasks.append('mask', png(), 'a.png');
    twoMasks.append('mask', png(), 'b.png');
    const refused = await fetch(`${server.url}/inpaint`, { method: 'POST', body: twoMasks });
    expect(refused.status).toBe(422);
    expect(((await refused.json()) as any).error.detail).toEqual([{ field: 'mask', message: expect.stringContaining('is given more than once') }]);
  });

  it('describes them as binary parts in the OpenAPI document', async () => {
    const document: any = await (await fetch(`${server.url}/openapi.json`)).json();
    const form = document.paths['/inpaint'].post.requestBody.content['multipart/form-data'].schema.properties;
    // As the apipod toolkit describes a file: an upload, its FileModel object, or a string.
    const file = { anyOf: [{ type: 'string', format: 'binary', contentMediaType: 'image/*', minLength: 1 }, { $ref: '#/components/schemas/ImageFileModel' }, { type: 'string', minLength: 1 }] };
    expect([form.image, form.mask, form.references]).toEqual([file, file, { type: 'array', items: file }]);
    expect(document.components.schemas.ImageFileModel).toMatchObject({ required: ['file_name', 'content_type', 'content'], 'x-media-type': 'ImageFile' });
    // fastsdk sends JSON whenever an operation lists it, and cannot put a file in JSON.
    expect(Object.keys(document.paths['/inpaint'].post.requestBody.content)).toEqual(['multipart/form-data']);
  });
});

describe('svc start with date, time and UUID parameters', () => {
  it('takes them as ISO 8601 and RFC 4122 strings, answers them the same way, and names a bad one in a 422', async () => {
    const server = await startSvc([BEHAVIOURS]);
    try {
      const shifted = await postJson(`${server.url}/shift`, { when: '2026-11-23T10:00:00Z', ticket: '12345678-1234-5678-1234-567812345678' });
      expect(shifted.body).toEqual({ when: '2026-11-24T10:00:00+00:00', ticket: '12345678-1234-5678-1234-567812345678' });
      const bad = await postJson(`${server.url}/shift`, { when: 'next tuesday' });
      expect(bad.status).toBe(422);
      expect(bad.body.error.detail).toEqual([{ field: 'when', message: expect.stringContaining("Invalid isoformat string: 'next tuesday'") }]);
      expect(server.logs()).not.toContain('unknown format');
    } finally {
      await server.stop();
    }
  });
});

describe('svc start --dotenv', () => {
  it("gives the service the file's variables, those the shell sets winning", async () => {
    const envFile = join(mkdtempSync(join(tmpdir(), 'svc-env-')), 'service.env');
    writeFileSync(envFile, '# settings\nGREETING="hello there"\nPRESET=from-file\nLETTER="dear,\nyours"\nAPI_KEY: abc\n');
    const server = await startSvc([BEHAVIOURS, '--dotenv', envFile], { PRESET: 'from-shell' });
    try {
      expect((await postJson(`${server.url}/env`, { name: 'GREETING' })).body).toBe('hello there');
      expect((await postJson(`${server.url}/env`, { name: 'PRESET' })).body).toBe('from-shell');
      expect((await postJson(`${server.url}/env`, { name: 'LETTER' })).body).toBe('dear,\nyours');
      // A line that sets nothing is named, not skipped unseen; a value over two lines is no such line.
      expect(server.logs().match(/^warning: .*$/gm)).toEqual([`warning: ${envFile}:6: not NAME=value; ignored`]);
    } finally {
      await server.stop();
    }
    const missing = await runSvc(['start', BEHAVIOURS, '--port', '0', '--dotenv', '/nonexistent/.env']);
    expect([missing.exitCode, missing.stderr.trim()]).toEqual([2, 'error: /nonexistent/.env: --dotenv: cannot read it (no such file)']);
  });
});

describe('svc start with a service that cannot start', () => {
  it('reports a lifespan failure clearly and exits non-zero', async () => {
    const run = await runSvc(['start', join(REPO_ROOT, 'test/fixtures/services/failing-lifespan.py'), '--port', '0']);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain('the lifespan startup failed: RuntimeError: model weights not found');
  });

  it('says which interpreter is unusable', async () => {
    const run = await runSvc(['start', join(REPO_ROOT, 'examples/hello'), '--python', '/nonexistent/python']);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain('/nonexistent/python');
  });
});
