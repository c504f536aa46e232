import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, it } from 'vitest';
import { WorkerProcess } from '../../src/worker/worker-process.js';

const behaviours = fileURLToPath(new URL('../fixtures/services/worker-behaviours.py', import.meta.url));
const workers: WorkerProcess[] = [];

afterEach(async () => {
  await Promise.all(workers.splice(0).map((worker) => worker.shutdown(2000)));
});

// The pool puts each call given back first in its queue as it comes: given back last first,
// they keep their order. Here, not through the pool, because whether the pool sends both
// calls behind the sleep depends on timing a busy machine upsets (worker-pool.test.ts).
it('gives the calls it takes back from behind a running call back last first, none started', async () => {
  const worker = new WorkerProcess({ id: 1, python: 'python3', serviceFile: behaviours, projectDir: dirname(behaviours), callDurations: new Map() });
  workers.push(worker);
  await worker.ready;
  const running = worker.call('/sleep', { seconds: 0.5 });
  const givenBack: string[] = [];
  const started: string[] = [];
  const behind = ['1', '2', '3'].map((text) =>
    worker.callNext('/echo', { text }, { onStart: () => started.push(text) }).then((outcome) => {
      expect(outcome).toBeNull();
      givenBack.push(text);
    }),
  );
  worker.withdrawHeldCalls();
  await Promise.all(behind);
  expect(givenBack).toEqual(['3', '2', '1']);
  expect((await running).kind).toBe('result');
  expect(started).toEqual([]);
});
