import { describe, expect, it } from 'vitest';
import { keyShare, keyShareRefusal } from '../../src/serve/jobs/key-share.js';

const MIB = 2 ** 20;
const limits = { maxRetained: 20, maxRetainedBytes: 100 * MIB };

describe("each API key's share of the job store", () => {
  it('splits --max-jobs and --max-job-memory equally among the keys, never past the store', () => {
    expect(keyShare(limits, 2)).toEqual({ maxRetained: 10, maxRetainedBytes: 50 * MIB });
    expect(keyShare(limits, 3)).toEqual({ maxRetained: 6, maxRetainedBytes: Math.floor((100 * MIB) / 3) });
    // More keys than jobs: each may still run one.
    expect(keyShare(limits, 50).maxRetained).toBe(1);
  });

  it('refuses a key at its share of jobs, naming --max-jobs and the share', () => {
    expect(keyShareRefusal({ jobs: 9, unreadBytes: 0 }, limits, 2)).toBeNull();
    expect(keyShareRefusal({ jobs: 10, unreadBytes: 0 }, limits, 2)).toBe(
      'this key has 10 job(s) queued, running or ended unread, its share of the jobs this server keeps ' +
        '(--max-jobs 20 among 2 API keys: 10 each): read their results, or retry once they expire',
    );
  });

  it('refuses a key whose unread results hold its share of the memory, naming --max-job-memory', () => {
    expect(keyShareRefusal({ jobs: 1, unreadBytes: 50 * MIB }, limits, 2)).toBe(
      "this key's unread results hold 50 MiB, its share of what this server keeps " +
        '(--max-job-memory 100 MiB among 2 API keys: 50 MiB each): read their results, or retry once they expire',
    );
  });

  it('leaves a server with one key, or none, to the store limits alone', () => {
    for (const keys of [0, 1]) expect(keyShareRefusal({ jobs: 20, unreadBytes: 100 * MIB }, limits, keys)).toBeNull();
  });
});
