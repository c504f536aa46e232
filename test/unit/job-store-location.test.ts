import { describe, expect, it } from 'vitest';
import { defaultJobStoreLocation, parseJobStoreLocation } from '../../src/serve/jobs/job-store-location.js';

describe('--job-store values', () => {
  it('reads memory, and sqlite with an absolute or a relative path', () => {
    expect(parseJobStoreLocation('memory', '/srv')).toEqual({ kind: 'memory' });
    expect(parseJobStoreLocation('sqlite:/var/lib/svc/jobs.sqlite', '/srv')).toEqual({ kind: 'sqlite', path: '/var/lib/svc/jobs.sqlite' });
    expect(parseJobStoreLocation('sqlite:///var/jobs.sqlite', '/srv')).toEqual({ kind: 'sqlite', path: '/var/jobs.sqlite' });
    expect(parseJobStoreLocation('sqlite:state/jobs.sqlite', '/srv')).toEqual({ kind: 'sqlite', path: '/srv/state/jobs.sqlite' });
  });

  it('refuses an unknown scheme, an empty path and redis (not yet) with messages that say what to use', () => {
    expect(() => parseJobStoreLocation('postgres://db/jobs', '/srv')).toThrow('"postgres://db/jobs" is not a job store: use memory or sqlite:PATH');
    expect(() => parseJobStoreLocation('sqlite:', '/srv')).toThrow('sqlite: needs a file');
    expect(() => parseJobStoreLocation('redis://localhost:6379', '/srv')).toThrow('redis:// is not supported by this version of svc yet');
  });
});

describe('where jobs live when nothing is said', () => {
  it('serverless compute: a file per project in the XDG state directory, never in the project (it is baked into images)', () => {
    const a = defaultJobStoreLocation('serverless', '/work/app', { XDG_STATE_HOME: '/state' }, '/home/me');
    const b = defaultJobStoreLocation('serverless', '/other/app', { XDG_STATE_HOME: '/state' }, '/home/me');
    expect(a).toEqual({ kind: 'sqlite', path: expect.stringMatching(/^\/state\/svc\/app-[0-9a-f]{12}\/jobs\.sqlite$/) });
    expect(b).not.toEqual(a);
    expect(defaultJobStoreLocation('serverless', '/work/app', {}, '/home/me')).toEqual({
      kind: 'sqlite',
      path: expect.stringMatching(/^\/home\/me\/\.local\/state\/svc\/app-[0-9a-f]{12}\/jobs\.sqlite$/),
    });
  });

  it('dedicated compute keeps its few async jobs in memory', () => {
    expect(defaultJobStoreLocation('dedicated', '/work/app', {}, '/home/me')).toEqual({ kind: 'memory' });
  });
});
