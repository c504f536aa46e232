import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { registerCors } from '../../src/serve/cors.js';
import { HttpApp } from '../../src/serve/http/http-app.js';
import { HttpError } from '../../src/serve/http-error.js';
import { listenAt } from '../../src/serve/listen.js';

// The gateway's HTTP layer on a real node:http server, asked by a real client.

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

function ask(url: string, { method = 'GET', headers = {}, body }: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const sent = httpRequest(url, { method, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString() }));
      response.on('error', reject);
    });
    sent.on('error', reject);
    sent.end(body);
  });
}

const apps: HttpApp[] = [];

async function serve(configure: (app: HttpApp) => void, bodyLimit = 1024): Promise<string> {
  const app = new HttpApp({ bodyLimit, bodyTooLarge: () => new HttpError(413, 'payload_too_large', 'body_too_large', 'too large') });
  app.setBodyParsers([{ mediaType: /^application\/json/, reads: 'bytes', parse: (_request, body) => JSON.parse(body!.toString()) }]);
  configure(app);
  apps.push(app);
  return app.listen({ host: '127.0.0.1', port: 0 });
}

afterEach(async () => {
  for (const app of apps.splice(0)) {
    app.server.closeAllConnections();
    await app.close();
  }
});

describe('the gateway HTTP layer', () => {
  it('routes with and without a trailing slash, percent-escapes read, and answers HEAD with the GET headers alone', async () => {
    const url = await serve((app) => app.get('/hello', () => ({ greeting: 'hi' })));
    for (const path of ['/hello', '/hello/', '/h%65llo']) {
      expect(await ask(`${url}${path}`)).toMatchObject({ status: 200, body: '{"greeting":"hi"}' });
    }
    const head = await ask(`${url}/hello`, { method: 'HEAD' });
    expect([head.status, head.headers['content-length'], head.body]).toEqual([200, '17', '']);
    expect((await ask(`${url}/nothing`)).status).toBe(404);
  });

  it('refuses a compressed body with a 415 that names its encoding, rather than reading it as text', async () => {
    const url = await serve((app) => app.post('/echo', (request) => request.body as object));
    const refused = await ask(`${url}/echo`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: '\x1f\x8b' });
    expect([refused.status, refused.headers['accept-encoding'], JSON.parse(refused.body).error]).toEqual([
      415,
      'identity',
      { status: 415, type: 'unsupported_media_type', code: 'unsupported_content_encoding', message: 'Content-Encoding gzip is not accepted: send the body uncompressed' },
    ]);
    const plain = await ask(`${url}/echo`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': 'identity' }, body: '{"a":1}' });
    expect([plain.status, plain.body]).toEqual([200, '{"a":1}']);
  });

  it('decodes path parameters, and refuses bad percent-encoding (400) and over-long parameters (414) in the one error shape', async () => {
    const url = await serve((app) => app.get('/jobs/:id', (request) => ({ id: request.params.id })));
    expect(JSON.parse((await ask(`${url}/jobs/a%2Fb`)).body)).toEqual({ id: 'a/b' });
    const bad = await ask(`${url}/jobs/%E0%A4%A`);
    expect([bad.status, JSON.parse(bad.body).error.code]).toEqual([400, 'invalid_url']);
    const long = await ask(`${url}/jobs/${'a'.repeat(1001)}`);
    expect([long.status, JSON.parse(long.body).error.code]).toEqual([414, 'uri_too_long']);
    expect((await ask(`${url}/jobs/${'a'.repeat(1000)}`)).status).toBe(200);
  });

  it('refuses a body over the limit by its Content-Length or by its bytes, and reads one at the limit', async () => {
    const url = await serve((app) => app.post('/echo', (request) => request.body));
    const exact = JSON.stringify({ text: 'x'.repeat(1024 - 11) });
    expect(exact.length).toBe(1024);
    expect(await ask(`${url}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: exact })).toMatchObject({ status: 200, body: exact });
    const over = JSON.stringify({ text: 'x'.repeat(1024 - 10) });
    expect((await ask(`${url}/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: over })).status).toBe(413);
    const chunked = await ask(`${url}/echo`, { method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' }, body: over });
    expect([chunked.status, JSON.parse(chunked.body).error.code]).toEqual([413, 'body_too_large']);
  });

  it('answers a failing hook, parser or handler in the one error shape, keeping the headers set before and adding its own', async () => {
    const url = await serve((app) => {
      app.onRequest((request, reply, done) => {
        reply.header('x-seen', 'yes');
        done(request.headers['x-refuse'] ? new HttpError(401, 'authentication_error', 'missing_key', 'refused', { headers: { 'www-authenticate': 'Bearer' } }) : undefined);
      });
      app.post('/fail', () => Promise.reject(new HttpError(422, 'validation_error', 'invalid_input', 'bad')));
    });
    const refused = await ask(`${url}/fail`, { method: 'POST', headers: { 'x-refuse': '1' } });
    expect([refused.status, refused.headers['x-seen'], refused.headers['www-authenticate'], JSON.parse(refused.body).error.code]).toEqual([401, 'yes', 'Bearer', 'missing_key']);
    const failed = await ask(`${url}/fail`, { method: 'POST' });
    expect([failed.status, failed.headers['x-seen'], JSON.parse(failed.body).error.message]).toEqual([422, 'yes', 'bad']);
    // The test's parser throws a SyntaxError, no HttpError: svc's own failure, said as such.
    const unparsable = await ask(`${url}/fail`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' });
    expect([unparsable.status, JSON.parse(unparsable.body).error.message]).toEqual([500, expect.stringMatching(/^svc failed: /)]);
  });

  it('answers a stream that fails before its first piece with an error, and cuts one that fails later', async () => {
    const url = await serve((app) => {
      app.get('/early', (_request, reply) =>
        reply.send(
          Readable.from(
            (function* () {
              throw new HttpError(503, 'unavailable', 'cancelled', 'gone');
            })(),
          ),
        ),
      );
      app.get('/late', (_request, reply) =>
        reply.send(
          Readable.from(
            (function* () {
              yield 'first';
              throw new Error('broke');
            })(),
          ),
        ),
      );
    });
    const early = await ask(`${url}/early`);
    expect([early.status, JSON.parse(early.body).error.code]).toEqual([503, 'cancelled']);
    await expect(ask(`${url}/late`)).rejects.toThrow(/aborted|socket hang up/);
  });

  it('once closed, answers what reaches it with a 503 that closes the connection, and lets its in-flight calls finish', async () => {
    let release = () => {};
    const app = new HttpApp({ bodyLimit: 1024, bodyTooLarge: () => new Error('too large') });
    app.get('/slow', () => new Promise((resolve) => (release = () => resolve({ done: true }))));
    apps.push(app);
    // Behind a server of its own, as `svc start --reload` puts each gateway.
    const front = createServer(app.routing);
    const url = await listenAt(front, '127.0.0.1', 0);
    try {
      const slow = ask(`${url}/slow`);
      await new Promise((resolve) => setTimeout(resolve, 50));
      await app.close();
      const refused = await ask(`${url}/slow`);
      expect([refused.status, refused.headers.connection, refused.headers['retry-after'], JSON.parse(refused.body).error.code]).toEqual([503, 'close', '2', 'stopping']);
      release();
      expect(JSON.parse((await slow).body)).toEqual({ done: true });
    } finally {
      front.closeAllConnections();
      front.close();
    }
  });

  it('answers a request Node cannot parse in the one error shape, and closes its connection', async () => {
    const url = await serve((app) => app.get('/hello', () => ({ greeting: 'hi' })));
    const { port } = new URL(url);
    const rawAnswer = (text: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1', () => socket.end(text));
        const chunks: Buffer[] = [];
        socket.on('data', (chunk: Buffer) => chunks.push(chunk));
        socket.on('close', () => resolve(Buffer.concat(chunks).toString()));
        socket.on('error', reject);
      });
    const garbage = await rawAnswer('NOT HTTP AT ALL\r\n\r\n');
    expect(garbage).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(garbage).toContain('connection: close');
    expect(JSON.parse(garbage.split('\r\n\r\n')[1]!).error).toMatchObject({ status: 400, code: 'malformed_request' });
    const huge = await rawAnswer(`GET /hello HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(17_000)}\r\n\r\n`);
    expect(huge).toMatch(/^HTTP\/1\.1 431 /);
    expect(JSON.parse(huge.split('\r\n\r\n')[1]!).error).toMatchObject({ status: 431, code: 'headers_too_large' });
  });

  it('answers CORS preflights on any path and names an allowed origin only', async () => {
    const url = await serve((app) => {
      registerCors(app, ['https://app.example.com']);
      app.get('/hello', () => ({ greeting: 'hi' }));
    });
    const preflight = await ask(`${url}/anything`, { method: 'OPTIONS', headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST' } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers).toMatchObject({
      'access-control-allow-origin': 'https://app.example.com',
      'access-control-allow-methods': 'GET, POST, OPTIONS',
      'access-control-max-age': '600',
      vary: 'Origin',
    });
    const notPreflight = await ask(`${url}/hello`, { method: 'OPTIONS' });
    expect([notPreflight.status, notPreflight.body]).toEqual([400, 'Invalid Preflight Request']);
    const allowed = await ask(`${url}/hello`, { headers: { origin: 'https://app.example.com' } });
    expect(allowed.headers['access-control-allow-origin']).toBe('https://app.example.com');
    expect(allowed.headers['access-control-expose-headers']).toContain('content-location');
    const other = await ask(`${url}/hello`, { headers: { origin: 'https://evil.example' } });
    expect([other.status, other.headers['access-control-allow-origin']]).toEqual([200, undefined]);
  });
});
