import { describe, expect, it } from 'vitest';
import { chooseRunpodMode, JOB_TAKE_VARIABLE } from '../../src/providers/runpod-mode.js';

const ON_THE_PROVIDER = { [JOB_TAKE_VARIABLE]: 'https://provider.example/job-take/$ID?gpu=x' };

describe('how a runpod worker takes its jobs', () => {
  it("is one of the provider's workers where the provider set its job-take URL", () => {
    expect(chooseRunpodMode({ testServer: false, testInput: undefined, env: ON_THE_PROVIDER })).toEqual({ kind: 'worker' });
  });

  it("serves the library's test API anywhere else, saying why", () => {
    const mode = chooseRunpodMode({ testServer: false, testInput: undefined, env: {} });
    expect(mode).toEqual({ kind: 'test-server', reason: `${JOB_TAKE_VARIABLE} is not set, so this is not one of the provider's workers` });
  });

  it('follows the flags over the environment', () => {
    expect(chooseRunpodMode({ testServer: true, testInput: undefined, env: ON_THE_PROVIDER }).kind).toBe('test-server');
    const file = { file: 'job.json', text: '{"input": {"path": "/hello"}, "id": "local"}' };
    expect(chooseRunpodMode({ testServer: false, testInput: file, env: ON_THE_PROVIDER })).toEqual({
      kind: 'test-input',
      job: { input: { path: '/hello' }, id: 'local' },
      file: 'job.json',
    });
  });

  it('names the field of a test job that has the wrong type', () => {
    const file = { file: 'job.json', text: '{"input": {}, "id": 7}' };
    expect(() => chooseRunpodMode({ testServer: false, testInput: file, env: {} })).toThrow(expect.objectContaining({ location: { file: 'job.json', field: 'id' } }));
  });
});
