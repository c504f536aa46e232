import { existsSync, mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { postJson, startSvc, type RunningSvc } from '../support/server.js';
import { type Envelope } from '../support/job-envelope.js';
import { REPO_ROOT, runSvc } from '../support/svc.js';

const SERVICE = join(REPO_ROOT, 'test/fixtures/jobs-server/jobs.py');

/** A server whose jobs live in `file`, as a user starts it again after a crash: the same command. */
function startWith(file: string, extra: string[] = []): Promise<RunningSvc> {
  return startSvc([SERVICE, '--compute', 'serverless', '--workers', '2', '--queue-size', '1000', '--job-store', `sqlite:${file}`, ...extra]);
}

async function kill9(server: RunningSvc): Promise<void> {
  server.process.kill('SIGKILL');
  await server.process;
}

async function readJob(server: RunningSvc, id: string, wait = 0): Promise<{ status: number; body: Envelope }> {
  const response = await fetch(`${server.url}/v1/jobs/${id}`, { headers: wait > 0 ? { prefer: `wait=${wait}` } : {} });
  return { status: response.status, body: (await response.json()) as Envelope };
}

async function waitUntil(server: RunningSvc, id: string, statuses: string[]): Promise<Envelope> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const { body } = await readJob(server, id);
    if (statuses.includes(body.status) || Date.now() > deadline) return body;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * `clients` clients send `submit(n)` for n = 0, 1, ... (at most `submits`), until `killAfter`
 * of them were answered 2xx: the server is killed (kill -9) then. The 2xx answers' bodies.
 */
async function floodUntilKilled(
  server: RunningSvc,
  { submits, clients, killAfter }: { submits: number; clients: number; killAfter: number },
  submit: (n: number) => Promise<{ status: number; body: any }>,
): Promise<Envelope[]> {
  const answered: Envelope[] = [];
  let sent = 0;
  let killed = false;
  const client = async () => {
    while (sent < submits && !killed) {
      try {
        const answer = await submit(sent++);
        if (answer.status >= 200 && answer.status < 300) answered.push(answer.body as Envelope);
      } catch {
        // Cut mid-request by the kill: no client learnt its id.
      }
      if (answered.length >= killAfter && !killed) {
        killed = true;
        await kill9(server);
      }
    }
  };
  await Promise.all(Array.from({ length: clients }, client));
  expect(killed).toBe(true);
  return answered;
}

/** The jobs once they have ended on `server`. */
function endedJobs(server: RunningSvc, ids: string[]): Promise<Envelope[]> {
  return Promise.all(ids.map((id) => waitUntil(server, id, ['FINISHED', 'FAILED'])));
}

/** How the jobs ended, but for FINISHED or a crash named (FAILED ServerCrashed): what no job may do. */
function unexpectedEndings(ended: Envelope[]): string[] {
  return ended
    .map((envelope) => (envelope.status === 'FINISHED' ? 'FINISHED' : `${envelope.status} ${envelope.error_detail?.type}`))
    .filter((outcome) => outcome !== 'FINISHED' && outcome !== 'FAILED ServerCrashed');
}

function jobFile(): string {
  return join(mkdtempSync(join(tmpdir(), 'svc-jobs-')), 'jobs.sqlite');
}

describe('jobs in a SQLite file (--job-store sqlite:PATH)', () => {
  it('loses no accepted job when the gateway is killed (kill -9) in the middle of a flood: each ends FINISHED after a restart', async () => {
    const file = jobFile();
    let server = await startWith(file);
    // 300 submits from 24 clients at once; the gateway dies once 150 have been accepted.
    const accepted = await floodUntilKilled(server, { submits: 300, clients: 24, killAfter: 150 }, (n) => postJson(`${server.url}/order`, { tag: `job-${n}` }));

    server = await startWith(file);
    try {
      const toRun = Number(/(\d+) to run/.exec(server.logs())?.[1]);
      expect(toRun).toBeGreaterThan(0); // some were still queued or running: the test proves something
      const ended = await endedJobs(server, accepted.map((job) => job.id));
      expect(unexpectedEndings(ended)).toEqual([]);
      expect(ended.filter((envelope) => envelope.status === 'FINISHED').every((envelope) => typeof envelope.result === 'string')).toBe(true);
    } finally {
      await server.stop();
    }
  }, 90_000);

  it('loses no job answered to a Prefer: wait submit when the gateway is killed mid-flood: ended ones keep their result, unended ones run after a restart', async () => {
    const file = jobFile();
    let server = await startWith(file);
    // 16 clients waiting on their jobs; one submit in eight outlasts its wait and is answered unended.
    const answered = await floodUntilKilled(server, { submits: 300, clients: 16, killAfter: 100 }, (n) =>
      n % 8 === 0
        ? postJson(`${server.url}/sleep`, { seconds: 1.2 }, { prefer: 'wait=1' })
        : postJson(`${server.url}/order`, { tag: `job-${n}` }, { prefer: 'wait=10' }),
    );
    const finished = answered.filter((job) => job.status === 'FINISHED');
    const unended = answered.filter((job) => job.status !== 'FINISHED');
    expect(finished.length).toBeGreaterThan(40);
    expect(unended.length).toBeGreaterThan(0);
    expect(finished.every((job) => job.result === 1.2 || /^job-\d+$/.test(job.result as string))).toBe(true);

    server = await startWith(file);
    try {
      // Answered with its result: read back as it was answered.
      for (const job of finished) expect((await readJob(server, job.id)).body).toMatchObject({ status: 'FINISHED', result: job.result });
      // Answered still running or queued: runs again (or fails naming the crash).
      expect(unexpectedEndings(await endedJobs(server, unended.map((job) => job.id)))).toEqual([]);
    } finally {
      await server.stop();
    }
  }, 90_000);

  it('keeps large arguments and results in files beside the job file through a kill -9: a result reads back whole, a queued job runs with its arguments', async () => {
    const file = jobFile();
    let server = await startWith(file);
    const large = (letter: string) => `${letter}${'é'.repeat(200_000)}`;
    const answered = await postJson(`${server.url}/order`, { tag: large('a') }, { prefer: 'wait=10' });
    expect(answered.body.status).toBe('FINISHED');
    // Both workers busy: the next job waits in the queue, its arguments on disk.
    const busy = await Promise.all([1, 2].map(() => postJson(`${server.url}/sleep`, { seconds: 0.5 })));
    const queued = await postJson(`${server.url}/order`, { tag: large('b') });
    expect(existsSync(`${file}.values/${answered.body.id}.result`)).toBe(true);
    expect(existsSync(`${file}.values/${queued.body.id}.args`)).toBe(true);
    await kill9(server);

    server = await startWith(file);
    try {
      expect((await readJob(server, answered.body.id)).body).toMatchObject({ status: 'FINISHED', result: large('a') });
      expect(await waitUntil(server, queued.body.id, ['FINISHED', 'FAILED'])).toMatchObject({ status: 'FINISHED', result: large('b') });
      expect(unexpectedEndings(await endedJobs(server, busy.map((job) => job.body.id)))).toEqual([]);
      // Its end written, its arguments' file goes; its result's stays while the job is kept.
      await expect.poll(() => existsSync(`${file}.values/${queued.body.id}.args`)).toBe(false);
      expect(existsSync(`${file}.values/${queued.body.id}.result`)).toBe(true);
    } finally {
      await server.stop();
    }
  }, 90_000);

  it('answers 503 naming the file while it cannot be written (a full disk), stays up, loses no job it accepted, and takes jobs again once it can', async () => {
    const file = jobFile();
    let server = await startWith(file);
    const pid = String(server.process.pid);
    const accepted: string[] = [];
    const refusals: Array<{ status: number; code: string; message: string }> = [];
    // One job in four has a result large enough for a file of its own beside the job file.
    const tag = (n: number) => (n % 4 === 3 ? `job-${n}-${'x'.repeat(300_000)}` : `job-${n}`);
    const submit = async (n: number) => {
      const answer = n % 2 === 0 ? await postJson(`${server.url}/order`, { tag: tag(n) }) : await postJson(`${server.url}/order`, { tag: tag(n) }, { prefer: 'wait=10' });
      if (answer.status >= 200 && answer.status < 300) accepted.push(answer.body.id);
      else refusals.push({ status: answer.status, code: answer.body.error?.code, message: answer.body.error?.message });
    };
    await submit(0);
    // What a full disk does to SQLite, for this process alone: its files may grow no further.
    const walBytes = statSync(`${file}-wal`).size;
    await execa('prlimit', ['--pid', pid, `--fsize=${walBytes + 20_000}:unlimited`]);
    for (let n = 1; n <= 240; n += 8) await Promise.all(Array.from({ length: 8 }, (_, i) => submit(n + i)));
    const acceptedWhileFull = accepted.length;

    expect(refusals.length).toBeGreaterThan(0);
    expect(new Set(refusals.map(({ status, code }) => `${status} ${code}`))).toEqual(new Set(['503 job_store_unwritable']));
    expect(refusals[0]?.message).toMatch(new RegExp(`^--job-store sqlite:${file.replace(/[.]/g, '\\.')} cannot be written \\(.+\\): the job was not accepted; retry once it can$`));
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
    expect(server.logs()).toContain(`warning: --job-store sqlite:${file} cannot be written`);

    await execa('prlimit', ['--pid', pid, '--fsize=unlimited:unlimited']);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await submit(1000);
    await submit(1001);
    expect(accepted.length).toBe(acceptedWhileFull + 2);
    expect(server.logs()).toContain(`warning: --job-store sqlite:${file} is written again`);

    // A large job refused for the full disk left no part of its file behind.
    await new Promise((resolve) => setTimeout(resolve, 100)); // the last ends written
    const ids = new Set(readdirSync(`${file}.values`).map((name) => name.split('.')[0]));
    expect([...ids].filter((id) => !accepted.includes(id!))).toEqual([]);

    await kill9(server);
    server = await startWith(file);
    try {
      expect(unexpectedEndings(await endedJobs(server, accepted))).toEqual([]);
      expect(server.logs()).not.toContain('that no job named');
    } finally {
      await server.stop();
    }
  }, 90_000);

  it('runs a job that was running at the crash once more, and fails it naming the crash when the server dies again', async () => {
    const file = jobFile();
    let server = await startWith(file);
    const { id } = (await postJson(`${server.url}/sleep`, { seconds: 60 })).body as Envelope;
    await waitUntil(server, id, ['PROCESSING']);
    await kill9(server);

    server = await startWith(file);
    const again = await waitUntil(server, id, ['PROCESSING']);
    expect(again).toMatchObject({ status: 'PROCESSING', message: 'queued again: the server stopped while this job ran' });
    await kill9(server);

    server = await startWith(file);
    try {
      const failed = (await readJob(server, id)).body;
      expect(failed.status).toBe('FAILED');
      expect(failed.error_detail?.type).toBe('ServerCrashed');
      expect(failed.error).toContain('kill -9');
    } finally {
      await server.stop();
    }
  }, 90_000);

  it('keeps the jobs a graceful stop could not run for the next start: queued ones run, cut-short ones run once more', async () => {
    const file = jobFile();
    let server = await startWith(file, ['--grace-period', '1']);
    const sleeping = await Promise.all([1, 2].map(async () => ((await postJson(`${server.url}/sleep`, { seconds: 5 })).body as Envelope).id));
    for (const id of sleeping) await waitUntil(server, id, ['PROCESSING']);
    const queued = await Promise.all(['a', 'b', 'c'].map(async (tag) => ((await postJson(`${server.url}/order`, { tag })).body as Envelope).id));
    const watcher = readJob(server, queued[0] as string, 10);
    // A client waiting on its submit is answered with its job, which is then written to run later.
    const waitingSubmit = postJson(`${server.url}/order`, { tag: 'd' }, { prefer: 'wait=30' });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const stopping = server.stop();
    // A client polling while the server stops is told where its job stands, not that it failed.
    expect((await watcher).body).toMatchObject({ status: 'QUEUED', message: 'the server is stopping: this job runs when it starts again' });
    const waited = (await waitingSubmit).body as Envelope;
    expect(waited).toMatchObject({ status: 'QUEUED', message: 'the server is stopping: this job runs when it starts again' });
    queued.push(waited.id);
    expect(await stopping).toBe(0);
    expect(server.logs()).toContain(`6 job(s) not ended are kept in sqlite:${file}: they run when the server starts again`);

    server = await startWith(file);
    try {
      expect(server.logs()).toContain('6 to run');
      // In the order they came: the two cut short run again first, then the queued ones.
      for (const id of sleeping) {
        expect(await waitUntil(server, id, ['PROCESSING'])).toMatchObject({ message: 'queued again: the server stopped while this job ran' });
      }
      expect(await Promise.all(queued.map(async (id) => (await waitUntil(server, id, ['FINISHED'])).result))).toEqual(['a', 'b', 'c', 'd']);
      for (const id of sleeping) expect((await waitUntil(server, id, ['FINISHED'])).result).toBe(5);
    } finally {
      await server.stop();
    }
  }, 60_000);

  it('keeps an ended job readable, to its owner only, after a crash, and sweeps it once its TTL has passed', async () => {
    const file = jobFile();
    const keys = ['--api-key', 'secret-a'];
    let server = await startWith(file, [...keys, '--job-ttl', '6']);
    const auth = { authorization: 'Bearer secret-a' };
    const { id } = (await postJson(`${server.url}/order`, { tag: 'kept' }, auth)).body as Envelope;
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await kill9(server);

    server = await startWith(file, [...keys, '--job-ttl', '6']);
    const read = async () => {
      const response = await fetch(`${server.url}/v1/jobs/${id}`, { headers: auth });
      return { status: response.status, body: (await response.json()) as Envelope };
    };
    expect(await read()).toMatchObject({ status: 200, body: { status: 'FINISHED', result: 'kept' } });
    expect((await fetch(`${server.url}/v1/jobs/${id}`)).status).toBe(401);
    await kill9(server);

    await new Promise((resolve) => setTimeout(resolve, 6000));
    server = await startWith(file, [...keys, '--job-ttl', '6']);
    try {
      expect(server.logs()).toContain('0 ended job(s) still readable');
      expect((await read()).status).toBe(404);
    } finally {
      await server.stop();
    }
  }, 60_000);

  it('does not hold up a stop for unread results a crash carried over: they stay in the file for the next start', async () => {
    const file = jobFile();
    let server = await startWith(file);
    const { id } = (await postJson(`${server.url}/order`, { tag: 'unread' })).body as Envelope;
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await kill9(server);

    server = await startWith(file);
    const stopping = Date.now();
    expect(await server.stop()).toBe(0);
    expect(Date.now() - stopping).toBeLessThan(5000);
    expect(server.logs()).not.toContain('waiting up to');
    server = await startWith(file);
    try {
      expect((await readJob(server, id)).body).toMatchObject({ status: 'FINISHED', result: 'unread' });
    } finally {
      await server.stop();
    }
  }, 60_000);

  it('keeps serverless jobs in memory with --job-store memory: a crash loses them', async () => {
    const memory = [SERVICE, '--compute', 'serverless', '--job-store', 'memory'];
    let server = await startSvc(memory);
    const { id } = (await postJson(`${server.url}/order`, { tag: 'gone' })).body as Envelope;
    await waitUntil(server, id, ['FINISHED']);
    await kill9(server);
    server = await startSvc(memory);
    try {
      expect(server.logs()).not.toContain('jobs are kept in');
      expect((await readJob(server, id)).status).toBe(404);
    } finally {
      await server.stop();
    }
  }, 60_000);

  it('refuses a second server on a file another one is using, naming its process', async () => {
    const file = jobFile();
    const server = await startWith(file);
    try {
      const second = await runSvc(['start', SERVICE, '--port', '0', '--job-store', `sqlite:${file}`]);
      expect(second.exitCode).toBe(1);
      expect(second.stderr.trim().split('\n').at(-1)).toBe(
        `error: --job-store sqlite:${file}: another svc start (pid ${server.process.pid} on ${(await import('node:os')).hostname()}) is using it; stop it, or give this server a file of its own`,
      );
    } finally {
      await server.stop();
    }
    expect(existsSync(file)).toBe(true);
  }, 60_000);
});

describe('bad --job-store values', () => {
  it('an unknown scheme is a usage error: one line, exit 2', async () => {
    const run = await runSvc(['start', SERVICE, '--job-store', 'postgres://db/jobs']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr.trim()).toBe(
      `error: option '--job-store <url>' argument 'postgres://db/jobs' is invalid. "postgres://db/jobs" is not a job store: use memory, sqlite:PATH or redis://HOST:PORT[/DB]`,
    );
  });

  it('SVC_JOB_STORE is read as --job-store is', async () => {
    const run = await runSvc(['start', SERVICE], { env: { SVC_JOB_STORE: 'redis://' } });
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('redis:// names no host');
  });

  it('a file that cannot be written is one line naming it, exit 1, before any worker starts', async () => {
    const run = await runSvc(['start', SERVICE, '--job-store', 'sqlite:/proc/svc/jobs.sqlite']);
    expect(run.exitCode).toBe(1);
    expect(run.stderr.trim().split('\n').at(-1)).toMatch(/^error: --job-store sqlite:\/proc\/svc\/jobs\.sqlite: cannot open it \(.+\)$/);
    expect(run.stderr).not.toContain('is ready');
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });
});
