import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, it } from 'vitest';
import { JobRunner } from '../../src/serve/jobs/job-runner.js';
import { jobArguments } from '../../src/serve/jobs/job-arguments.js';
import { JobStore } from '../../src/serve/jobs/job-store.js';
import { JsonText, PlainStringText } from '../../src/worker/json-text.js';
import type { LongString } from '../../src/worker/protocol.js';
import { WorkerPool } from '../../src/worker/worker-pool.js';

const behaviours = fileURLToPath(new URL('../fixtures/services/worker-behaviours.py', import.meta.url));
const pools: WorkerPool[] = [];

afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.shutdown(2000)));
});

// A job is kept after its end (readable until --job-ttl), long enough for V8 to move it to
// the old generation; whatever large buffer it still points to then waits for a full
// collection, which on 2 MB arguments ran every ~10 jobs (bench/RESULTS.md run 16).
it("runs a job with its long string's bytes, then lets go of them as it ends, the request's as soon as the job holds them", async () => {
  const pool = new WorkerPool({ python: 'python3', serviceFile: behaviours, projectDir: dirname(behaviours), cancelGraceMs: 500 });
  pools.push(pool);
  await pool.start();
  const store = new JobStore({ ttlMs: 60_000, maxRetained: 100, maxRetainedBytes: 2 ** 20 });
  const runner = new JobRunner(store, pool, { timeoutsMs: new Map(), defaultTimeoutMs: 10_000, debug: false });
  const text = `é ${'x'.repeat(300_000)}`;
  const fromRequest: LongString[] = [{ parameter: 'text', bytes: Buffer.from(text) }];
  const args = jobArguments({ text: '' }, fromRequest);
  expect(fromRequest[0]!.bytes.length).toBe(0);

  const job = store.create('/echo', null, false, args);
  const ended = store.waitUntilEnded(job, 10_000);
  runner.start(job, args);
  await ended;
  expect(job.status).toBe('FINISHED');
  expect(job.result instanceof JsonText ? job.result.value : job.result).toMatchObject({ text });
  expect(() => (args.text as PlainStringText).utf8).toThrow('a string read after it was released');
});
