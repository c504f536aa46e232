import { describe, expect, it } from 'vitest';
import { defaultJobStoreLocation, parseJobStoreLocation } from '../../src/serve/jobs/job-store-location.js';

describe('--job-store values', () => {
  it('reads memory, and sqlite with an absolute or a relative path', () => {
    expect(parseJobStoreLocation('memory', '/srv')).toEqual({ kind: 'memory' });
    expect(parseJobStoreLocation('sqlite:/var/lib/svc/jobs.sqlite', '/srv')).toEqual({ kind: 'sqlite', path: '/var/lib/svc/jobs.sqlite' });
    expect(parseJobStoreLocation('sqlite:///var/jobs.sqlite', '/srv')).toEqual({ kind: 'sqlite', path: '/var/jobs.sqlite' });
    expect(parseJobStoreLocation('sqlite:state/jobs.sqlite', '/srv')).toEqual({ kind: 'sqlite', path: '/srv/state/jobs.sqlite' });
  });

  it('refuses an unknown scheme and an empty path with messages that say what to use', () => {
    expect(() => parseJobStoreLocation('postgres://db/jobs', '/srv')).toThrow('"postgres://db/jobs" is not a job store: use memory, sqlite:PATH or redis://HOST:PORT[/DB]');
    expect(() => parseJobStoreLocation('sqlite:', '/srv')).toThrow('sqlite: needs a file');
  });

  it('reads a Redis URL, with TLS, a password and a database, and refuses one without a host, a bad port or a bad database', () => {
    expect(parseJobStoreLocation('redis://localhost:6379', '/srv')).toEqual({ kind: 'redis', url: 'redis://localhost:6379' });
    expect(parseJobStoreLocation('rediss://:pw@cache.internal:6380/3', '/srv')).toEqual({ kind: 'redis', url: 'rediss://:pw@cache.internal:6380/3' });
    expect(() => parseJobStoreLocation('redis://', '/srv')).toThrow('redis:// names no host: as in redis://localhost:6379/0');
    expect(() => parseJobStoreLocation('redis://:pw@host:99999', '/srv')).toThrow('redis://:***@host:99999 is not a Redis URL: it needs a host, and a port from 1 to 65535');
    expect(() => parseJobStoreLocation('redis://host:6379/jobs', '/srv')).toThrow('the database after the host must be a number (0 to 15 on a default Redis), not "jobs"');
    expect(() => parseJobStoreLocation('redis://host:6379/0?tls=1', '/srv')).toThrow('svc reads no query or fragment in a Redis URL');
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
