import { describe, expect, it } from 'vitest';
import { simulatedTarget } from '../../src/scan/simulate-target.js';

describe("the upstream toolkit's APIPod(simulate=...)", () => {
  it('is serverless compute on the local job queue unless it says dedicated', () => {
    expect(simulatedTarget('serverless', false)).toEqual({ compute: 'serverless', provider: 'localhost' });
    expect(simulatedTarget('', false)).toEqual({ compute: 'serverless', provider: 'localhost' });
    expect(simulatedTarget('serverless-azure', false)).toEqual({ compute: 'serverless', provider: 'localhost' });
    expect(simulatedTarget('dedicated-runpod', true)).toEqual({ compute: 'dedicated', provider: 'localhost' });
  });

  it("is the provider's own worker for serverless-runpod with direct=True only", () => {
    expect(simulatedTarget('serverless-runpod', true)).toEqual({ compute: 'serverless', provider: 'runpod' });
    expect(simulatedTarget('serverless-runpod', false)).toEqual({ compute: 'serverless', provider: 'localhost' });
  });

  it('is null for a target the toolkit refuses on import', () => {
    expect(simulatedTarget('gpu', false)).toBeNull();
    expect(simulatedTarget('serverless-aws', false)).toBeNull();
  });
});
