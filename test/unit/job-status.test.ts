import { describe, expect, it } from 'vitest';
import {
  assertTransition,
  canTransition,
  IllegalTransitionError,
  isTerminal,
  JOB_STATUSES,
  TRANSITIONS,
} from '../../src/serve/jobs/job-status.js';

const legal: Array<[string, string]> = [
  ['PENDING', 'QUEUED'],
  ['PENDING', 'PROCESSING'],
  ['PENDING', 'FAILED'],
  ['PENDING', 'TIMEOUT'],
  ['PENDING', 'CANCELLED'],
  ['QUEUED', 'PROCESSING'],
  ['QUEUED', 'FAILED'],
  ['QUEUED', 'TIMEOUT'],
  ['QUEUED', 'CANCELLED'],
  ['PROCESSING', 'STREAMING'],
  ['PROCESSING', 'FINISHED'],
  ['PROCESSING', 'FAILED'],
  ['PROCESSING', 'TIMEOUT'],
  ['PROCESSING', 'CANCELLED'],
  ['STREAMING', 'FINISHED'],
  ['STREAMING', 'FAILED'],
  ['STREAMING', 'TIMEOUT'],
  ['STREAMING', 'CANCELLED'],
];

describe('the job state machine', () => {
  it('allows exactly the documented transitions', () => {
    const allowed = JOB_STATUSES.flatMap((from) => TRANSITIONS[from].map((to) => [from, to]));
    expect(allowed.sort()).toEqual([...legal].sort());
  });

  for (const from of JOB_STATUSES) {
    for (const to of JOB_STATUSES) {
      const isLegal = legal.some(([a, b]) => a === from && b === to);
      it(`${isLegal ? 'allows' : 'rejects'} ${from} -> ${to}`, () => {
        expect(canTransition(from, to)).toBe(isLegal);
        if (isLegal) expect(() => assertTransition(from, to)).not.toThrow();
        else expect(() => assertTransition(from, to)).toThrow(IllegalTransitionError);
      });
    }
  }

  it('never leaves a terminal status', () => {
    for (const status of ['FINISHED', 'FAILED', 'TIMEOUT', 'CANCELLED'] as const) {
      expect(isTerminal(status)).toBe(true);
      expect(TRANSITIONS[status]).toEqual([]);
    }
    expect(isTerminal('PROCESSING')).toBe(false);
  });
});
