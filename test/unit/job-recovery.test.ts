import { describe, expect, it } from 'vitest';
import type { JournaledJob } from '../../src/serve/jobs/job-journal.js';
import { planRecovery } from '../../src/serve/jobs/job-recovery.js';
import type { Job } from '../../src/serve/jobs/job.js';

const NOW = 1_000_000;
const TTL = 60_000;

function journaled(id: string, fields: Partial<Job>, { runs = 0, read = false, args = { n: 1 } as JournaledJob['args'] } = {}): JournaledJob {
  const job: Job = {
    id,
    endpoint: '/work',
    streams: false,
    owner: 'key-a',
    status: 'QUEUED',
    progress: 0,
    message: null,
    result: null,
    error: null,
    chunks: [],
    createdAt: NOW - 5_000,
    startedAt: null,
    finishedAt: null,
    ...fields,
  };
  return { job, args, runs, read };
}

describe('what a server restarted after a crash does with the jobs it finds', () => {
  it('runs a job that was still queued, with its arguments and its owner', () => {
    const plan = planRecovery([journaled('q', {})], NOW, TTL);
    expect(plan.toRun).toEqual([{ job: expect.objectContaining({ id: 'q', status: 'QUEUED', owner: 'key-a', message: null }), args: { n: 1 } }]);
  });

  it('runs a job that was running once more, starting it afresh and saying why', () => {
    const plan = planRecovery([journaled('r', { status: 'STREAMING', progress: 0.5, chunks: ['a'], startedAt: NOW - 1_000 }, { runs: 1 })], NOW, TTL);
    expect(plan.toRun[0]?.job).toMatchObject({ status: 'QUEUED', progress: 0, chunks: [], startedAt: null, message: expect.stringContaining('server stopped') });
    expect(plan.failed).toEqual([]);
  });

  it('fails a job that was running when the server died for the second time, naming the crash', () => {
    const plan = planRecovery([journaled('twice', { status: 'PROCESSING', startedAt: NOW - 1_000 }, { runs: 2 })], NOW, TTL);
    expect(plan.toRun).toEqual([]);
    expect(plan.failed).toEqual([expect.objectContaining({ id: 'twice', status: 'FAILED', finishedAt: NOW })]);
    expect(plan.failed[0]?.error).toMatchObject({ type: 'ServerCrashed', message: expect.stringContaining('kill -9') });
  });

  it('keeps ended jobs readable, read or not, until their TTL, and sweeps the expired', () => {
    const plan = planRecovery(
      [
        journaled('fresh', { status: 'FINISHED', result: 3, finishedAt: NOW - TTL + 1 }, { args: null, read: true }),
        journaled('unread', { status: 'FAILED', finishedAt: NOW - 10 }, { args: null }),
        journaled('old', { status: 'FINISHED', result: 3, finishedAt: NOW - TTL }, { args: null }),
      ],
      NOW,
      TTL,
    );
    expect(plan.kept.map(({ job, read }) => [job.id, read])).toEqual([
      ['fresh', true],
      ['unread', false],
    ]);
    expect(plan.expired).toEqual(['old']);
  });
});
