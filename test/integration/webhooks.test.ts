import { execFileSync } from 'node:child_process';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../src/client/index.js';
import { postJson, startSvc, type RunningSvc } from '../support/server.js';
import { REPO_ROOT, runSvc } from '../support/svc.js';

const SERVICE = join(REPO_ROOT, 'test/fixtures/jobs-server/jobs.py');

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  answered: number;
}

/** A webhook receiver on loopback that answers each delivery with `answer(n)` (n counts from 1) and keeps what it got. */
async function startReceiver(answer: (n: number) => number = () => 200) {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      const status = answer(received.length + 1);
      received.push({ headers: request.headers, body, answered: status });
      response.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ok' : 'not now');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  const events = () => received.map((delivery) => JSON.parse(delivery.body).event as string);
  const until = async (test: () => boolean, what: string) => {
    const deadline = Date.now() + 20_000;
    while (!test()) {
      if (Date.now() > deadline) throw new Error(`the receiver never got ${what}; it got ${JSON.stringify(events())}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  };
  return { url, received, events, until, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** `svc webhook-secret`, as a user runs it before starting the server: its secret, shown once. */
async function makeSecret(file: string, extra: string[] = []): Promise<string> {
  const run = await runSvc(['webhook-secret', SERVICE, '--webhook-secrets', file, '--json', ...extra]);
  expect(run.exitCode, run.stderr).toBe(0);
  return JSON.parse(run.stdout).secrets[0].secret as string;
}

function secretsFile(): string {
  return join(mkdtempSync(join(tmpdir(), 'svc-hooks-')), 'webhook-secrets.json');
}

/**
 * Checks every delivery three ways: the TypeScript client's helper, the Python toolkit's, and
 * the specification written out here with Python's hmac module, independent of both.
 */
function verifyAll(deliveries: Received[], secrets: string[]): void {
  for (const delivery of deliveries) for (const secret of secrets) expect(verifyWebhook(secret, delivery.headers, delivery.body)).toBeTruthy();
  const script = `
import base64, hashlib, hmac, json, sys
from apipod.webhooks import verify_webhook
from standardwebhooks.webhooks import Webhook
data = json.load(sys.stdin)
for delivery in data["deliveries"]:
    headers = delivery["headers"]
    for secret in data["secrets"]:
        verify_webhook(secret, headers, delivery["body"])
        Webhook(secret).verify(delivery["body"], headers)  # the spec's own reference library
        key = base64.b64decode(secret[len("whsec_"):])
        signed = f'{headers["webhook-id"]}.{headers["webhook-timestamp"]}.{delivery["body"]}'.encode()
        expected = "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
        assert expected in headers["webhook-signature"].split(" "), (expected, headers["webhook-signature"])
print(len(data["deliveries"]) * len(data["secrets"]))
`;
  const input = JSON.stringify({ deliveries: deliveries.map(({ headers, body }) => ({ headers, body })), secrets });
  const checked = execFileSync('python3', ['-c', script], { input, cwd: join(REPO_ROOT, 'python'), encoding: 'utf8' });
  expect(Number(checked)).toBe(deliveries.length * secrets.length);
}

async function readJob(server: RunningSvc, id: string, headers: Record<string, string> = {}) {
  return (await fetch(`${server.url}/v1/jobs/${id}`, { headers })).json() as Promise<any>;
}

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function serve(args: string[], env: Record<string, string> = {}): Promise<RunningSvc> {
  const server = await startSvc([SERVICE, '--compute', 'serverless', ...args], env);
  cleanups.push(() => server.stop());
  return server;
}

async function receiver(answer?: (n: number) => number) {
  const started = await startReceiver(answer);
  cleanups.push(started.close);
  return started;
}

describe('job webhooks', () => {
  it('delivers started, each progress and completed in order, signed so that both helpers and the spec written out verify them', async () => {
    const file = secretsFile();
    const secret = await makeSecret(file);
    const hooks = await receiver();
    const server = await serve(['--job-store', 'memory', '--webhook-allow-private', '--webhook-secrets', file, '--webhook-throttle', '0.05']);
    const submit = await postJson(`${server.url}/steps`, { count: 3, pause: 0.4 }, { webhook: hooks.url });
    expect(submit.status).toBe(200);
    await hooks.until(() => hooks.events().includes('completed'), 'completed');

    const payloads = hooks.received.map((delivery) => JSON.parse(delivery.body));
    expect(hooks.events()[0]).toBe('started');
    expect(hooks.events().at(-1)).toBe('completed');
    const progress = payloads.filter((payload) => payload.event === 'progress').map((payload) => payload.progress);
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect([...progress].sort()).toEqual(progress); // in the order they happened
    expect(hooks.events().slice(1, -1).every((event) => event === 'progress')).toBe(true);
    // The payload is the envelope a poll returns.
    const polled = await readJob(server, submit.body.id);
    const { event, ...completed } = payloads.at(-1);
    const { webhook, ...pollEnvelope } = polled;
    expect(event).toBe('completed');
    expect(completed).toEqual(pollEnvelope);
    expect(completed.result).toEqual({ steps: 3 });
    expect(webhook).toMatchObject({ url: hooks.url, status: 'delivered', last_event: 'completed', last_error: null });
    expect(JSON.stringify(polled)).not.toContain(secret.slice('whsec_'.length));
    verifyAll(hooks.received, [secret]);
  }, 60_000);

  it('delivers a large result, kept in a file beside the job file, as the envelope a poll returns, signed over its bytes', async () => {
    const file = secretsFile();
    const secret = await makeSecret(file);
    const hooks = await receiver();
    const jobs = join(mkdtempSync(join(tmpdir(), 'svc-hooks-')), 'jobs.sqlite');
    const server = await serve(['--job-store', `sqlite:${jobs}`, '--webhook-allow-private', '--webhook-secrets', file]);
    const tag = `é "quoted" ${'x'.repeat(400_000)}`;
    const submit = await postJson(`${server.url}/order`, { tag }, { webhook: hooks.url, 'webhook-events-filter': 'completed', prefer: 'wait=10' });
    expect(submit.body.status).toBe('FINISHED');
    await hooks.until(() => hooks.events().includes('completed'), 'completed');
    const { event, ...completed } = JSON.parse(hooks.received.at(-1)!.body);
    const { webhook, ...pollEnvelope } = await readJob(server, submit.body.id);
    expect(event).toBe('completed');
    expect(completed.result).toBe(tag);
    expect(completed).toEqual(pollEnvelope);
    verifyAll(hooks.received, [secret]);
  }, 60_000);

  it("delivers a streaming job's chunks as they come, every chunk so far in each, then completed", async () => {
    const file = secretsFile();
    await makeSecret(file);
    const hooks = await receiver();
    const server = await serve(['--job-store', 'memory', '--webhook-allow-private', '--webhook-secrets', file, '--webhook-throttle', '0.05']);
    await postJson(`${server.url}/words`, { text: 'alpha beta gamma delta', pause: 0.3 }, { webhook: hooks.url, 'webhook-events-filter': 'streaming, completed' });
    await hooks.until(() => hooks.events().includes('completed'), 'completed');

    expect(new Set(hooks.events())).toEqual(new Set(['streaming', 'completed']));
    const chunks = hooks.received.slice(0, -1).map((delivery) => JSON.parse(delivery.body).chunks as string[]);
    expect(chunks.at(-1)).toEqual(['alpha', 'beta', 'gamma', 'delta']);
    for (const seen of chunks) expect(seen).toEqual(chunks.at(-1)!.slice(0, seen.length)); // each a prefix of the next
    expect(chunks.length).toBeGreaterThanOrEqual(2);
    expect(JSON.parse(hooks.received.at(-1)!.body)).toMatchObject({ status: 'FINISHED', result: 'alphabetagammadelta' });
  }, 60_000);

  it('retries a receiver that fails five times (500, 503, 429) until it accepts, under one webhook-id', async () => {
    const file = secretsFile();
    const secret = await makeSecret(file);
    const hooks = await receiver((n) => [500, 503, 429, 500, 502][n - 1] ?? 200);
    // The secrets as a container gets them: the file's text in its environment.
    const server = await serve(['--job-store', 'memory', '--webhook-allow-private', '--webhook-retry-delays', '0.05,0.05,0.05,0.05,0.05,0.05'], {
      SVC_WEBHOOK_SECRETS: readFileSync(file, 'utf8'),
    });
    const { body } = await postJson(`${server.url}/order`, { tag: 'retried' }, { webhook: hooks.url, 'webhook-events-filter': 'completed' });
    await hooks.until(() => hooks.received.some((delivery) => delivery.answered === 200), 'a delivery it accepted');

    expect(hooks.received.map((delivery) => delivery.answered)).toEqual([500, 503, 429, 500, 502, 200]);
    expect(new Set(hooks.received.map((delivery) => delivery.headers['webhook-id'])).size).toBe(1);
    expect(JSON.parse(hooks.received.at(-1)!.body)).toMatchObject({ event: 'completed', status: 'FINISHED', result: 'retried' });
    expect((await readJob(server, body.id)).webhook).toMatchObject({ status: 'delivered', attempts: 6, last_error: null });
    verifyAll(hooks.received.slice(-1), [secret]);
  }, 60_000);

  it('a secrets file that is not JSON stops the start with one line naming it; one spoilt while serving is a 503, and the event waits for it to be put right', async () => {
    const broken = secretsFile();
    writeFileSync(broken, '{"secrets": ');
    const refused = await runSvc(['start', SERVICE, '--compute', 'serverless', '--job-store', 'memory', '--webhook-secrets', broken, '--port', '0']);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toContain('the webhook secrets are not JSON');
    expect(refused.stderr).toContain(broken);
    expect(refused.stderr).not.toMatch(/\n\s+at /); // no stack trace

    const file = secretsFile();
    const secret = await makeSecret(file);
    const good = readFileSync(file, 'utf8');
    const hooks = await receiver();
    const server = await serve(['--job-store', 'memory', '--webhook-allow-private', '--webhook-secrets', file, '--webhook-retry-delays', '0.2,0.2,0.2,0.2,0.2,0.2,0.2,0.2']);
    const { body } = await postJson(`${server.url}/sleep`, { seconds: 1 }, { webhook: hooks.url, 'webhook-events-filter': 'completed' });
    writeFileSync(file, 'spoilt');
    const spoilt = await postJson(`${server.url}/order`, { tag: 'x' }, { webhook: hooks.url });
    expect(spoilt.status).toBe(503);
    expect(spoilt.body.error.code).toBe('webhook_secrets_unreadable');
    await new Promise((resolve) => setTimeout(resolve, 1500)); // the job ends; its event cannot be signed yet
    expect(hooks.received).toEqual([]);
    expect((await readJob(server, body.id)).webhook).toMatchObject({ status: 'retrying', last_error: expect.stringContaining('not JSON') });
    writeFileSync(file, good);
    await hooks.until(() => hooks.events().includes('completed'), 'completed');
    verifyAll(hooks.received, [secret]);
  }, 60_000);

  it.each([
    ['small', 'survives'],
    ['large (kept in a file beside the job file)', `survives ${'x'.repeat(300_000)}`],
  ])('goes on retrying after svc is killed (kill -9) mid-retry and started again on the same job file: a %s payload', async (_size, tag) => {
    const file = secretsFile();
    await makeSecret(file);
    const jobFile = join(mkdtempSync(join(tmpdir(), 'svc-hooks-jobs-')), 'jobs.sqlite');
    let accepting = false;
    const hooks = await receiver(() => (accepting ? 200 : 503));
    const args = ['--job-store', `sqlite:${jobFile}`, '--webhook-allow-private', '--webhook-secrets', file, '--webhook-retry-delays', Array(40).fill('0.25').join(',')];
    const first = await startSvc([SERVICE, '--compute', 'serverless', ...args]);
    const { body } = await postJson(`${first.url}/order`, { tag }, { webhook: hooks.url, 'webhook-events-filter': 'completed' });
    await hooks.until(() => hooks.received.length >= 2, 'two attempts');
    expect((await readJob(first, body.id)).webhook).toMatchObject({ status: 'retrying', last_error: 'HTTP 503: not now' });
    first.process.kill('SIGKILL');
    await first.process;
    const beforeRestart = hooks.received.length;
    accepting = true;

    const second = await serve(args);
    await hooks.until(() => hooks.received.some((delivery) => delivery.answered === 200), 'the delivery after the restart');
    expect(hooks.received.length).toBeGreaterThan(beforeRestart);
    expect(new Set(hooks.received.map((delivery) => delivery.headers['webhook-id'])).size).toBe(1);
    expect(JSON.parse(hooks.received.at(-1)!.body)).toMatchObject({ event: 'completed', result: tag });
    // The same bytes each time, under one signature.
    expect(new Set(hooks.received.map((delivery) => delivery.body)).size).toBe(1);
    await expect.poll(async () => (await readJob(second, body.id)).webhook?.status).toBe('delivered');
    await expect.poll(() => (existsSync(`${jobFile}.deliveries`) ? readdirSync(`${jobFile}.deliveries`) : [])).toEqual([]);
  }, 90_000);

  it('stops delivering to a URL that answers 410, and the result stays readable by polling', async () => {
    const file = secretsFile();
    await makeSecret(file);
    const hooks = await receiver(() => 410);
    const server = await serve(['--job-store', 'memory', '--webhook-allow-private', '--webhook-secrets', file, '--webhook-throttle', '0']);
    const { body } = await postJson(`${server.url}/steps`, { count: 3, pause: 0.2 }, { webhook: hooks.url, prefer: 'wait=20' });
    expect(body.status).toBe('FINISHED');
    await new Promise((resolve) => setTimeout(resolve, 500));

    expect(hooks.events()).toEqual(['started']);
    const polled = await readJob(server, body.id);
    expect(polled).toMatchObject({ status: 'FINISHED', result: { steps: 3 } });
    expect(polled.webhook).toMatchObject({ status: 'gone', last_event: 'started', last_error: 'HTTP 410: not now' });
  }, 60_000);

  it('refuses a private or loopback webhook without --webhook-allow-private, naming the header, and makes no job', async () => {
    const hooks = await receiver();
    const server = await serve(['--job-store', 'memory', '--webhook-secrets', secretsFile()]);
    for (const url of [hooks.url, hooks.url.replace('127.0.0.1', 'localhost'), 'http://169.254.169.254/latest/meta-data/', 'http://[::1]:9/']) {
      const refused = await postJson(`${server.url}/order`, { tag: 'x' }, { webhook: url });
      expect(refused.status, url).toBe(400);
      expect(refused.body.error).toMatchObject({ code: 'invalid_webhook', detail: [{ field: 'Webhook' }] });
      expect(refused.body.error.message).toMatch(/^the Webhook header names a URL webhooks are not sent to: \S+ (is|resolves to \S+,) a private, loopback or link-local address; svc start --webhook-allow-private allows such targets$/);
    }
    const ftp = await postJson(`${server.url}/order`, { tag: 'x' }, { webhook: 'ftp://example.com/' });
    expect(ftp.body.error.message).toContain('only http and https');
    const filter = await postJson(`${server.url}/order`, { tag: 'x' }, { webhook: 'http://93.184.215.14/', 'webhook-events-filter': 'done' });
    expect(filter.status).toBe(400);
    expect(filter.body.error.message).toBe('the Webhook-Events-Filter header "done" is not an event: use started, progress, streaming, completed');
    // A public address passes the check; this server has no secret to sign with yet.
    const unsigned = await postJson(`${server.url}/order`, { tag: 'x' }, { webhook: 'http://93.184.215.14/' });
    expect(unsigned.status).toBe(409);
    expect(unsigned.body.error.code).toBe('webhook_secret_missing');
    expect(JSON.parse((await (await fetch(`${server.url}/health`)).text())).jobs.unread).toBe(0);
    expect(hooks.received).toEqual([]);
  }, 60_000);

  it('refuses a webhook on a call that makes no job, and an events filter without its URL, naming the header', async () => {
    const file = secretsFile();
    await makeSecret(file);
    const server = await startSvc([SERVICE, '--compute', 'dedicated', '--webhook-allow-private', '--webhook-secrets', file]);
    cleanups.push(() => server.stop());
    const direct = await postJson(`${server.url}/order`, { tag: 'x' }, { webhook: 'http://127.0.0.1:9/' });
    expect(direct.status).toBe(400);
    expect(direct.body.error).toMatchObject({ code: 'webhook_needs_job', message: expect.stringContaining('add "Prefer: respond-async"') });
    const filterOnly = await postJson(`${server.url}/order`, { tag: 'x' }, { 'webhook-events-filter': 'completed' });
    expect(filterOnly.body.error).toMatchObject({ code: 'invalid_webhook', detail: [{ field: 'Webhook-Events-Filter' }] });
    const asJob = await postJson(`${server.url}/order`, { tag: 'x' }, { webhook: 'http://127.0.0.1:9/', prefer: 'respond-async, wait=10' });
    expect(asJob.status).toBe(202);
    expect(asJob.body.webhook).toMatchObject({ url: 'http://127.0.0.1:9/', last_event: 'started', last_error: expect.stringContaining('ECONNREFUSED') });
  }, 60_000);

  it('svc call --webhook-listen receives the job\'s deliveries, checks their signature and prints them', async () => {
    const file = secretsFile();
    const secret = await makeSecret(file);
    const server = await serve(['--job-store', 'memory', '--webhook-allow-private', '--webhook-secrets', file, '--webhook-throttle', '0']);
    const call = await runSvc(['call', '/steps', '--url', server.url, '-d', '{"count": 2, "pause": 0.3}', '--webhook-listen', '0'], { env: { SVC_WEBHOOK_SECRET: secret } });
    expect(call.exitCode, call.stderr).toBe(0);
    const lines = call.stderr.split('\n').filter((line) => line.startsWith('webhook '));
    expect(lines[0]).toMatch(/^webhook started PROCESSING \(msg_\S+; signature verified\)$/);
    expect(lines.at(-1)).toMatch(/^webhook completed FINISHED \(msg_\S+; signature verified\)$/);
    const forged = await runSvc(['call', '/order', '--url', server.url, '-d', '{"tag": "x"}', '--webhook-listen', '0', '--webhook-events', 'completed'], {
      env: { SVC_WEBHOOK_SECRET: 'whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
    });
    expect(forged.stderr).toContain('webhook completed FINISHED (msg_');
    expect(forged.stderr).toContain('SIGNATURE NOT VERIFIED: no webhook-signature matches the secret');
  }, 60_000);

  it("signs with each API key's own secret, and with the old and new secret during a rotation", async () => {
    const file = secretsFile();
    const key = ['--api-key', 'key-of-ada-1234'];
    const old = await makeSecret(file, key);
    const hooks = await receiver();
    const server = await serve(['--job-store', 'memory', '--webhook-allow-private', '--webhook-secrets', file, ...key]);
    const auth = { authorization: 'Bearer key-of-ada-1234', webhook: hooks.url, 'webhook-events-filter': 'completed' };
    await postJson(`${server.url}/order`, { tag: 'before' }, auth);
    await hooks.until(() => hooks.received.length === 1, 'the first job');
    expect(() => verifyWebhook(old, hooks.received[0]!.headers, hooks.received[0]!.body)).not.toThrow();

    const rotated = await makeSecret(file, [...key, '--rotate']);
    expect(rotated).not.toBe(old);
    await postJson(`${server.url}/order`, { tag: 'after' }, auth);
    await hooks.until(() => hooks.received.length === 2, 'the second job');
    const after = hooks.received[1]!;
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(2);
    verifyAll([after], [old, rotated]);
    // Another key's secret does not verify this key's deliveries.
    const other = await makeSecret(secretsFile(), ['--api-key', 'key-of-bob-5678']);
    expect(() => verifyWebhook(other, after.headers, after.body)).toThrow(/no webhook-signature matches/);
  }, 60_000);
});
