import { describe, expect, it } from 'vitest';
import { newJob } from '../../src/serve/jobs/job.js';

describe('newJob', () => {
  it('gives each job 128 bits of its own as 32 hex digits, across refills of the pool they are drawn from', () => {
    const ids = Array.from({ length: 1000 }, () => newJob({ endpoint: '/e', streams: false, owner: null }, 'PENDING', 0).id);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(new Set(ids).size).toBe(ids.length);
    // No 8-byte half is handed out twice: a pool sliced at the wrong step would share bytes between ids.
    const halves = ids.flatMap((id) => [id.slice(0, 16), id.slice(16)]);
    expect(new Set(halves).size).toBe(halves.length);
  });
});
