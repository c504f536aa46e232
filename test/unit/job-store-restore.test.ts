import { describe, expect, it } from 'vitest';
import { planRecovery } from '../../src/serve/jobs/job-recovery.js';
import { JobStore } from '../../src/serve/jobs/job-store.js';
import type { Job } from '../../src/serve/jobs/job.js';

const NOW = 1_000_000;

function job(id: string, owner: string, fields: Partial<Job>): Job {
  return { id, endpoint: '/work', streams: false, owner, status: 'QUEUED', progress: 0, message: null, result: null, error: null, chunks: [], createdAt: NOW - 100, startedAt: null, finishedAt: null, ...fields };
}

describe('a store that takes back the jobs a crash left', () => {
  it("counts each key's carried-over jobs in its share, readable by their owner alone, and does not hold a stop for them", () => {
    const store = new JobStore({ ttlMs: 60_000, maxRetained: 100, maxRetainedBytes: 2 ** 20 }, () => NOW);
    const plan = planRecovery(
      [
        { job: job('ended', 'a', { status: 'FINISHED', result: 'x'.repeat(100), finishedAt: NOW - 10 }), args: null, runs: 1, read: false },
        { job: job('seen', 'a', { status: 'FINISHED', result: 'y', finishedAt: NOW - 10 }), args: null, runs: 1, read: true },
        { job: job('queued', 'b', {}), args: { n: 1 }, runs: 0, read: false },
      ],
      NOW,
      60_000,
    );
    expect(store.restore(plan).map(({ job: restored }) => restored.id)).toEqual(['queued']);
    expect(store.holdingOf('a')).toEqual({ jobs: 1, unreadBytes: 148 });
    expect(store.holdingOf('b')).toEqual({ jobs: 1, unreadBytes: 0 });
    expect(store.get('ended', 'b')).toBeUndefined();
    expect(store.unreadCount).toBe(0);
    expect(store.get('ended', 'a')?.result).toBe('x'.repeat(100));
    expect(store.holdingOf('a')).toEqual({ jobs: 0, unreadBytes: 0 });
  });
});
