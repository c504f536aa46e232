import { createHash } from 'node:crypto';
import { basename, isAbsolute, join, resolve } from 'node:path';

/** Where a server keeps its jobs, from `--job-store` / `SVC_JOB_STORE`. */
export type JobStoreLocation = { kind: 'memory' } | { kind: 'sqlite'; path: string };

export const JOB_STORE_ENV = 'SVC_JOB_STORE';

/** Thrown for a value `--job-store` cannot take; the CLI makes it a usage error. */
export class JobStoreLocationError extends Error {
  override readonly name = 'JobStoreLocationError';
}

/**
 * Reads `memory` or `sqlite:PATH` (a relative PATH from the working directory, as any file
 * on the command line). Redis (`redis://`) is named so that its users learn it is not here yet.
 */
export function parseJobStoreLocation(text: string, cwd: string): JobStoreLocation {
  const value = text.trim();
  if (value === 'memory') return { kind: 'memory' };
  if (value.startsWith('sqlite:')) {
    const path = value.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (path === '') throw new JobStoreLocationError('sqlite: needs a file, as in sqlite:/var/lib/svc/jobs.sqlite');
    return { kind: 'sqlite', path: isAbsolute(path) ? path : resolve(cwd, path) };
  }
  if (/^rediss?:\/\//.test(value)) throw new JobStoreLocationError('redis:// is not supported by this version of svc yet; use memory or sqlite:PATH');
  throw new JobStoreLocationError(`${JSON.stringify(value)} is not a job store: use memory or sqlite:PATH`);
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
  return location.kind === 'memory' ? 'memory' : `sqlite:${location.path}`;
}
