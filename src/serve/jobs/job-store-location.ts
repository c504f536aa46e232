import { createHash } from 'node:crypto';
import { basename, isAbsolute, join, resolve } from 'node:path';

/** Where a server keeps its jobs, from `--job-store` / `SVC_JOB_STORE`. */
export type JobStoreLocation = { kind: 'memory' } | { kind: 'sqlite'; path: string } | { kind: 'redis'; url: string };

export const JOB_STORE_ENV = 'SVC_JOB_STORE';

/** Thrown for a value `--job-store` cannot take; the CLI makes it a usage error. */
export class JobStoreLocationError extends Error {
  override readonly name = 'JobStoreLocationError';
}

/**
 * Reads `memory`, `sqlite:PATH` (a relative PATH from the working directory, as any file on
 * the command line) or `redis://HOST:PORT[/DB]` (`rediss://` for TLS, a password in the URL).
 */
export function parseJobStoreLocation(text: string, cwd: string): JobStoreLocation {
  const value = text.trim();
  if (value === 'memory') return { kind: 'memory' };
  if (value.startsWith('sqlite:')) {
    const path = value.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (path === '') throw new JobStoreLocationError('sqlite: needs a file, as in sqlite:/var/lib/svc/jobs.sqlite');
    return { kind: 'sqlite', path: isAbsolute(path) ? path : resolve(cwd, path) };
  }
  if (/^rediss?:\/\//i.test(value)) return { kind: 'redis', url: checkedRedisUrl(value) };
  throw new JobStoreLocationError(`${JSON.stringify(redacted(value))} is not a job store: use memory, sqlite:PATH or redis://HOST:PORT[/DB]`);
}

const REDIS_FORM = 'as in redis://localhost:6379/0';

/** A Redis URL with a host, a port if any that is a number, and a database that is one. */
function checkedRedisUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new JobStoreLocationError(`${redacted(value)} is not a Redis URL: it needs a host, and a port from 1 to 65535 if any, ${REDIS_FORM}`);
  }
  const shown = redacted(value);
  if (url.hostname === '') throw new JobStoreLocationError(`${shown} names no host: ${REDIS_FORM}`);
  const database = url.pathname.replace(/^\//, '');
  if (database !== '' && !/^\d{1,5}$/.test(database)) {
    throw new JobStoreLocationError(`${shown}: the database after the host must be a number (0 to 15 on a default Redis), not ${JSON.stringify(decodeURIComponent(database))}`);
  }
  if (url.search !== '' || url.hash !== '') throw new JobStoreLocationError(`${shown}: svc reads no query or fragment in a Redis URL; ${REDIS_FORM}`);
  return value;
}

/** A URL as it may be shown: its password, if any, replaced. */
export function redacted(text: string): string {
  return text.replace(/^(rediss?:\/\/[^:@/]*:)[^@/]*@/i, '$1***@');
}

/**
 * Where jobs live when nothing is said: serverless compute keeps them in a SQLite file in the
 * user's state directory (XDG Base Directory: `$XDG_STATE_HOME`, else `~/.local/state`), one
 * per project. Not in the project: its `apipod-deploy/` is copied into images, and a job file
 * there would ship one machine's jobs, and their results, to every container. Dedicated
 * compute keeps its few `Prefer: respond-async` jobs in memory, as before.
 */
export function defaultJobStoreLocation(compute: string, projectRoot: string, env: NodeJS.ProcessEnv, home: string): JobStoreLocation {
  if (compute !== 'serverless') return { kind: 'memory' };
  return { kind: 'sqlite', path: join(projectStateDirectory(projectRoot, env, home), 'jobs.sqlite') };
}

/** svc's directory for one project's state (its job file, its webhook secrets), outside the project. */
export function projectStateDirectory(projectRoot: string, env: NodeJS.ProcessEnv, home: string): string {
  const stateHome = env.XDG_STATE_HOME && isAbsolute(env.XDG_STATE_HOME) ? env.XDG_STATE_HOME : join(home, '.local', 'state');
  // The directory's name for people, its path's hash so that two projects of one name differ.
  const hash = createHash('sha256').update(resolve(projectRoot)).digest('hex').slice(0, 12);
  return join(stateHome, 'svc', `${basename(resolve(projectRoot))}-${hash}`);
}

export function describeJobStore(location: JobStoreLocation): string {
  if (location.kind === 'redis') return redacted(location.url);
  return location.kind === 'memory' ? 'memory' : `sqlite:${location.path}`;
}
