import { describe, expect, it } from 'vitest';
import { callsAheadWithin } from '../../src/worker/worker-process.js';

describe('calls sent ahead to a worker', () => {
  it('fills the pipe of a worker whose calls take microseconds, up to the most allowed', () => {
    expect(callsAheadWithin(10, 0.06, 8)).toBe(8);
    expect(callsAheadWithin(10, 0, 8)).toBe(8);
  });

  it('sends fewer behind calls of milliseconds, so the last starts within the quick time', () => {
    expect(callsAheadWithin(10, 3, 8)).toBe(3); // starts after 9 ms
    expect(callsAheadWithin(10, 4, 8)).toBe(2); // 8 ms; a third would start after 12
    expect(callsAheadWithin(10, 6, 8)).toBe(1);
    expect(callsAheadWithin(10, 5, 8)).toBe(1); // a second would start at 10 ms, not within it
  });

  it('sends none behind a worker whose last call was not quick, or that has run none yet', () => {
    expect(callsAheadWithin(10, 10, 8)).toBe(0);
    expect(callsAheadWithin(10, 250, 8)).toBe(0);
    expect(callsAheadWithin(10, Number.POSITIVE_INFINITY, 8)).toBe(0);
  });
});
