import { execFile } from 'node:child_process';
import { satisfies } from '@renovatebot/pep440';
import { RUNPOD_MINIMUM_VERSION, RUNPOD_REQUIREMENT } from '../image/runtime-images.js';
import type { PythonInterpreter } from '../worker/python-interpreter.js';
import { SvcError } from '../svc-error.js';

/**
 * The version of the provider's library in the workers' interpreter, read from its package
 * metadata (importing it takes a second); a clear error when it is missing or too old.
 */
export async function checkRunpodLibrary(python: PythonInterpreter): Promise<string> {
  const script = "import importlib.metadata as m\ntry:\n    print(m.version('runpod'))\nexcept m.PackageNotFoundError:\n    print('')";
  const version = await new Promise<string>((resolve, reject) => {
    execFile(python.path, ['-c', script], { timeout: 15_000 }, (error, stdout, stderr) => {
      if (error) reject(new SvcError('invalid-project', `could not ask ${python.path} for the runpod library: ${(stderr || error.message).trim()}`));
      else resolve(stdout.trim());
    });
  });
  const install = `install it with \`${python.path} -m pip install '${RUNPOD_REQUIREMENT}'\``;
  if (version === '') {
    throw new SvcError('invalid-project', `--provider runpod runs the provider's library, which ${python.path} (from ${python.source}) does not have: ${install}`);
  }
  if (!satisfies(version, `>=${RUNPOD_MINIMUM_VERSION}`)) {
    throw new SvcError('invalid-project', `--provider runpod needs ${RUNPOD_REQUIREMENT}, and ${python.path} has runpod ${version}: ${install}`);
  }
  return version;
}
