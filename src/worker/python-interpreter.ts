import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve as resolvePath } from 'node:path';
import { SvcError } from '../svc-error.js';

/** The oldest Python the apipod toolkit runs on. */
export const MINIMUM_PYTHON: readonly [number, number] = [3, 10];

export interface PythonCandidate {
  path: string;
  /** Where the choice came from, for messages: "--python", "$VIRTUAL_ENV", ... */
  source: string;
}

export interface PythonInterpreter extends PythonCandidate {
  /** e.g. "3.11.7" */
  version: string;
}

/** What the candidate says of itself: its version, and the executable it runs as (`sys.executable`). */
export interface PythonReport {
  version: string;
  executable: string;
}

export interface PythonChoiceInputs {
  /** `--python PATH` from the command line. */
  explicit?: string | undefined;
  projectDir: string;
  env: NodeJS.ProcessEnv;
}

/**
 * The interpreter to run workers with, in the order a user would expect to be obeyed:
 * `--python`, the activated virtualenv, the project's `.venv`, then `python3` on PATH.
 */
export function choosePythonCandidate(inputs: PythonChoiceInputs): PythonCandidate {
  // A relative path is the user's, from where they stand; the workers start in the project directory.
  if (inputs.explicit) return { path: inputs.explicit.includes('/') ? resolvePath(inputs.explicit) : inputs.explicit, source: '--python' };
  if (inputs.env.VIRTUAL_ENV) return { path: join(inputs.env.VIRTUAL_ENV, 'bin', 'python'), source: '$VIRTUAL_ENV' };
  const projectVenv = join(inputs.projectDir, '.venv', 'bin', 'python');
  if (existsSync(projectVenv)) return { path: projectVenv, source: "the project's .venv" };
  return { path: 'python3', source: 'PATH' };
}

/**
 * Chooses the interpreter and checks that it runs and is new enough, with one process. Its
 * `path` is then the executable that process ran as: a version manager's shim (pyenv's
 * `python3`, a few hundred milliseconds of shell scripts each time) picks the project's
 * Python once, here, and each worker starts that Python directly. `svc start` without
 * --reload asks its first worker instead (worker-process.ts), which saves this process.
 */
export async function findPythonInterpreter(inputs: PythonChoiceInputs): Promise<PythonInterpreter> {
  const candidate = choosePythonCandidate(inputs);
  return checkedInterpreter(candidate, await readPython(candidate, inputs.projectDir));
}

/** The candidate as it described itself, refused when it is older than MINIMUM_PYTHON or its report (then all in `version`) is no version. */
export function checkedInterpreter(candidate: PythonCandidate, { version, executable }: PythonReport): PythonInterpreter {
  if (!/^\d+\.\d+\.\d+$/.test(version)) {
    throw new SvcError('invalid-project', `${describe(candidate)} printed '${version}' instead of its version`);
  }
  const [major = 0, minor = 0] = version.split('.').map(Number);
  const [minimumMajor, minimumMinor] = MINIMUM_PYTHON;
  if (major < minimumMajor || (major === minimumMajor && minor < minimumMinor)) {
    throw new SvcError(
      'invalid-project',
      `${describe(candidate)} is Python ${version}; svc needs Python ${minimumMajor}.${minimumMinor} or newer` +
        ' (choose another with --python)',
    );
  }
  return { ...candidate, path: executable || candidate.path, version };
}

/** The candidate gave no report: it does not exist (`missing`), or it failed with `detail`. */
export function unavailableInterpreter(candidate: PythonCandidate, missing: boolean, detail: string): SvcError {
  return new SvcError(missing ? 'not-found' : 'invalid-project', `${describe(candidate)} ${missing ? 'was not found' : `did not run: ${detail}`}`);
}

/**
 * Asked in the project directory, where the workers run: there a version manager's shim
 * (pyenv's `python3`) picks the project's `.python-version`, as it will for them.
 */
function readPython(candidate: PythonCandidate, projectDir: string): Promise<PythonReport> {
  const script = "import sys; print('%d.%d.%d' % sys.version_info[:3]); print(sys.executable)";
  return new Promise((resolve, reject) => {
    execFile(candidate.path, ['-c', script], { cwd: projectDir, timeout: 15_000 }, (error, stdout, stderr) => {
      if (error) {
        const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
        reject(unavailableInterpreter(candidate, missing, (stderr || stdout).trim() || error.message));
        return;
      }
      const [version = '', executable = ''] = stdout.split('\n').map((line) => line.trim());
      resolve(/^\d+\.\d+\.\d+$/.test(version) ? { version, executable } : { version: stdout.trim(), executable: '' });
    });
  });
}

function describe(candidate: PythonCandidate): string {
  return `Python interpreter '${candidate.path}' (from ${candidate.source})`;
}
