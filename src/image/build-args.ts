import { execFile } from 'node:child_process';
import { SvcError } from '../svc-error.js';
import { checkBuildArgName } from './dockerfile-quoting.js';
import { parseImageReference } from './image-reference.js';

/**
 * The build arguments the generated Dockerfile declares for its OCI labels (they change
 * with every build, so they are arguments read by the last instruction, never baked into
 * an earlier layer), then the user's `--build-arg K=V`, which win.
 */
export function buildArguments(input: {
  created: Date;
  source: string | null;
  tag: string;
  userArgs: readonly string[];
}): Record<string, string> {
  const reference = parseImageReference(input.tag);
  const args: Record<string, string> = {
    SVC_CREATED: input.created.toISOString(),
    SVC_SOURCE: input.source ?? '',
    SVC_IMAGE_VERSION: reference?.tag ?? 'latest',
  };
  for (const text of input.userArgs) {
    const [name, value] = parseBuildArg(text);
    args[name] = value;
  }
  return args;
}

/** `K=V` (V may be empty or hold `=`); a bare `K` takes K's value from the environment, as `docker build` does. */
export function parseBuildArg(text: string, env: NodeJS.ProcessEnv = process.env): [string, string] {
  const equals = text.indexOf('=');
  const name = checkBuildArgName(equals === -1 ? text : text.slice(0, equals));
  if (equals !== -1) return [name, text.slice(equals + 1)];
  const value = env[name];
  if (value === undefined) throw new SvcError('usage', `--build-arg ${name} has no value and ${name} is not set in the environment`);
  return [name, value];
}

/** The project's git remote for org.opencontainers.image.source, without credentials; null when there is none. */
export function readSourceUrl(root: string): Promise<string | null> {
  return new Promise((resolve) => {
    execFile('git', ['-C', root, 'config', '--get', 'remote.origin.url'], { timeout: 5_000 }, (error, stdout) => {
      resolve(error ? null : withoutCredentials(stdout.trim()) || null);
    });
  });
}

export function withoutCredentials(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.toString();
  } catch {
    return url; // scp-like `git@host:path`: the user is no secret
  }
}
