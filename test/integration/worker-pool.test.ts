import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { Value } from '../../src/worker/protocol.js';
import { WorkerStartError } from '../../src/worker/worker-start-error.js';
import { PoolClosedError, QueueFullError, WorkerPool } from '../../src/worker/worker-pool.js';
import type { WorkerPoolOptions } from '../../src/worker/worker-pool.js';
import type { CallOutcome, LogLine } from '../../src/worker/worker-process.js';
import { isRunning } from '../support/processes.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const helloService = join(repo, 'examples/hello/service.py');
const behaviours = join(repo, 'test/fixtures/services/worker-behaviours.py');
const failingLifespan = join(repo, 'test/fixtures/services/failing-lifespan.py');

const pools: WorkerPool[] = [];
let logs: LogLine[] = [];

afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.shutdown(2000)));
  logs = [];
});

function createPool(serviceFile: string, options: Partial<WorkerPoolOptions> = {}): WorkerPool {
  const pool = new WorkerPool({
    python: 'python3',
    serviceFile,
    projectDir: dirname(serviceFile),
    cancelGraceMs: 500,
    restartPolicy: { maxCrashes: 5, windowMs: 60_000, firstDelayMs: 50, maxDelayMs: 200 },
    onLog: (line) => logs.push(line),
    ...options,
  });
  pools.push(pool);
  return pool;
}

async function startedPool(serviceFile: string, options: Partial<WorkerPoolOptions> = {}): Promise<WorkerPool> {
  const pool = createPool(serviceFile, options);
  await pool.start();
  return pool;
}

function resultValue(outcome: CallOutcome): Value {
  if (outcome.kind !== 'result') throw new Error(`expected a result, got ${JSON.stringify(outcome)}`);
  return outcome.value;
}

/** An outcome as plain data: a result read as the worker's JSON text carries that text beside its value. */
function plain(outcome: CallOutcome): CallOutcome {
  return outcome.kind === 'result' ? { kind: 'result', value: outcome.value } : outcome;
}

async function workerPid(pool: WorkerPool): Promise<number> {
  const value = resultValue(await pool.submit('/echo', { text: 'pid?' })) as { pid: number };
  return value.pid;
}

function until(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const check = () => {
      if (condition()) resolve();
      else if (Date.now() > deadline) reject(new Error('condition not met in time'));
      else setTimeout(check, 20);
    };
    check();
  });
}

describe('starting the pool', () => {
  it('reports ready with the endpoints of examples/hello', async () => {
    const pool = createPool(helloService);
    const report = await pool.start();
    expect(report.app.title).toBe('Hello');
    expect(pool.endpoints.map((endpoint) => endpoint.path)).toEqual(['/hello', '/add']);
    expect(pool.endpoints[0]?.input_schema).toMatchObject({ properties: { name: { type: 'string' } } });
    expect(pool.health()).toEqual({ state: 'READY', workers: 1, busy: 0, queued: 0 });
  });

  it('rejects with the lifespan failure, its type, message and line, when startup raises', async () => {
    const pool = createPool(failingLifespan, { workers: 2 });
    const failure = await pool.start().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(WorkerStartError);
    const startError = failure as WorkerStartError;
    expect(startError.stage).toBe('lifespan');
    expect(startError.error).toMatchObject({ type: 'RuntimeError', message: 'model weights not found' });
    expect(startError.error.traceback).toContain('raise RuntimeError');
    expect(startError.location).toEqual({ file: failingLifespan, line: 9 });
    expect(startError.message).toBe('the lifespan startup failed: RuntimeError: model weights not found');
    expect(pool.health().state).toBe('SETUP_FAILED');
    expect(() => pool.submit('/never', {})).toThrow(PoolClosedError);
  });

  it('rejects, quoting stderr, when the worker cannot even import the toolkit', async () => {
    const emptyToolkit = mkdtempSync(join(tmpdir(), 'svc-no-toolkit-'));
    const pool = createPool(helloService, { toolkitDir: emptyToolkit, env: { PATH: process.env.PATH } });
    const failure = (await pool.start().catch((error: unknown) => error)) as WorkerStartError;
    expect(failure).toBeInstanceOf(WorkerStartError);
    expect(failure.stage).toBe('process');
    expect(failure.message).toMatch(
      /^the worker stopped before it was ready: worker 1 exited with code 1 \(its last stderr line: ModuleNotFoundError: No module named 'apipod'\)$/,
    );
  });

  it('rejects when the interpreter cannot be started at all', async () => {
    const pool = createPool(helloService, { python: '/no/such/python' });
    const failure = (await pool.start().catch((error: unknown) => error)) as WorkerStartError;
    expect(failure).toBeInstanceOf(WorkerStartError);
    expect(failure.message).toContain('could not start: spawn /no/such/python ENOENT');
  });
});

describe('running calls', () => {
  it("returns the function's result", async () => {
    const pool = await startedPool(helloService);
    expect(plain(await pool.submit('/hello', { name: 'Ada' }))).toEqual({ kind: 'result', value: { greeting: 'Hello, Ada.' } });
    expect(plain(await pool.submit('/add', { a: 1, b: 2.5 }))).toEqual({ kind: 'result', value: { sum: 3.5 } });
  });

  it("returns a user's exception as an error with type, message and traceback", async () => {
    const pool = await startedPool(behaviours);
    const outcome = await pool.submit('/fail', { reason: 'prompt is empty' });
    expect(outcome).toMatchObject({ kind: 'error', error: { type: 'ValueError', message: 'prompt is empty' } });
    expect(outcome.kind === 'error' && outcome.error.traceback).toContain('raise ValueError(reason)');
  });

  it("logs a user's exception with its traceback, tagged with the call, for whoever runs the server", async () => {
    const pool = await startedPool(behaviours);
    await pool.submit('/fail', { reason: 'prompt is empty' }, { id: 'job-7' });
    await until(() => logs.some((line) => line.line === 'ValueError: prompt is empty'));
    const callLines = logs.filter((line) => line.call === 'job-7' && line.stream === 'stderr').map((line) => line.line);
    expect(callLines[0]).toBe('Traceback (most recent call last):');
    expect(callLines).toContain('    raise ValueError(reason)');
  });

  it("tags the traceback of a generator that fails midway with its call, every time", async () => {
    const pool = await startedPool(behaviours);
    const calls = ['gen-1', 'gen-2', 'gen-3', 'gen-4', 'gen-5'];
    for (const id of calls) await pool.submit('/fail-midway', {}, { id });
    await until(() => logs.filter((line) => line.line === 'RuntimeError: lost the thread').length === calls.length);
    expect(logs.filter((line) => line.line === 'RuntimeError: lost the thread').map((line) => line.call)).toEqual(calls);
  });

  it("tags the user's prints with the call that made them", async () => {
    const pool = await startedPool(behaviours);
    await pool.submit('/echo', { text: 'Ada' }, { id: 'job-42' });
    await until(() => logs.some((line) => line.line === 'echoing Ada'));
    expect(logs).toContainEqual({ worker: 1, call: 'job-42', stream: 'stdout', line: 'echoing Ada' });
  });

  it('delivers progress and chunks to the handlers', async () => {
    const pool = await startedPool(behaviours);
    const progress: [number | null, string | null][] = [];
    const progressOutcome = await pool.submit('/progress', { steps: 2 }, { onProgress: (...status) => progress.push(status) });
    expect(plain(progressOutcome)).toEqual({ kind: 'result', value: 'finished' });
    expect(progress).toEqual([
      [0.5, 'step 1 of 2'],
      [1, 'step 2 of 2'],
    ]);

    const chunks: Value[] = [];
    const streamOutcome = await pool.submit('/stream', { count: 3 }, { onChunk: (chunk) => chunks.push(chunk) });
    expect(chunks).toEqual([{ index: 0 }, { index: 1 }, { index: 2 }]);
    expect(plain(streamOutcome)).toEqual({ kind: 'result', value: chunks });
  });

  it('inlines a large media result sent as a file, and deletes the file', async () => {
    const fileDir = mkdtempSync(join(tmpdir(), 'svc-test-files-'));
    const pool = await startedPool(behaviours, { fileDir });
    const value = resultValue(await pool.submit('/big-image', { size: 100_000 })) as { [key: string]: string };
    expect(value).toMatchObject({ file_name: 'big.png', content_type: 'image/png' });
    const bytes = Buffer.from(value.content ?? '', 'base64');
    expect(bytes.length).toBe(100_000);
    expect(bytes[252]).toBe(1);
    expect(readdirSync(fileDir)).toEqual([]);
  });

  it("makes a generator's chunks its result, each media chunk inlined once and its file deleted", async () => {
    const fileDir = mkdtempSync(join(tmpdir(), 'svc-test-files-'));
    const pool = await startedPool(behaviours, { fileDir });
    const chunks: Value[] = [];
    const outcome = await pool.submit('/frames', { count: 3, size: 100_000 }, { onChunk: (chunk) => chunks.push(chunk) });
    const frames = chunks as { file_name: string; content: string }[];
    expect(frames.map((frame) => [frame.file_name, Buffer.from(frame.content, 'base64')[0]])).toEqual([
      ['frame-0.png', 0],
      ['frame-1.png', 1],
      ['frame-2.png', 2],
    ]);
    expect(plain(outcome)).toEqual({ kind: 'result', value: chunks });
    expect(readdirSync(fileDir)).toEqual([]);
  });

  it("stops a generator whose media outgrow the call's allowance, deleting the files of the chunks it no longer takes", async () => {
    const fileDir = mkdtempSync(join(tmpdir(), 'svc-test-files-'));
    const pool = await startedPool(behaviours, { fileDir });
    const pid = await workerPid(pool);
    const outcome = await pool.submit('/frames', { count: 40, size: 10 * 2 ** 20 });
    expect(outcome).toMatchObject({ kind: 'error', error: { type: 'ResultTooLarge' } });
    // The worker was stopped in the generator, not left to run it out while taking the next call.
    expect(resultValue(await pool.submit('/echo', { text: 'next' }))).toMatchObject({ text: 'next' });
    expect(logs.some((line) => line.line === 'all frames yielded')).toBe(false);
    expect(await workerPid(pool)).toBe(pid);
    expect(readdirSync(fileDir)).toEqual([]);
  });

  it('fails a result too large to answer with, naming the limit, and keeps the worker', async () => {
    const fileDir = mkdtempSync(join(tmpdir(), 'svc-test-files-'));
    const pool = await startedPool(behaviours, { fileDir });
    const pid = await workerPid(pool);
    for (const [endpoint, message] of [
      ['/huge-result', 'the result is 201.0 MiB as JSON, more than the 200.0 MiB svc carries in one'],
      ['/huge-media', 'the files in the result come to more than the 150.0 MiB svc answers with inline'],
    ] as const) {
      const outcome = await pool.submit(endpoint, {}, { id: endpoint });
      expect(outcome).toMatchObject({ kind: 'error', error: { type: 'ResultTooLarge', message: expect.stringContaining(message) } });
    }
    // The worker's refusal is in the log too, against its call, for whoever runs the server.
    const logged = logs.filter((line) => line.call === '/huge-result' && line.stream === 'stderr').map((line) => line.line);
    expect(logged).toEqual([expect.stringContaining('ResultTooLarge: the result is 201.0 MiB as JSON')]);
    expect(readdirSync(fileDir)).toEqual([]);
    expect(await workerPid(pool)).toBe(pid);
  });

  it('inlines a media result whole whether the gateway reads its file at once or through the thread pool (past 8 MiB), and deletes the file', async () => {
    const fileDir = mkdtempSync(join(tmpdir(), 'svc-test-files-'));
    const pool = await startedPool(behaviours, { fileDir });
    for (const mebibytes of [1, 12]) {
      const value = resultValue(await pool.submit('/huge-media', { mebibytes })) as { file_name: string; content: string };
      expect([value.file_name, Buffer.from(value.content, 'base64').equals(Buffer.alloc(mebibytes * 2 ** 20))]).toEqual(['huge.bin', true]);
    }
    expect(readdirSync(fileDir)).toEqual([]);
  });

  it('survives a line of output longer than a JavaScript string holds, logging its start cut', async () => {
    const pool = await startedPool(behaviours);
    expect(plain(await pool.submit('/endless-line', {}))).toEqual({ kind: 'result', value: 'written' });
    await until(() => logs.some((line) => line.line.endsWith('[cut: the line is longer than 64 KiB]')));
    const cut = logs.find((line) => line.line.endsWith('[cut: the line is longer than 64 KiB]'))!;
    expect(cut).toMatchObject({ stream: 'stdout', line: `${'z'.repeat(64 * 1024)} [cut: the line is longer than 64 KiB]` });
    expect((await pool.submit('/echo', { text: 'still here' })).kind).toBe('result');
  });

  it('runs two slow calls at once on two workers', async () => {
    const pool = await startedPool(behaviours, { workers: 2 });
    const outcomes = await Promise.all([pool.submit('/sleep', { seconds: 1 }), pool.submit('/sleep', { seconds: 1 })]);
    const [first, second] = outcomes.map((outcome) => resultValue(outcome) as { pid: number; started: number; ended: number });
    expect(first!.pid).not.toBe(second!.pid);
    // They overlapped: each began before the other ended (the workers' own clocks, not a time limit).
    expect(first!.started).toBeLessThan(second!.ended);
    expect(second!.started).toBeLessThan(first!.ended);
  });
});

describe('queueing', () => {
  it('refuses a call with QueueFullError when the endpoint queue is full', async () => {
    const pool = await startedPool(behaviours, { maxQueue: 1 });
    const running = pool.submit('/sleep', { seconds: 0.5 });
    const queued = pool.submit('/sleep', { seconds: 0.1 });
    expect(pool.health()).toEqual({ state: 'BUSY', workers: 1, busy: 1, queued: 1 });
    expect(() => pool.submit('/sleep', { seconds: 0.1 })).toThrow(QueueFullError);
    // The bound is per endpoint: another endpoint may still queue a call.
    const otherEndpoint = pool.submit('/echo', { text: 'later' });
    expect((await running).kind).toBe('result');
    expect((await queued).kind).toBe('result');
    expect((await otherEndpoint).kind).toBe('result');
  });

  it('serves queued calls oldest first across endpoints', async () => {
    const pool = await startedPool(behaviours);
    const finished: string[] = [];
    const track = (name: string, outcome: Promise<CallOutcome>) => outcome.then(() => finished.push(name));
    await Promise.all([
      track('sleep', pool.submit('/sleep', { seconds: 0.2 })),
      track('echo-1', pool.submit('/echo', { text: '1' })),
      track('progress', pool.submit('/progress', {})),
      track('echo-2', pool.submit('/echo', { text: '2' })),
    ]);
    expect(finished).toEqual(['sleep', 'echo-1', 'progress', 'echo-2']);
  });

  it('says when a worker takes a queued call', async () => {
    const pool = await startedPool(behaviours);
    const started: string[] = [];
    const running = pool.submit('/sleep', { seconds: 0.3 }, { onStart: () => started.push('sleep') });
    const queued = pool.submit('/echo', { text: 'next' }, { onStart: () => started.push('echo') });
    expect(started).toEqual(['sleep']);
    await running;
    expect(started).toEqual(['sleep', 'echo']);
    expect((await queued).kind).toBe('result');
  });

  it('resolves a queued call whose signal aborts as cancelled and drops it from the queue', async () => {
    const pool = await startedPool(behaviours);
    const running = pool.submit('/sleep', { seconds: 0.3 });
    const controller = new AbortController();
    const queued = pool.submit('/echo', { text: 'never' }, { signal: controller.signal });
    controller.abort();
    expect(await queued).toEqual({ kind: 'cancelled' });
    expect(pool.health().queued).toBe(0);
    expect((await running).kind).toBe('result');
  });
});

describe('calls sent behind a quick one', () => {
  it("waits in the worker's pipe rather than the pool's queue, and runs in order", async () => {
    const pool = await startedPool(behaviours);
    await pool.submit('/echo', { text: 'warm' }); // a quick call first: the worker is known to be quick
    const started: string[] = [];
    const calls = ['1', '2', '3', '4', '5'].map((text) => pool.submit('/echo', { text }, { onStart: () => started.push(text) }));
    // One runs; the others wait in the worker's pipe, counted as queued.
    expect(pool.health()).toMatchObject({ busy: 1, queued: 4 });
    expect(started).toEqual(['1']);
    const texts = (await Promise.all(calls)).map((outcome) => (resultValue(outcome) as { text: string }).text);
    expect(texts).toEqual(['1', '2', '3', '4', '5']);
    expect(started).toEqual(['1', '2', '3', '4', '5']);
    expect(pool.health().queued).toBe(0);
  });

  it('are not sent behind a call that has run longer than a quick one, so another worker may take them', async () => {
    const pool = await startedPool(behaviours, { workers: 2 });
    await Promise.all([pool.submit('/echo', { text: 'warm 1' }), pool.submit('/echo', { text: 'warm 2' })]);
    const long = pool.submit('/sleep', { seconds: 0.6 });
    const short = pool.submit('/sleep', { seconds: 0.1 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const submittedAt = Date.now();
    expect((await pool.submit('/echo', { text: 'after' })).kind).toBe('result');
    // It waited for the worker that freed first, not behind the long call.
    expect(Date.now() - submittedAt).toBeLessThan(400);
    expect((await long).kind).toBe('result');
    expect((await short).kind).toBe('result');
  });

  it('are not sent behind a call of an endpoint that was slow last time, even one itself sent ahead', async () => {
    const pool = await startedPool(behaviours, { workers: 2 });
    await Promise.all([pool.submit('/echo', { text: 'warm 1' }), pool.submit('/echo', { text: 'warm 2' })]);
    await pool.submit('/sleep', { seconds: 0.05 }); // /sleep is now known to take longer than a quick call
    const submittedAt = Date.now();
    const first = pool.submit('/sleep', { seconds: 0.3 }); // worker A
    const quick = pool.submit('/echo', { text: 'quick' }); // worker B
    const slow = pool.submit('/sleep', { seconds: 1.2 }); // behind the quick call on B: it starts at once
    const after = pool.submit('/echo', { text: 'after' });
    // Not behind the long sleep on B: it waited for A, which freed first.
    expect((await after).kind).toBe('result');
    expect(Date.now() - submittedAt).toBeLessThan(900);
    expect((await quick).kind).toBe('result');
    expect((await first).kind).toBe('result');
    expect((await slow).kind).toBe('result');
  });

  describe.each([
    ['as it frees up', '/stubborn', { seconds: 0.3 }],
    ['once the call in front has run well past what its endpoint took last time, the other free already', '/progress', { steps: 1 }],
  ])('are taken back from behind a call that turns slow, and run in the other worker %s', (_, otherEndpoint, otherArgs) => {
    it('each started once', async () => {
      const pool = await startedPool(behaviours, { workers: 2 });
      await Promise.all([pool.submit('/echo', { text: 'warm 1' }), pool.submit('/echo', { text: 'warm 2' })]);
      await pool.submit('/sleep', { seconds: 0 }); // /sleep was quick last time
      const submittedAt = Date.now();
      const other = pool.submit(otherEndpoint, otherArgs); // never run before: nothing goes behind it
      const slow = pool.submit('/sleep', { seconds: 1.5 }, { id: 'slow' });
      const started: string[] = [];
      const behind = ['1', '2'].map((text) => pool.submit('/echo', { text }, { onStart: () => started.push(text) }));
      expect(pool.health()).toMatchObject({ busy: 2, queued: 2 }); // sent behind the sleep, expected to be quick
      const outcomes = await Promise.all(behind);
      expect(Date.now() - submittedAt).toBeLessThan(1000); // not after the sleep
      expect(outcomes.map((outcome) => (resultValue(outcome) as { text: string }).text)).toEqual(['1', '2']);
      // Taken back together, they keep their order. On a busy machine the slow call can be
      // overdue (twice the ~1 ms /sleep took and a millisecond) before '2' is sent: '2' then
      // waits in the pool and may run in the other worker before '1' is taken back.
      expect([...started].sort()).toEqual(['1', '2']);
      expect((await other).kind).toBe('result');
      expect((await slow).kind).toBe('result');
      // Each ran once, in the other worker: none ran in both.
      const otherWorker = logs.find((line) => line.call === 'slow')?.worker === 1 ? 2 : 1;
      const ranIn = (text: string) => logs.filter((line) => line.line === `echoing ${text}`).map((line) => line.worker);
      expect([ranIn('1'), ranIn('2')]).toEqual([[otherWorker], [otherWorker]]);
    });
  });

  it('are taken back from behind a call that turns long while every other worker stays busy, and run before the calls that came after them', async () => {
    const pool = await startedPool(behaviours, { workers: 2 });
    await Promise.all([pool.submit('/echo', { text: 'warm 1' }), pool.submit('/echo', { text: 'warm 2' })]);
    await pool.submit('/sleep', { seconds: 0 }); // /sleep was quick last time
    await pool.submit('/stubborn', { seconds: 0.05 }); // /stubborn was not: nothing goes behind it
    const ended: string[] = [];
    const track = (name: string, outcome: Promise<CallOutcome>) => outcome.then((settled) => (ended.push(name), settled));
    const long = track('long', pool.submit('/sleep', { seconds: 2 })); // worker A
    const first = track('first', pool.submit('/stubborn', { seconds: 0.05 })); // worker B
    const held = track('held', pool.submit('/echo', { text: 'held' })); // behind the long call on A, expected to be quick
    // Later calls keep B busy, one at a time, for 0.5 s: no worker is ever idle.
    const later = Array.from({ length: 10 }, (_, index) => track(`later ${index}`, pool.submit('/stubborn', { seconds: 0.05 })));
    expect((await held).kind).toBe('result');
    // Without being taken back it would have waited for the long call (2 s), or at best
    // for every later call. Taken back once the call in front has run 0.1 s, it runs next.
    expect(ended.filter((name) => name.startsWith('later')).length).toBeLessThan(6);
    await Promise.all([long, first, ...later]);
  });

  it('are never run twice, lost or started twice when a withdraw meets the end of the call in front', async () => {
    // The other worker frees up about as the call in front ends and writes its result. The
    // worker answers a withdraw after a result it is writing, so some withdraws are answered
    // after the gateway saw the echo start (it had read the result in front), and some after
    // the worker started it (it had read the echo); most take the echoes back.
    const pool = await startedPool(behaviours, { workers: 2 });
    const started = new Map<string, number>();
    const onStart = (text: string) => () => started.set(text, (started.get(text) ?? 0) + 1);
    for (let round = 0; round < 60; round++) {
      await pool.submit('/huge-result', { mebibytes: 0 }); // quick last time, so the echoes go behind the next
      const other = pool.submit('/stubborn', { seconds: 0.04 });
      const front = pool.submit('/huge-result', { mebibytes: 2, delay: 0.04 + round * 0.00025 });
      const echoes = ['a', 'b'].map((letter) => pool.submit('/echo', { text: `${round}${letter}` }, { onStart: onStart(`${round}${letter}`) }));
      const texts = (await Promise.all(echoes)).map((outcome) => (resultValue(outcome) as { text: string }).text);
      expect(texts).toEqual([`${round}a`, `${round}b`]);
      expect((await other).kind).toBe('result');
      expect((await front).kind).toBe('result');
    }
    expect(started.size).toBe(120);
    expect([...started.values()].filter((count) => count !== 1)).toEqual([]);
    const echoed = logs.filter((line) => line.line.startsWith('echoing ')).map((line) => line.line);
    expect(echoed.length).toBe(120);
    expect(new Set(echoed).size).toBe(120);
    expect(pool.health()).toMatchObject({ busy: 0, queued: 0 });
  });

  it('answers one cancelled while it waits in the pipe at once, and never runs nor starts it', async () => {
    const pool = await startedPool(behaviours);
    await pool.submit('/echo', { text: 'warm' });
    const started: string[] = [];
    const sleeping = pool.submit('/sleep', { seconds: 0.4 }, { id: 'first' });
    const controller = new AbortController();
    const behind = pool.submit('/sleep', { seconds: 0.01 }, { id: 'behind', signal: controller.signal, onStart: () => started.push('behind') });
    const abortedAt = Date.now();
    controller.abort();
    expect(await behind).toEqual({ kind: 'cancelled' });
    expect(Date.now() - abortedAt).toBeLessThan(200);
    expect((await sleeping).kind).toBe('result');
    expect((await pool.submit('/echo', { text: 'still serving' })).kind).toBe('result');
    expect(started).toEqual([]);
    expect(logs.filter((line) => line.line === 'sleeping').map((line) => line.call)).toEqual(['first']);
  });

  it("run on the next worker, in order, when the one they waited in crashes", async () => {
    const pool = await startedPool(behaviours);
    const pid = await workerPid(pool);
    const crash = pool.submit('/exit', {});
    const behind = ['a', 'b'].map((text) => pool.submit('/echo', { text }));
    expect((await crash).kind).toBe('crashed');
    const results = (await Promise.all(behind)).map((outcome) => resultValue(outcome) as { text: string; pid: number });
    expect(results.map((result) => result.text)).toEqual(['a', 'b']);
    expect(results.every((result) => result.pid !== pid)).toBe(true);
  });
});

describe('cancelling', () => {
  it('a cancelled sleeping call resolves cancelled and frees its worker', async () => {
    const pool = await startedPool(behaviours);
    const pid = await workerPid(pool);
    const controller = new AbortController();
    const sleeping = pool.submit('/sleep', { seconds: 20 }, { signal: controller.signal });
    await until(() => logs.some((line) => line.line === 'sleeping'));
    controller.abort();
    expect(await sleeping).toEqual({ kind: 'cancelled' });
    expect(pool.health().state).toBe('READY');
    expect(await workerPid(pool)).toBe(pid);
  });

  it('kills a worker that ignores the cancel after the grace period, and starts a new one', async () => {
    const pool = await startedPool(behaviours);
    const pid = await workerPid(pool);
    const controller = new AbortController();
    const stubborn = pool.submit('/stubborn', { seconds: 20 }, { signal: controller.signal });
    await until(() => logs.some((line) => line.line === 'stubborn started'));
    const cancelledAt = Date.now();
    controller.abort();
    expect(await stubborn).toEqual({ kind: 'cancelled' });
    expect(Date.now() - cancelledAt).toBeGreaterThanOrEqual(450);
    const newPid = await workerPid(pool);
    expect(newPid).not.toBe(pid);
    expect(() => process.kill(pid, 0)).toThrow();
    expect(logs).toContainEqual(expect.objectContaining({ stream: 'svc', line: expect.stringContaining('worker killed: its call did not stop') }));
  });
});

describe('crashes', () => {
  it('fails a call whose worker exits as crashed, then serves the next call on a new worker', async () => {
    const pool = await startedPool(behaviours);
    const pid = await workerPid(pool);
    const outcome = await pool.submit('/exit', {}, { id: 'doomed' });
    expect(outcome.kind).toBe('crashed');
    expect(outcome).toMatchObject({ kind: 'crashed', message: 'worker 1 exited with code 1 during call doomed (/exit)' });
    expect(outcome.kind === 'crashed' ? outcome.stderrTail.join('\n') : '').toContain('about to exit');
    expect(pool.health().state).toBe('STARTING');
    expect(await workerPid(pool)).not.toBe(pid);
    expect(logs.some((line) => line.stream === 'svc' && line.line.includes('starting a new one'))).toBe(true);
  });

  it('fails a call whose worker is killed from outside as crashed, naming the signal', async () => {
    const pool = await startedPool(behaviours);
    const pid = await workerPid(pool);
    const sleeping = pool.submit('/sleep', { seconds: 20 });
    await until(() => logs.some((line) => line.line === 'sleeping'));
    process.kill(pid, 'SIGKILL');
    const outcome = await sleeping;
    expect(outcome).toMatchObject({ kind: 'crashed' });
    expect(outcome.kind === 'crashed' && outcome.message).toContain('was killed by SIGKILL');
    expect((await pool.submit('/echo', { text: 'again' })).kind).toBe('result');
  });

  it('keeps replacing workers that crash during calls: requests that crash it never take the service down', async () => {
    const pool = await startedPool(behaviours, {
      restartPolicy: { maxCrashes: 2, windowMs: 60_000, firstDelayMs: 10, maxDelayMs: 10 },
    });
    for (let crash = 0; crash < 3; crash++) {
      await until(() => pool.health().state === 'READY');
      expect((await pool.submit('/exit', {})).kind).toBe('crashed');
    }
    expect((await pool.submit('/echo', { text: 'still serving' })).kind).toBe('result');
  });

  it('gives up on a service whose workers keep crashing outside calls: DEFUNCT, and no more calls', async () => {
    const pool = await startedPool(behaviours, {
      restartPolicy: { maxCrashes: 2, windowMs: 60_000, firstDelayMs: 10, maxDelayMs: 10 },
    });
    const exits = () => logs.filter((line) => line.stream === 'svc' && line.line.startsWith('worker exited with code 1')).length;
    for (let crash = 1; crash <= 2; crash++) {
      await until(() => pool.health().state === 'READY');
      expect(plain(await pool.submit('/exit-when-idle', {}))).toEqual({ kind: 'result', value: 'leaving soon' });
      await until(() => exits() === crash);
    }
    expect(pool.health()).toEqual({ state: 'DEFUNCT', workers: 0, busy: 0, queued: 0 });
    expect(() => pool.submit('/echo', { text: 'anyone?' })).toThrow(PoolClosedError);
    expect(logs.some((line) => line.line.includes('workers crashed 2 times outside calls within 60 s'))).toBe(true);
  });
});

describe("the user's own processes", () => {
  it('end with their worker, when it crashes and when it shuts down', async () => {
    const pool = await startedPool(behaviours);
    const beforeCrash = resultValue(await pool.submit('/spawn', {})) as number;
    expect((await pool.submit('/exit', {})).kind).toBe('crashed');
    await until(() => !isRunning(beforeCrash));

    await until(() => pool.health().state === 'READY');
    const beforeShutdown = resultValue(await pool.submit('/spawn', {})) as number;
    expect(isRunning(beforeShutdown)).toBe(true);
    await pool.shutdown(5000);
    await until(() => !isRunning(beforeShutdown));
  });
});

describe('shutting down', () => {
  it('runs in-flight calls to completion, then stops the workers and takes no more calls', async () => {
    const pool = await startedPool(behaviours, { workers: 2 });
    const first = pool.submit('/sleep', { seconds: 0.5 });
    const second = pool.submit('/sleep', { seconds: 0.3 });
    const queued = pool.submit('/echo', { text: 'too late' });
    await until(() => logs.filter((line) => line.line === 'sleeping').length === 2);
    const stopping = pool.shutdown(5000);
    expect(() => pool.submit('/echo', { text: 'after shutdown' })).toThrow(PoolClosedError);
    expect(pool.health().state).toBe('STOPPING');
    expect(await queued).toEqual({ kind: 'cancelled' });
    expect((await first).kind).toBe('result');
    expect((await second).kind).toBe('result');
    await stopping;
    expect(pool.health().workers).toBe(0);
  });

  it('kills a call still running when the grace period ends', async () => {
    const pool = await startedPool(behaviours);
    const stubborn = pool.submit('/stubborn', { seconds: 20 });
    await until(() => logs.some((line) => line.line === 'stubborn started'));
    await pool.shutdown(300);
    const outcome = await stubborn;
    expect(outcome.kind === 'crashed' && outcome.message).toContain('the shutdown grace period ran out');
    expect(logs).toContainEqual(expect.objectContaining({ stream: 'svc', line: expect.stringContaining('the grace period ended during a call, which fails') }));
  });
});
