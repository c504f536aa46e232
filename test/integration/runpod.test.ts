import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRunpodStandin, type RunpodStandin } from '../support/runpod-standin.js';
import { quietPort } from '../support/ports.js';
import { postJson, startSvc, type RunningSvc } from '../support/server.js';
import { REPO_ROOT, runSvc, SVC_BIN } from '../support/svc.js';

// The provider's own library from PyPI (.ci/requirements-test.txt) takes the jobs in every
// test here; only the provider's job endpoints, which cannot be reached from here, are a
// stand-in (test/support/runpod-standin.ts).
const HELLO = join(REPO_ROOT, 'examples/hello');
const JOBS = join(REPO_ROOT, 'test/fixtures/jobs-server/jobs.py');
const EDGES = join(REPO_ROOT, 'test/fixtures/services/runpod-edges.py');

function job(input: Record<string, unknown>) {
  return { id: `job-${randomUUID()}`, input };
}

describe('provider runpod, production path: the library takes jobs from the provider (a local stand-in)', () => {
  describe('a service without generator endpoints', () => {
    let provider: RunpodStandin;
    let worker: RunningSvc;
    beforeAll(async () => {
      provider = await startRunpodStandin();
      worker = await startSvc([HELLO, '--provider', 'runpod'], provider.env, { until: 'taking-jobs' });
    });
    afterAll(async () => {
      await worker?.stop();
      await provider?.close();
    });

    it("returns the function's value as the job's output", async () => {
      const hello = job({ path: '/hello', name: 'Ada', excited: true });
      provider.queue(hello);
      const posted = await provider.result(hello.id);
      expect(posted.body).toEqual({ output: { greeting: 'Hello, Ada!' } });
      expect(posted.isStream).toBe('false');
    });

    it('sends the provider no progress for a job whose function reported none', async () => {
      const first = job({ path: '/hello', name: 'Ada' });
      const second = job({ path: '/hello', name: 'Grace' });
      provider.queue(first);
      await provider.result(first.id);
      provider.queue(second); // one worker: by the second job's result, the first's library posts are done
      await provider.result(second.id);
      expect([...provider.progress(first.id), ...provider.progress(second.id)]).toEqual([]);
    });

    it('fills in the defaults of parameters the input leaves out, and takes a path without its slash', async () => {
      const hello = job({ path: 'hello' });
      provider.queue(hello);
      expect((await provider.result(hello.id)).body).toEqual({ output: { greeting: 'Hello, world.' } });
    });

    it("fails a job with a validation error in the provider's error shape, not as completed", async () => {
      const add = job({ path: '/add', a: 1 });
      provider.queue(add);
      const { body } = await provider.result(add.id);
      expect(body).not.toHaveProperty('output');
      expect(body.error).toContain('b: is required');
    });

    it('fails a job for an endpoint the service does not have, naming the ones it has', async () => {
      const missing = job({ path: '/nope' });
      provider.queue(missing);
      const { body } = await provider.result(missing.id);
      expect(body.error).toBe('no endpoint at "/nope"; this service has /hello, /add');
    });

    it('pings the provider while it works', async () => {
      await expect.poll(() => provider.pings, { timeout: 10_000 }).toBeGreaterThan(0);
    });
  });

  describe('a service with a generator endpoint, two workers', () => {
    let provider: RunpodStandin;
    let worker: RunningSvc;
    beforeAll(async () => {
      provider = await startRunpodStandin();
      worker = await startSvc([JOBS, '--provider', 'runpod', '--workers', '2'], provider.env, { until: 'taking-jobs' });
    });
    afterAll(async () => {
      await worker?.stop();
      await provider?.close();
    });

    it('streams the chunks of a generator as they come and returns them all at the end', async () => {
      const words = job({ path: '/words', text: 'to be or not', pause: 0.05 });
      provider.queue(words);
      const posted = await provider.result(words.id);
      expect(posted.body).toEqual({ output: ['to', 'be', 'or', 'not'] });
      expect(posted.isStream).toBe('true');
      expect(provider.streamed(words.id).map((part) => part.body)).toEqual([{ output: 'to' }, { output: 'be' }, { output: 'or' }, { output: 'not' }]);
    });

    it("reports progress through the library with the fraction and message intact", async () => {
      const steps = job({ path: '/steps', count: 4, pause: 0.3 });
      provider.queue(steps);
      const posted = await provider.result(steps.id);
      // With a generator endpoint in the service the handler streams, so a plain result is its only part.
      expect(posted.body).toEqual({ output: [{ steps: 4 }] });
      const updates = provider.progress(steps.id).map((update) => update.body);
      expect(updates).toContainEqual({ status: 'IN_PROGRESS', output: { progress: 0.25, message: 'step 1 of 4' } });
      expect(updates).toContainEqual({ status: 'IN_PROGRESS', output: { progress: 0.75, message: 'step 3 of 4' } });
    });

    it("fails a job whose function raises, with the exception's type and message", async () => {
      const fail = job({ path: '/fail' });
      provider.queue(fail);
      const { body } = await provider.result(fail.id);
      expect(body).toEqual({ error: 'RuntimeError: the GPU caught fire' });
    });

    it('takes as many jobs at once as there are workers, and no more', async () => {
      const sleeps = [1, 2, 3, 4, 5].map(() => job({ path: '/sleep', seconds: 0.8 }));
      for (const sleep of sleeps) provider.queue(sleep);
      const results = await Promise.all(sleeps.map((sleep) => provider.result(sleep.id)));
      expect(results.map((posted) => posted.body)).toEqual(sleeps.map(() => ({ output: [0.8] })));
      expect(provider.mostJobsAtOnce).toBe(2);
    });

    it("cancels the job in svc when the provider stops it (cancelled or timed out there)", async () => {
      const sleep = job({ path: '/sleep', seconds: 60 });
      provider.queue(sleep);
      await expect.poll(() => worker.logs(), { timeout: 10_000 }).toContain('sleeping 60.0 s');
      expect(worker.logs()).not.toContain('(the client left)');
      // The library's line for the provider's job names svc's job, whose id tags the worker's output.
      const svcJobLine = new RegExp(`${sleep.id} \\| svc job ([0-9a-f]{32})`);
      await expect.poll(() => worker.logs(), { timeout: 10_000 }).toMatch(svcJobLine); // the bridge's output and the worker's race
      const svcJob = svcJobLine.exec(worker.logs())?.[1];
      expect(worker.logs()).toMatch(new RegExp(`^\\[worker \\d+ ${svcJob}\\] sleeping 60\\.0 s$`, 'm'));
      provider.stop(sleep.id);
      // The bridge leaves the call's stream, which cancels it.
      await expect.poll(() => worker.logs(), { timeout: 10_000 }).toMatch(/^POST \/sleep 200 \d+ms \(the client left\)$/m);
    });

    it('stops on SIGTERM with exit code 0, and says so', async () => {
      expect(await worker.stop()).toBe(0);
      expect(worker.logs()).toMatch(/^svc stopped$/m);
    });
  });
});

describe("provider runpod, trying it out here: the library's test server and a test input", () => {
  let server: RunningSvc;
  beforeAll(async () => {
    server = await startSvc([HELLO, '--provider', 'runpod', '--test-server', '--port', String(await quietPort())]);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('serves the library test API: submit with /run, poll /status, get the result', async () => {
    const submitted = await postJson(`${server.url}/run`, { input: { path: '/hello', name: 'Grace' } });
    expect(submitted.status).toBe(200);
    expect(submitted.body.status).toBe('IN_PROGRESS');
    let status: any;
    await expect
      .poll(async () => {
        status = (await postJson(`${server.url}/status/${submitted.body.id}`, {})).body;
        return status.status;
      }, { timeout: 15_000 })
      .toBe('COMPLETED');
    expect(status.output).toEqual({ greeting: 'Hello, Grace.' });
  });

  it('answers /runsync with FAILED and the message for bad input', async () => {
    const answer = await postJson(`${server.url}/runsync`, { input: { path: '/add', a: 'two', b: 1 } });
    expect(answer.body).toMatchObject({ status: 'FAILED' });
    expect(answer.body.error).toContain('a:');
  });

  it('serves the test API on IPv6 with --host ::, says where, and stops on the first SIGTERM', async () => {
    const ipv6 = await startSvc([EDGES, '--test-server', '--host', '::', '--port', String(await quietPort('::'))]);
    const port = new URL(ipv6.url).port;
    expect(ipv6.url).toBe(`http://[::1]:${port}`);
    const answer = await postJson(`http://[::1]:${port}/runsync`, { input: { path: '/tagged' } });
    expect(answer.body).toMatchObject({ status: 'COMPLETED', output: { value: 1 } });
    expect(await ipv6.stop()).toBe(0);
  });

  it("judges a test job as the library does: an empty error is no failure, and its keys are not output", async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'svc-runpod-')), 'tagged.json');
    writeFileSync(file, JSON.stringify({ input: { path: '/tagged' } }));
    const run = await runSvc(['start', EDGES, '--test-input', file]);
    expect([run.exitCode, JSON.parse(run.stdout)]).toEqual([0, { output: { value: 1 } }]);
    // --test-input named the provider: its parameter named "path" was warned about before the job ran.
    expect(run.stderr).toContain('/read: its parameter "path" cannot be given in a provider\'s job, whose "path" names the endpoint; rename the parameter');
  });

  it("routes a job whose path is spelt as the apipod package spells it (make-fries for /make_fries)", async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'svc-runpod-')), 'fries.json');
    writeFileSync(file, JSON.stringify({ input: { path: 'make-fries', portions: 2 } }));
    const run = await runSvc(['start', EDGES, '--test-input', file]);
    expect([run.exitCode, JSON.parse(run.stdout)]).toEqual([0, { output: 'fries fries ' }]);
  });

  it('exits 1 when a signal stops a test job before it ends, saying it has no result', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'svc-runpod-')), 'sleep.json');
    writeFileSync(file, JSON.stringify({ input: { path: '/sleep', seconds: 30 } }));
    const child = execa(process.execPath, [SVC_BIN, 'start', EDGES, '--provider', 'runpod', '--test-input', file], { reject: false });
    let stderr = '';
    await new Promise<void>((resolve) => {
      child.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes('sleeping')) resolve();
      });
    });
    child.kill('SIGTERM');
    const result = await child;
    expect(result.exitCode).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n').at(-1)).toBe('error: SIGTERM: stopped before the test job ended, so it has no result');
  });

  it('runs one test input from a file: its result on stdout, exit 0; a failed job exits 1', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-runpod-'));
    const good = join(dir, 'good.json');
    const bad = join(dir, 'bad.json');
    writeFileSync(good, JSON.stringify({ input: { path: '/add', a: 1, b: 2.5 } }));
    writeFileSync(bad, JSON.stringify({ input: { path: '/add', a: 1 } }));

    const [passed, failed] = await Promise.all([
      runSvc(['start', HELLO, '--provider', 'runpod', '--test-input', good]),
      runSvc(['start', HELLO, '--provider', 'runpod', '--test-input', bad]),
    ]);
    expect(passed.exitCode).toBe(0);
    expect(JSON.parse(passed.stdout)).toEqual({ output: { sum: 3.5 } });
    expect(failed.exitCode).toBe(1);
    expect(JSON.parse(failed.stdout)).toEqual({ error: 'invalid input: b: is required' });
    expect(failed.stderr).toContain('error: the test job failed: invalid input: b: is required');
  });
});

describe('provider runpod, trying out a service that streams', () => {
  let server: RunningSvc;
  beforeAll(async () => {
    server = await startSvc([JOBS, '--provider', 'runpod', '--test-server', '--port', String(await quietPort())]);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('ends a failed job FAILED, as a worker would, not COMPLETED with the error as its output', async () => {
    for (const input of [{ path: '/fail' }, { path: '/nowhere' }, { path: '/sleep', seconds: 'x' }]) {
      const answer = await postJson(`${server.url}/runsync`, { input });
      expect(answer.body.status, JSON.stringify(input)).toBe('FAILED');
    }
    expect((await postJson(`${server.url}/runsync`, { input: { path: '/fail' } })).body.error).toContain('the GPU caught fire');
  });

  it("returns a generator's chunks as one list, and a GET endpoint's list parameter item by item", async () => {
    expect((await postJson(`${server.url}/runsync`, { input: { path: '/words', pause: 0 } })).body).toMatchObject({
      status: 'COMPLETED',
      output: ['one', 'two', 'three'],
    });
    expect((await postJson(`${server.url}/runsync`, { input: { path: '/tags', names: ['a', 'b'] } })).body.output).toEqual([['a', 'b']]);
  });

  it('fails a GET job whose input a query string cannot carry, rather than pass the text "null" or drop a list', async () => {
    for (const [names, shown] of [[[], '[]'], [['a', null], '["a", null]']] as const) {
      const answer = await postJson(`${server.url}/runsync`, { input: { path: '/tags', names } });
      expect(answer.body).toMatchObject({
        status: 'FAILED',
        error: `/tags takes its parameters as a query string, which cannot carry names=${shown}: leave them out to get their defaults`,
      });
    }
  });

  it('gives a test input the output a worker gives, the parts as a list', async () => {
    const input = join(mkdtempSync(join(tmpdir(), 'svc-runpod-')), 'words.json');
    writeFileSync(input, JSON.stringify({ input: { path: '/words', text: 'a b', pause: 0 } }));
    const run = await runSvc(['start', JOBS, '--provider', 'runpod', '--test-input', input]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ output: ['a', 'b'] });
  });
});
