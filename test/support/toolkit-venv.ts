import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './svc.js';

/**
 * The Python of the virtualenv that holds the apipod toolkit and its client fastsdk
 * (.ci/requirements-toolkit.txt). A test that needs it fails, naming the command that makes
 * it, rather than skipping.
 */
export function toolkitPython(): string {
  const python = join(REPO_ROOT, 'test/.venv-toolkit/bin/python');
  if (!existsSync(python)) throw new Error(`${python} is missing: run .ci/setup (it makes the toolkit's virtualenv)`);
  return python;
}
