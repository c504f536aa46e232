import { describe, expect, it } from 'vitest';
import { JobStore } from '../../src/serve/jobs/job-store.js';
import type { Value } from '../../src/worker/protocol.js';

function storeWithClock(ttlMs: number, maxRetained: number, maxRetainedBytes = 2 ** 30) {
  const clock = { now: 1_000_000 };
  return { store: new JobStore({ ttlMs, maxRetained, maxRetainedBytes }, () => clock.now), clock };
}

function finishedJob(store: JobStore, result: Value) {
  const job = store.create('/run', null);
  store.move(job, 'PROCESSING');
  store.move(job, 'FINISHED', { result });
  return job;
}

describe('the job store', () => {
  it('keeps an ended job readable, any number of times, until its TTL passes', () => {
    const { store, clock } = storeWithClock(60_000, 100);
    const job = store.create('/run', null);
    store.move(job, 'QUEUED');
    store.move(job, 'PROCESSING');
    store.move(job, 'FINISHED', { result: 42 });
    clock.now += 59_000;
    expect(store.get(job.id, null)?.result).toBe(42);
    expect(store.get(job.id, null)?.result).toBe(42);
    clock.now += 2_000;
    expect(store.get(job.id, null)).toBeUndefined();
  });

  it('keeps no ended job when told to retain none, after telling its watchers how it ended', () => {
    const { store } = storeWithClock(0, 0);
    const job = store.create('/run', null);
    const heard: unknown[] = [];
    store.watch(job, (changed) => heard.push([changed.status, changed.result]));
    store.move(job, 'PROCESSING');
    store.move(job, 'FINISHED', { result: 'a large image' });
    expect(heard.at(-1)).toEqual(['FINISHED', 'a large image']);
    expect(store.size).toBe(0);
    expect(store.get(job.id, null)).toBeUndefined();
  });

  it('counts the ended jobs no client has seen end, for a stopping server to wait on', async () => {
    const { store } = storeWithClock(60_000, 100);
    const polled = store.create('/run', null);
    const watched = store.create('/run', null);
    const stopWatching = store.watch(watched, () => undefined);
    for (const job of [polled, watched]) {
      store.move(job, 'PROCESSING');
      store.move(job, 'FINISHED', { result: 1 });
    }
    stopWatching();
    expect(store.unreadCount).toBe(1); // the watcher (Prefer: wait, a stream) was told
    const allRead = store.whenEndedJobsRead(10_000);
    expect(store.get(polled.id, 'someone else')).toBeUndefined();
    expect(store.unreadCount).toBe(1);
    store.get(polled.id, null);
    await allRead;
    expect(store.unreadCount).toBe(0);

    const abandoned = store.create('/run', null);
    store.move(abandoned, 'PROCESSING');
    store.move(abandoned, 'FAILED', { error: null });
    const started = Date.now();
    await store.whenEndedJobsRead(50);
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    expect(store.unreadCount).toBe(1);
  });

  it('stays bounded under a flood of jobs that are read, dropping the oldest ended ones first', () => {
    const { store } = storeWithClock(3_600_000, 1_000);
    const ids: string[] = [];
    for (let index = 0; index < 50_000; index++) {
      const job = finishedJob(store, index);
      store.get(job.id, null);
      ids.push(job.id);
    }
    expect(store.size).toBe(1_000);
    expect(store.refusal()).toBeNull();
    expect(store.get(ids[0] as string, null)).toBeUndefined();
    expect(store.get(ids.at(-1) as string, null)?.result).toBe(49_999);
  });

  it('never drops a result nobody has read before its TTL: it refuses new jobs until one is read or expires', () => {
    const { store, clock } = storeWithClock(60_000, 3);
    const read = finishedJob(store, 'read');
    store.get(read.id, null);
    clock.now += 10_000;
    const unread = [finishedJob(store, 'a'), finishedJob(store, 'b'), finishedJob(store, 'c')];
    expect(store.get(read.id, null)).toBeUndefined(); // over the count, the job already read went first
    expect(store.refusal()).toEqual({
      message: expect.stringMatching(/^3 ended job\(s\) with 1 MiB of results wait to be read/),
      retryAfterSeconds: 60,
    });
    store.get(unread[1]?.id as string, null);
    expect(store.refusal()).toBeNull();
    clock.now += 20_000;
    const more = finishedJob(store, 'd');
    expect(store.refusal()).not.toBeNull();
    expect(unread.map((job) => store.get(job.id, null)?.result)).toEqual(['a', undefined, 'c']);
    clock.now += 40_001; // the first three expire
    expect([store.refusal(), store.get(unread[0]?.id as string, null), store.get(more.id, null)?.result]).toEqual([null, undefined, 'd']);
  });

  it('counts the bytes of the results it keeps: large results nobody read stop new jobs before memory runs out', () => {
    const image = 'x'.repeat(1_000_000);
    const { store } = storeWithClock(60_000, 10_000, 2_500_000);
    const first = finishedJob(store, { image });
    store.get(first.id, null);
    const streamed = store.create('/run', null);
    store.move(streamed, 'PROCESSING');
    streamed.chunks.push(image, image);
    store.move(streamed, 'FINISHED', { result: null });
    expect(store.get(first.id, null)).toBeUndefined(); // read, and the bytes were over: dropped
    expect(store.refusal()).toBeNull();
    finishedJob(store, { image });
    expect(store.refusal()?.message).toMatch(/^2 ended job\(s\) with 3 MiB of results wait to be read/);
  });

  it('never drops a job that has not ended', () => {
    const { store, clock } = storeWithClock(1_000, 1);
    const waiting = store.create('/run', null);
    store.move(waiting, 'QUEUED');
    for (let index = 0; index < 10; index++) {
      const job = store.create('/run', null);
      store.move(job, 'CANCELLED');
    }
    clock.now += 10_000;
    expect(store.get(waiting.id, null)?.status).toBe('QUEUED');
  });

  it('shows a job only to its owner', () => {
    const { store } = storeWithClock(1_000, 10);
    const job = store.create('/run', 'key-a');
    expect(store.get(job.id, 'key-a')).toBe(job);
    expect(store.get(job.id, 'key-b')).toBeUndefined();
    expect(store.get(job.id, null)).toBeUndefined();
  });

  it('wakes a waiter as soon as the job ends', async () => {
    const { store } = storeWithClock(1_000, 10);
    const job = store.create('/run', null);
    store.move(job, 'PROCESSING');
    const waiting = store.waitUntilEnded(job, 60_000);
    setTimeout(() => store.move(job, 'FINISHED', { result: 'done' }), 10);
    await waiting;
    expect(job.status).toBe('FINISHED');
  });

  it('rejects a move the state machine does not allow', () => {
    const { store } = storeWithClock(1_000, 10);
    const job = store.create('/run', null);
    store.move(job, 'CANCELLED');
    expect(() => store.move(job, 'FINISHED')).toThrow('a job cannot move from CANCELLED to FINISHED');
  });
});

describe("what each key's jobs hold in the store", () => {
  it('counts jobs until they end read, and the unread results by size, per key', () => {
    const { store, clock } = storeWithClock(60_000, 100);
    const end = (job: ReturnType<JobStore['create']>, result: Value) => {
      store.move(job, 'PROCESSING');
      store.move(job, 'FINISHED', { result });
    };
    const queued = store.create('/run', 'a');
    const unread = store.create('/run', 'a');
    store.create('/run', 'b');
    expect([store.holdingOf('a'), store.holdingOf('b'), store.holdingOf('c')]).toEqual([
      { jobs: 2, unreadBytes: 0 },
      { jobs: 1, unreadBytes: 0 },
      { jobs: 0, unreadBytes: 0 },
    ]);
    end(unread, 'x'.repeat(1000));
    const held = store.holdingOf('a');
    expect([held.jobs, held.unreadBytes >= 1000 && held.unreadBytes < 1100]).toEqual([2, true]);
    expect(store.secondsUntilUnreadExpires('a')).toBe(60);
    store.get(unread.id, 'a');
    expect(store.holdingOf('a')).toEqual({ jobs: 1, unreadBytes: 0 });
    // A job a client waits on is read as it ends; one refused by its queue holds nothing.
    const stop = store.watch(queued, () => {});
    end(queued, 1);
    stop();
    store.discard(store.create('/run', 'a'));
    expect(store.holdingOf('a')).toEqual({ jobs: 0, unreadBytes: 0 });
    // An unread result that expires holds nothing either.
    const late = store.create('/run', 'c');
    end(late, 'y');
    clock.now += 61_000;
    expect(store.holdingOf('c')).toEqual({ jobs: 0, unreadBytes: 0 });
    expect(store.secondsUntilUnreadExpires('c')).toBeNull();
  });
});
