import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { closedPort } from '../support/ports.js';
import { startRedis, type RunningRedis } from '../support/redis-server.js';
import { postJson, startSvc, type RunningSvc } from '../support/server.js';
import { type Envelope } from '../support/job-envelope.js';
import { REPO_ROOT, runSvc } from '../support/svc.js';

const SERVICE = join(REPO_ROOT, 'test/fixtures/jobs-server/jobs.py');

/** A replica: `svc start` on a free port with its jobs in `redis`, as each machine behind a load balancer runs it. */
function replica(redis: RunningRedis, extra: string[] = []): Promise<RunningSvc> {
  return startSvc([SERVICE, '--compute', 'serverless', '--workers', '2', '--queue-size', '1000', '--job-store', redis.url, ...extra]);
}

async function readJob(server: RunningSvc, id: string, headers: Record<string, string> = {}): Promise<{ status: number; body: Envelope; headers: Headers }> {
  const response = await fetch(`${server.url}/v1/jobs/${id}`, { headers });
  return { status: response.status, body: (await response.json()) as Envelope, headers: response.headers };
}

async function waitUntil(server: RunningSvc, id: string, statuses: string[], timeoutMs = 40_000, message?: string): Promise<Envelope> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { status, body } = await readJob(server, id).catch(() => ({ status: 0, body: null as unknown as Envelope }));
    const arrived = status === 200 && statuses.includes(body.status) && (message === undefined || body.message === message);
    if (arrived || Date.now() > deadline) return body;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function busyWorkers(server: RunningSvc): Promise<number> {
  return ((await (await fetch(`${server.url}/health`)).json()) as { busy: number }).busy;
}

describe('one job queue in Redis shared by several replicas (--job-store redis://)', () => {
  let redis: RunningRedis;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('loses no accepted job when one of three replicas is killed (kill -9) mid-flood: each is readable through another replica and ends', async () => {
    const replicas = await Promise.all([replica(redis), replica(redis), replica(redis)]);
    const [doomed, ...survivors] = replicas as [RunningSvc, RunningSvc, RunningSvc];
    const accepted: Array<{ id: string; by: number }> = [];
    let sent = 0;
    let killed = false;
    // 300 submits from 24 clients spread over the replicas; the first dies once 100 are accepted.
    const client = async (clientIndex: number) => {
      while (sent < 300) {
        const by = killed ? 1 + (clientIndex % 2) : clientIndex % 3;
        const tag = `job-${sent++}`;
        try {
          const answer = await postJson(`${(replicas[by] as RunningSvc).url}/order`, { tag });
          if (answer.status === 200) accepted.push({ id: answer.body.id, by });
        } catch {
          // Cut mid-request by the kill: never accepted.
        }
        if (accepted.length >= 100 && !killed) {
          killed = true;
          // Killed while it runs jobs (it takes them from the shared queue whoever took the
          // submit): on a loaded machine its workers can be between jobs at that moment.
          await expect.poll(() => busyWorkers(doomed), { timeout: 5_000, interval: 5 }).toBeGreaterThan(0);
          doomed.process.kill('SIGKILL');
          await doomed.process;
        }
      }
    };
    try {
      await Promise.all(Array.from({ length: 24 }, (_, index) => client(index)));
      expect(killed).toBe(true);
      expect(accepted.filter(({ by }) => by === 0).length).toBeGreaterThan(0);
      // Each job through a replica that did not take its submit (and is alive).
      const ended = await Promise.all(accepted.map(({ id, by }) => waitUntil(survivors[by === 1 ? 1 : 0] as RunningSvc, id, ['FINISHED', 'FAILED'])));
      const outcomes = ended.map((envelope) => envelope?.status ?? 'unreadable');
      expect(outcomes.filter((outcome) => outcome !== 'FINISHED')).toEqual([]);
      expect(ended.every((envelope, index) => envelope.result === `job-${Number(/\d+/.exec(String(envelope.result))?.[0])}` && envelope.id === accepted[index]?.id)).toBe(true);
      // The jobs the killed replica was running were taken back once its lease lapsed.
      expect(ended.some((envelope) => envelope.message === 'queued again: the replica running it stopped')).toBe(true);
    } finally {
      await Promise.all(survivors.map((server) => server.stop()));
    }
  }, 120_000);

  it('runs a job whose replica died once more on another, and fails it naming the crashes when that one dies too', async () => {
    const first = await replica(redis, ['--workers', '1']);
    const { body: job } = await postJson(`${first.url}/sleep`, { seconds: 60 });
    await waitUntil(first, job.id, ['PROCESSING']);
    first.process.kill('SIGKILL');
    await first.process;

    // Taken back once the dead replica's lease lapses (10 s).
    const second = await replica(redis, ['--workers', '1']);
    // Until then it reads as the dead replica left it: PROCESSING.
    const again = await waitUntil(second, job.id, ['PROCESSING'], 30_000, 'queued again: the replica running it stopped');
    expect(again).toMatchObject({ status: 'PROCESSING', message: 'queued again: the replica running it stopped' });
    second.process.kill('SIGKILL');
    await second.process;

    const third = await replica(redis, ['--workers', '1']);
    try {
      const failed = await waitUntil(third, job.id, ['FAILED'], 30_000);
      expect(failed.status).toBe('FAILED');
      expect(failed.error_detail?.type).toBe('ServerCrashed');
      expect(failed.error).toBe('the replica running this job stopped (a crash, kill -9 or the machine going down) 2 times: it is not run again; submit it again');
      expect(await busyWorkers(third)).toBe(0);
    } finally {
      await third.stop();
    }
  }, 90_000);

  it('puts a job a replica could not finish as it stops (SIGTERM) back in the queue, where another replica runs it', async () => {
    const stopping = await replica(redis, ['--workers', '1', '--grace-period', '1']);
    const { body: job } = await postJson(`${stopping.url}/sleep`, { seconds: 3 });
    await waitUntil(stopping, job.id, ['PROCESSING']);
    expect(await stopping.stop()).toBe(0);

    const next = await replica(redis, ['--workers', '1']);
    try {
      const ended = await waitUntil(next, job.id, ['FINISHED', 'FAILED'], 20_000);
      expect(ended).toMatchObject({ status: 'FINISHED', result: 3, message: 'queued again: the replica running it stopped' });
    } finally {
      await next.stop();
    }
  }, 60_000);

  it('answers a client waiting (Prefer: wait) on a job still queued as its replica stops, and stops without waiting out that wait', async () => {
    const stopping = await replica(redis, ['--workers', '1', '--grace-period', '5']);
    const { body: running } = await postJson(`${stopping.url}/sleep`, { seconds: 2 });
    await waitUntil(stopping, running.id, ['PROCESSING']);
    const waiting = postJson(`${stopping.url}/sleep`, { seconds: 1 }, { prefer: 'wait=60' });
    // The second job waits in Redis behind the first before the stop begins.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const started = Date.now();
    expect(await stopping.stop()).toBe(0);
    // The running job's 2 s and a little, not the client's 60 s.
    expect(Date.now() - started).toBeLessThan(15_000);
    const answer = await waiting;
    expect(answer.status).toBe(200);
    expect(answer.body.status).toBe('QUEUED');

    const next = await replica(redis, ['--workers', '1']);
    try {
      expect(await waitUntil(next, answer.body.id, ['FINISHED', 'FAILED'], 20_000)).toMatchObject({ status: 'FINISHED', result: 1 });
      expect(await waitUntil(next, running.id, ['FINISHED', 'FAILED'], 5_000)).toMatchObject({ status: 'FINISHED', result: 2 });
    } finally {
      await next.stop();
    }
  }, 60_000);

  it('keeps large arguments and results exact through Redis, read from any replica, and expires them with their job', async () => {
    const store = ['--job-store', `${redis.url}/4`, '--job-ttl', '2'];
    const [a, b] = (await Promise.all([replica(redis, store), replica(redis, store)])) as [RunningSvc, RunningSvc];
    const client = new Redis(`${redis.url}/4`);
    try {
      // One string goes as its bytes (no escape in it), the other is parsed (escapes, non-ASCII).
      const tags = ['x'.repeat(400_000), `é"\\\n\u2028${'y'.repeat(300_000)}🙂\u0001`];
      const ids: string[] = [];
      for (const tag of tags) {
        const { body: job } = await postJson(`${a.url}/order`, { tag });
        ids.push(job.id);
        const waited = await readJob(b, job.id, { prefer: 'wait=20' });
        expect(waited.body.status).toBe('FINISHED');
        expect(waited.body.result === tag).toBe(true);
        expect((await readJob(a, job.id)).body.result === tag).toBe(true);
      }
      // No result on its way in is left behind; each job's keys go with its TTL.
      expect(await client.keys('svc:job:*:result:*')).toEqual([]);
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      expect(await client.keys('svc:job:*')).toEqual([]);
      expect((await readJob(b, ids[0] as string)).status).toBe(404);
    } finally {
      client.disconnect();
      await Promise.all([a.stop(), b.stop()]);
    }
  }, 60_000);

  it('runs a job with large arguments on a replica that did not take its submit, from the bytes kept in Redis', async () => {
    const store = ['--workers', '1', '--job-store', `${redis.url}/6`];
    const [a, b] = (await Promise.all([replica(redis, store), replica(redis, store)])) as [RunningSvc, RunningSvc];
    try {
      const { body: sleeping } = await postJson(`${a.url}/sleep`, { seconds: 3 });
      await expect.poll(async () => (await busyWorkers(a)) + (await busyWorkers(b)), { timeout: 5_000, interval: 20 }).toBe(1);
      // Submitted to the replica whose only worker sleeps: the other must run it.
      const busy = (await busyWorkers(a)) === 1 ? a : b;
      const tag = `${'z'.repeat(300_000)}é`;
      const { body: job } = await postJson(`${busy.url}/order`, { tag }, { prefer: 'wait=20' });
      expect(job.status).toBe('FINISHED');
      expect(job.result === tag).toBe(true);
      // The sleeping job still holds the first replica's only worker: the other ran this one.
      expect((await readJob(busy, sleeping.id)).body.status).toBe('PROCESSING');
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  }, 60_000);

  it("keeps the end another replica wrote when a paused replica's lease lapsed and it ends the job too, and serves that end from every replica", async () => {
    const store = ['--workers', '1', '--job-store', `${redis.url}/5`];
    const paused = await replica(redis, store);
    const { body: job } = await postJson(`${paused.url}/pid-after`, { seconds: 1, padding: 100_000 });
    await waitUntil(paused, job.id, ['PROCESSING']);
    // Its worker finishes while the gateway is stopped: no lease renewed, no end written.
    paused.process.kill('SIGSTOP');
    const other = await replica(redis, store);
    const client = new Redis(`${redis.url}/5`);
    try {
      const ended = await waitUntil(other, job.id, ['FINISHED'], 30_000);
      expect(ended.message).toBe('queued again: the replica running it stopped');
      paused.process.kill('SIGCONT');
      // The paused replica hands in its own run's end, which Redis refuses.
      await expect.poll(() => busyWorkers(paused), { timeout: 10_000 }).toBe(0);
      await new Promise((resolve) => setTimeout(resolve, 500));
      const fromPaused = await readJob(paused, job.id);
      expect((fromPaused.body.result as { pid: number }).pid).toBe((ended.result as { pid: number }).pid);
      expect(await client.keys('svc:job:*:result:*')).toEqual([]);
    } finally {
      paused.process.kill('SIGCONT');
      client.disconnect();
      await Promise.all([paused.stop(), other.stop()]);
    }
  }, 90_000);

  it('interrupts a running job when its cancel is sent to another replica, and follows jobs through any replica (SSE, Prefer: wait)', async () => {
    const [a, b] = (await Promise.all([replica(redis, ['--workers', '1']), replica(redis, ['--workers', '1'])])) as [RunningSvc, RunningSvc];
    try {
      // Job URLs point at the replica the client asked.
      const { body: spinning } = await postJson(`${a.url}/spin`, { seconds: 60 });
      expect(spinning.refresh_job_url).toBe(`${a.url}/v1/jobs/${spinning.id}`);
      expect((await readJob(b, spinning.id)).body.refresh_job_url).toBe(`${b.url}/v1/jobs/${spinning.id}`);
      await waitUntil(b, spinning.id, ['PROCESSING']);
      expect((await busyWorkers(a)) + (await busyWorkers(b))).toBe(1);
      const cancelled = await postJson(`${b.url}/v1/jobs/${spinning.id}/cancel`, {});
      expect(cancelled.body.status).toBe('CANCELLED');
      const deadline = Date.now() + 5_000;
      while ((await busyWorkers(a)) + (await busyWorkers(b)) > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      expect((await busyWorkers(a)) + (await busyWorkers(b))).toBe(0);
      expect((await readJob(a, spinning.id)).body.status).toBe('CANCELLED');

      // Prefer: wait on the replica that did not take the submit answers as the job ends.
      const { body: sleeping } = await postJson(`${a.url}/sleep`, { seconds: 1 });
      const started = Date.now();
      const waited = await readJob(b, sleeping.id, { prefer: 'wait=20' });
      expect(waited.body).toMatchObject({ status: 'FINISHED', result: 1 });
      expect(Date.now() - started).toBeLessThan(5_000);

      // And its event stream carries every chunk and the end.
      const { body: words } = await postJson(`${a.url}/words`, { text: 'alpha beta gamma', pause: 0.2 });
      const stream = await (await fetch(`${b.url}/v1/jobs/${words.id}/stream`)).text();
      expect([...stream.matchAll(/event: chunk\ndata: "(\w+)"/g)].map((match) => match[1])).toEqual(['alpha', 'beta', 'gamma']);
      expect(stream).toMatch(/event: status\ndata: \{[^\n]*"status":"FINISHED"/);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  }, 60_000);

  it('spreads jobs over the replicas as their workers free up: one replica takes no more than it can start', async () => {
    const [a, b] = (await Promise.all([replica(redis, ['--workers', '1']), replica(redis, ['--workers', '1'])])) as [RunningSvc, RunningSvc];
    try {
      // Four 2-second jobs, all submitted to a: b's worker runs half of them.
      const ids: string[] = [];
      for (let index = 0; index < 4; index++) ids.push((await postJson(`${a.url}/sleep`, { seconds: 2 })).body.id);
      await expect.poll(async () => [await busyWorkers(a), await busyWorkers(b)], { timeout: 5_000, interval: 50 }).toEqual([1, 1]);
      const started = Date.now();
      const ended = await Promise.all(ids.map((id) => waitUntil(b, id, ['FINISHED'])));
      expect(ended.map((envelope) => envelope.status)).toEqual(['FINISHED', 'FINISHED', 'FINISHED', 'FINISHED']);
      // Two at a time: about 4 s in all, not the 8 s of one worker.
      expect(Date.now() - started).toBeLessThan(6_000);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  }, 60_000);

  it("keeps each key's jobs its own and holds its share across replicas: a key over it gets 429 from any of them", async () => {
    const keysFile = join(mkdtempSync(join(tmpdir(), 'svc-keys-')), 'keys.json');
    writeFileSync(keysFile, JSON.stringify({ keys: [{ name: 'a', key: 'key-a-123', endpoints: '*' }, { name: 'b', key: 'key-b-456', endpoints: '*' }] }));
    // A database of its own: the other tests leave results unread in database 0 (a flood cut
    // by a kill leaves jobs no client knows of), which --max-jobs counts.
    const keys = ['--api-keys', keysFile, '--max-jobs', '4', '--job-store', `${redis.url}/2`];
    const [a, b] = (await Promise.all([replica(redis, keys), replica(redis, keys)])) as [RunningSvc, RunningSvc];
    const auth = (key: string) => ({ authorization: `Bearer ${key}` });
    try {
      // key-a's share is 2 of the 4: two jobs through a, then a third through b.
      const first = await postJson(`${a.url}/sleep`, { seconds: 5 }, auth('key-a-123'));
      expect(first.status).toBe(200);
      expect((await readJob(b, first.body.id, auth('key-b-456'))).status).toBe(404);
      expect((await readJob(b, first.body.id, auth('key-a-123'))).body.status).toMatch(/QUEUED|PROCESSING/);
      expect((await postJson(`${a.url}/sleep`, { seconds: 5 }, auth('key-a-123'))).status).toBe(200);
      const refused = await postJson(`${b.url}/sleep`, { seconds: 5 }, auth('key-a-123'));
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe('key_results_unread');
      expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(refused.body.error.message).toContain('(--max-jobs 4 among 2 API keys: 2 each)');
      expect((await postJson(`${b.url}/order`, { tag: 'other key' }, auth('key-b-456'))).status).toBe(200);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  }, 60_000);

  it('counts the unread results of every replica against --max-jobs: a full store refuses through any replica until one is read', async () => {
    // A database of its own: the other tests leave results unread in database 0.
    const store = ['--job-store', `${redis.url}/1`, '--max-jobs', '2'];
    const [a, b] = (await Promise.all([replica(redis, store), replica(redis, store)])) as [RunningSvc, RunningSvc];
    const health = async (server: RunningSvc) => ((await (await fetch(`${server.url}/health`)).json()) as { jobs: { unread: number; full: boolean } }).jobs;
    try {
      const ids: string[] = [];
      for (const tag of ['one', 'two']) ids.push((await postJson(`${a.url}/order`, { tag })).body.id);
      await expect.poll(async () => (await health(b)).unread, { timeout: 10_000, interval: 50 }).toBe(2);
      expect(await health(b)).toMatchObject({ unread: 2, full: true });
      const refused = await postJson(`${b.url}/order`, { tag: 'three' });
      expect(refused.status).toBe(503);
      expect(refused.body.error.code).toBe('results_unread');
      expect(refused.body.error.message).toContain('2 ended job(s)');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      // Reading one through the other replica makes room.
      expect((await readJob(b, ids[0] as string)).body).toMatchObject({ status: 'FINISHED', result: 'one' });
      expect((await postJson(`${b.url}/order`, { tag: 'three' }, { prefer: 'wait=10' })).body).toMatchObject({ status: 'FINISHED', result: 'three' });

      // Webhooks follow one server's own store: with Redis a submit naming one is refused, not left unsent.
      const hooked = await postJson(`${a.url}/order`, { tag: 'four' }, { webhook: 'https://hooks.example.com/svc' });
      expect(hooked.status).toBe(400);
      expect(hooked.body.error.code).toBe('webhooks_unavailable');
      expect(hooked.body.error.message).toContain('--job-store redis://: not yet');
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  }, 60_000);

  it('answers 503 naming Redis while it is down, and loses no accepted job across its restart', async () => {
    const [a, b] = (await Promise.all([replica(redis), replica(redis)])) as [RunningSvc, RunningSvc];
    const accepted: string[] = [];
    const refusals: Array<{ status: number; message: string; retryAfter: string | null }> = [];
    let sent = 0;
    let restarted = false;
    const client = async (clientIndex: number) => {
      while (sent < 200) {
        const server = clientIndex % 2 === 0 ? a : b;
        const answer = await postJson(`${server.url}/order`, { tag: `job-${sent++}` });
        if (answer.status === 200) accepted.push(answer.body.id);
        else refusals.push({ status: answer.status, message: answer.body.error?.message, retryAfter: answer.headers.get('retry-after') });
        if (accepted.length >= 60 && !restarted) {
          restarted = true;
          await redis.stop();
          // Reads fail clearly too while it is down.
          const read = await readJob(a, accepted[0] as string);
          expect(read.status).toBe(503);
          expect((read.body as unknown as { error: { code: string } }).error.code).toBe('job_store_unavailable');
          // Its health stays 200: the replica is up, its store is not.
          const health = await fetch(`${a.url}/health`);
          expect(health.status).toBe(200);
          expect(((await health.json()) as { jobs: { unavailable: string } }).jobs.unavailable).toContain('cannot be reached');
          await new Promise((resolve) => setTimeout(resolve, 500));
          await redis.restart();
        }
      }
    };
    try {
      await Promise.all(Array.from({ length: 12 }, (_, index) => client(index)));
      expect(restarted).toBe(true);
      expect(refusals.length).toBeGreaterThan(0);
      for (const refusal of refusals) {
        expect(refusal.status).toBe(503);
        expect(refusal.message).toContain(`the job store (Redis at ${redis.url}) cannot be reached`);
        expect(refusal.retryAfter).toBe('5');
      }
      const ended = await Promise.all(accepted.map((id, index) => waitUntil(index % 2 === 0 ? b : a, id, ['FINISHED', 'FAILED'])));
      expect(ended.map((envelope) => envelope?.status ?? 'unreadable').filter((status) => status !== 'FINISHED')).toEqual([]);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  }, 120_000);
});

describe('svc start --job-store redis:// refuses at once what cannot work', () => {
  it('a URL without a host or with a database that is no number: one line naming the flag', async () => {
    for (const [url, says] of [
      ['redis://', 'redis:// names no host'],
      ['redis://localhost:6379/jobs', 'the database after the host must be a number'],
      ['http://localhost:6379', 'is not a job store: use memory, sqlite:PATH or redis://HOST:PORT[/DB]'],
      ['redis://:s3cret@localhost:99999', 'redis://:***@localhost:99999 is not a Redis URL'],
    ] as const) {
      const run = await runSvc(['start', SERVICE, '--job-store', url]);
      expect(run.exitCode).toBe(2);
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
      expect(run.stderr).toContain('--job-store');
      expect(run.stderr).toContain(says);
      expect(run.stderr).not.toContain('s3cret');
    }
  });

  it('an unreachable Redis: one line naming the URL (its password hidden) and the flag, exit 1, before any worker starts', async () => {
    const port = await closedPort();
    const run = await runSvc(['start', SERVICE, '--port', '0', '--job-store', `redis://:s3cret@127.0.0.1:${port}/2`]);
    expect(run.exitCode).toBe(1);
    expect(run.stderr.trim().split('\n')).toEqual([`error: --job-store redis://:***@127.0.0.1:${port}/2: cannot reach Redis (connect ECONNREFUSED 127.0.0.1:${port})`]);
    expect(run.stderr).not.toContain('s3cret');
  });
});
