import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSvc, type RunningSvc } from '../support/server.js';
import { REPO_ROOT, SVC_BIN, runSvc } from '../support/svc.js';

const CALLS = join(REPO_ROOT, 'test/fixtures/jobs/calls.py');
const KEY = 'call-key-0123456789';

function hasScript(): boolean {
  try {
    execFileSync('script', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('svc call against a serverless server', () => {
  let server: RunningSvc;
  let env: Record<string, string>;
  beforeAll(async () => {
    server = await startSvc([CALLS, '--compute', 'serverless', '--job-timeout', '1', '--endpoint-timeout', '/progress=30', '--endpoint-timeout', '/slow=30'], {
      SERVICE_API_KEY: KEY,
    });
    env = { SERVICE_INFER_BACKEND_URL: server.url, SERVICE_API_KEY: KEY };
  });
  afterAll(async () => {
    await server.stop();
  });

  it('prints the result as JSON on stdout and progress as plain lines on stderr', async () => {
    const call = await runSvc(['call', '/progress', '--data', '{"count": 4, "pause": 0.4}'], { env });
    expect(call.exitCode).toBe(0);
    expect(JSON.parse(call.stdout)).toEqual({ steps: 4 });
    expect(call.stderr).toMatch(/^PROCESSING \d+% step \d of 4$/m);
    expect(call.stderr).toMatch(/^FINISHED in \d+\.\d\d s job [0-9a-f]{32}$/m);
    expect(call.stderr).not.toContain('\x1b');
  });

  it('takes the server from --url and the input from a file or stdin', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'svc-call-')), 'input.json');
    writeFileSync(file, '{"count": 2, "pause": 0}');
    const fromFile = await runSvc(['call', 'progress', '--url', server.url, '--data', `@${file}`], { env: { SERVICE_API_KEY: KEY } });
    expect(JSON.parse(fromFile.stdout)).toEqual({ steps: 2 });
    const fromStdin = await execa(process.execPath, [SVC_BIN, 'call', '/progress', '--url', server.url, '-d', '@-'], {
      env: { SERVICE_API_KEY: KEY },
      input: '{"count": 1, "pause": 0}',
      reject: false,
    });
    expect(JSON.parse(fromStdin.stdout)).toEqual({ steps: 1 });
  });

  it('prints the outcome and the job envelope with --json', async () => {
    const call = await runSvc(['call', '/noop', '--json'], { env });
    expect(call.exitCode).toBe(0);
    expect(JSON.parse(call.stdout)).toMatchObject({ status: 'FINISHED', result: { ok: true }, job: { status: 'FINISHED', id: expect.any(String) } });
    expect(call.stderr).toBe('');
  });

  it('exits 1 on FAILED with one line naming the exception, and the envelope with --json', async () => {
    const call = await runSvc(['call', '/fail'], { env });
    expect(call.exitCode).toBe(1);
    expect(call.stdout).toBe('');
    expect(call.stderr.trim().split('\n').at(-1)).toMatch(/^error: job [0-9a-f]{32} failed: RuntimeError: the GPU caught fire$/);
    const json = await runSvc(['call', '/fail', '--json'], { env });
    expect(json.exitCode).toBe(1);
    expect(JSON.parse(json.stdout).error).toMatchObject({
      code: 'job-failed',
      status: 'FAILED',
      job: { status: 'FAILED', error: { type: 'RuntimeError', message: 'the GPU caught fire' } },
    });
  });

  it('exits 1 on TIMEOUT', async () => {
    const call = await runSvc(['call', '/hang'], { env });
    expect(call.exitCode).toBe(1);
    expect(call.stderr).toMatch(/error: job [0-9a-f]{32} timed out: the job ran longer than its time-out of 1 s/);
  });

  it('cancels the job on Ctrl-C, or on SIGTERM as a cancelled CI job sends it, and exits 1 saying so', async () => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      const child = execa(process.execPath, [SVC_BIN, 'call', '/slow', '--data', '{"seconds": 30}'], { env, reject: false });
      let stderr = '';
      await new Promise<void>((resolve) => {
        child.stderr?.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
          if (stderr.includes('PROCESSING')) resolve();
        });
      });
      child.kill(signal);
      const result = await child;
      expect(result.exitCode, signal).toBe(1);
      const [, id] = /error: job ([0-9a-f]{32}) was cancelled$/m.exec(String(result.stderr)) ?? [];
      expect(id, signal).toBeDefined();
      const job: any = await (await fetch(`${server.url}/v1/jobs/${id}`, { headers: { authorization: `Bearer ${KEY}` } })).json();
      expect(job.status, signal).toBe('CANCELLED');
    }
  });

  it('with --async prints the envelope of the job, and with --wait holds the submit until it ends', async () => {
    const submitted = await runSvc(['call', '/slow', '--async', '--data', '{"seconds": 0.3}'], { env });
    expect(submitted.exitCode).toBe(0);
    const envelope = JSON.parse(submitted.stdout);
    expect(envelope).toMatchObject({ status: expect.stringMatching(/QUEUED|PROCESSING/), refresh_job_url: expect.stringContaining('/v1/jobs/') });
    expect(submitted.stderr).toContain(`follow it at ${envelope.refresh_job_url}`);
    const waited = await runSvc(['call', '/noop', '--async', '--wait', '5', '--json'], { env });
    expect(JSON.parse(waited.stdout)).toMatchObject({ status: 'FINISHED', result: { ok: true } });
    // Ended within the wait, still the envelope: a script reads one shape.
    const ended = await runSvc(['call', '/noop', '--async', '--wait', '5'], { env });
    expect(JSON.parse(ended.stdout)).toMatchObject({ status: 'FINISHED', result: { ok: true }, refresh_job_url: expect.stringContaining('/v1/jobs/') });
  });

  it('exits 1 when the job is still running after --wait, leaving it running', async () => {
    const call = await runSvc(['call', '/slow', '--data', '{"seconds": 3}', '--wait', '1'], { env });
    expect(call.exitCode).toBe(1);
    expect(call.stderr).toMatch(/error: job [0-9a-f]{32} is still PROCESSING after 1 s; it keeps running: http:\/\/127\.0\.0\.1:\d+\/v1\/jobs\//);
    const json = await runSvc(['call', '/slow', '--data', '{"seconds": 3}', '--wait', '1', '--json'], { env });
    expect(JSON.parse(json.stdout).error).toMatchObject({ code: 'wait-expired', status: expect.stringMatching(/^(QUEUED|PROCESSING)$/) });
  });

  it('draws a progress bar on a terminal', async () => {
    if (!hasScript()) return;
    const command = `${process.execPath} ${SVC_BIN} call /progress --data '{"count": 4, "pause": 0.4}'`;
    const terminal = await execa('script', ['-qfec', command, '/dev/null'], { env: { ...env, TERM: 'xterm' }, reject: false });
    expect(terminal.exitCode).toBe(0);
    expect(terminal.stdout).toMatch(/\r\x1b\[2K.*█+.*░*.*PROCESSING.*step \d of 4/);
    expect(terminal.stdout).toMatch(/✔.*FINISHED/);
    expect(terminal.stdout).toContain('"steps": 4');
  });

  it('maps a missing key to a one-line 401 error and an unknown path to 404, exit 1', async () => {
    const unauthorised = await runSvc(['call', '/noop', '--url', server.url], { env: { SERVICE_API_KEY: '' } });
    expect(unauthorised.exitCode).toBe(1);
    expect(unauthorised.stderr.trim()).toBe(`error: ${server.url}/noop refused the request (401 unauthorized: send the service API key as "Authorization: Bearer <key>"); no API key was sent: set SERVICE_API_KEY`);
    const unknown = await runSvc(['call', '/nope', '--json'], { env });
    expect(unknown.exitCode).toBe(1);
    expect(JSON.parse(unknown.stdout).error).toMatchObject({ code: 'request-failed', status: 404, url: `${server.url}/nope` });
  });
});

describe('svc call against a dedicated server', () => {
  let server: RunningSvc;
  beforeAll(async () => {
    server = await startSvc([CALLS, '--compute', 'dedicated']);
  });
  afterAll(async () => {
    await server.stop();
  });

  it('prints the body the server answers with', async () => {
    const call = await runSvc(['call', '/progress', '--url', server.url, '--data', '{"count": 1, "pause": 0}']);
    expect(call.exitCode).toBe(0);
    expect(JSON.parse(call.stdout)).toEqual({ steps: 1 });
    expect(call.stderr).toMatch(/^FINISHED in \d+\.\d\d s$/m);
  });

  it('exits 1 when the function raises', async () => {
    const call = await runSvc(['call', '/fail', '--url', server.url, '-d', '{"reason": "no cats"}']);
    expect(call.exitCode).toBe(1);
    expect(call.stderr.trim()).toBe('error: the call failed: RuntimeError: no cats');
  });

  it('calls a GET endpoint with --method GET, the input as its query string', async () => {
    const call = await runSvc(['call', '/search', '--url', server.url, '--method', 'get', '-d', '{"q": "red cats", "limit": 3, "tags": ["a", "b"]}']);
    expect(call.exitCode, call.stderr).toBe(0);
    expect(JSON.parse(call.stdout)).toEqual({ q: 'red cats', limit: 3, tags: ['a', 'b'] });
    const wrong = await runSvc(['call', '/search', '--url', server.url, '--method', 'PUT']);
    expect(wrong.exitCode).toBe(2);
  });

  it('gives up on a call still unanswered after --wait, which stops it on the server', async () => {
    const call = await runSvc(['call', '/slow', '--url', server.url, '-d', '{"seconds": 30}', '--wait', '1', '--json']);
    expect(call.exitCode).toBe(1);
    expect(JSON.parse(call.stdout).error).toMatchObject({ code: 'wait-expired', message: expect.stringContaining('did not answer within 1.5 s') });
    await expect.poll(async () => ((await (await fetch(`${server.url}/health`)).json()) as { status: string }).status).toBe('READY');
  });

  it('asks for a job with --async, and gets a 202 envelope', async () => {
    const call = await runSvc(['call', '/slow', '--url', server.url, '--async', '-d', '{"seconds": 0.2}']);
    expect(call.exitCode).toBe(0);
    expect(JSON.parse(call.stdout)).toMatchObject({ status: expect.stringMatching(/QUEUED|PROCESSING/) });
  });
});

describe('svc call with bad input', () => {
  it.each([
    [['--data', '{"count": '], /^error: --data is not valid JSON: .+$/],
    [['--data', '[1, 2]'], /^error: --data must be a JSON object of the endpoint's parameters, not an array$/],
    [['--data', '"text"'], /^error: --data must be a JSON object of the endpoint's parameters, not a string$/],
    [['--data', '@/nonexistent/input.json'], /^error: --data @\/nonexistent\/input\.json: cannot read it \(ENOENT\)$/],
    [['--data', '@'], /^error: --data @ needs a file name/],
    [['--url', 'localhost:8000'], /^error: --url must be an http:\/\/ or https:\/\/ URL, not "localhost:8000"$/],
    [['--wait', 'soon'], /error: option '--wait <seconds>' argument 'soon' is invalid/],
  ])('is a usage error naming the problem: %j', async (args, message) => {
    const call = await runSvc(['call', '/noop', '--url', 'http://127.0.0.1:1', ...args]);
    expect(call.exitCode).toBe(2);
    expect(call.stderr.trim()).toMatch(message);
  });
});
