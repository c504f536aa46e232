import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SvcError } from '../../src/svc-error.js';
import { choosePythonCandidate, findPythonInterpreter } from '../../src/worker/python-interpreter.js';

function projectWithVenv(): string {
  const project = mkdtempSync(join(tmpdir(), 'svc-python-'));
  mkdirSync(join(project, '.venv', 'bin'), { recursive: true });
  writeFileSync(join(project, '.venv', 'bin', 'python'), '');
  return project;
}

/** A stand-in interpreter: a shell script that prints `output` whatever it is asked. */
function fakePython(output: string, exitCode = 0): string {
  const path = join(mkdtempSync(join(tmpdir(), 'svc-fake-python-')), 'python');
  writeFileSync(path, `#!/bin/sh\necho '${output}'\nexit ${exitCode}\n`);
  chmodSync(path, 0o755);
  return path;
}

async function failure(run: () => Promise<unknown>): Promise<SvcError> {
  const error = await run().catch((caught: unknown) => caught);
  if (error instanceof SvcError) return error;
  throw new Error(`expected an SvcError, got ${String(error)}`);
}

describe('choosing the Python interpreter', () => {
  const project = projectWithVenv();

  it('obeys --python first', () => {
    expect(choosePythonCandidate({ explicit: '/opt/py/bin/python', projectDir: project, env: { VIRTUAL_ENV: '/venv' } })).toEqual({
      path: '/opt/py/bin/python',
      source: '--python',
    });
  });

  it('takes the activated virtualenv next', () => {
    expect(choosePythonCandidate({ projectDir: project, env: { VIRTUAL_ENV: '/venv' } })).toEqual({
      path: '/venv/bin/python',
      source: '$VIRTUAL_ENV',
    });
  });

  it("takes the project's .venv when it exists", () => {
    expect(choosePythonCandidate({ projectDir: project, env: {} })).toEqual({
      path: join(project, '.venv', 'bin', 'python'),
      source: "the project's .venv",
    });
  });

  it('falls back to python3 on PATH', () => {
    expect(choosePythonCandidate({ projectDir: tmpdir(), env: {} })).toEqual({ path: 'python3', source: 'PATH' });
  });
});

describe('checking the Python interpreter', () => {
  it('accepts the python3 on PATH and reports its version', async () => {
    const interpreter = await findPythonInterpreter({ projectDir: tmpdir(), env: {} });
    expect(interpreter.source).toBe('PATH');
    expect(interpreter.version).toMatch(/^3\.\d+\.\d+$/);
  });

  it('refuses a Python older than 3.10, saying which and where from', async () => {
    const old = fakePython('3.8.10');
    const error = await failure(() => findPythonInterpreter({ explicit: old, projectDir: tmpdir(), env: {} }));
    expect(error.message).toBe(
      `Python interpreter '${old}' (from --python) is Python 3.8.10; svc needs Python 3.10 or newer (choose another with --python)`,
    );
  });

  it('asks the interpreter in the project directory, where a version shim (pyenv) reads the project\'s .python-version', async () => {
    const shim = join(mkdtempSync(join(tmpdir(), 'svc-shim-')), 'python3');
    writeFileSync(shim, '#!/bin/sh\ncat .python-version 2>/dev/null || echo 3.8.18\n');
    chmodSync(shim, 0o755);
    const project = mkdtempSync(join(tmpdir(), 'svc-pinned-'));
    writeFileSync(join(project, '.python-version'), '3.12.4\n');
    expect((await findPythonInterpreter({ explicit: shim, projectDir: project, env: {} })).version).toBe('3.12.4');
  });

  it('starts workers with the Python a shim chose, so the shim (pyenv: shell scripts) runs once, not once per worker', async () => {
    const shim = join(mkdtempSync(join(tmpdir(), 'svc-shim-')), 'python3');
    writeFileSync(shim, '#!/bin/sh\necho 3.12.4\necho /opt/pythons/3.12.4/bin/python3.12\n');
    chmodSync(shim, 0o755);
    const interpreter = await findPythonInterpreter({ explicit: shim, projectDir: tmpdir(), env: {} });
    expect([interpreter.path, interpreter.version, interpreter.source]).toEqual(['/opt/pythons/3.12.4/bin/python3.12', '3.12.4', '--python']);
  });

  it('takes a relative --python from where the user stands, not from the project directory', () => {
    expect(choosePythonCandidate({ explicit: 'venv/bin/python', projectDir: '/elsewhere', env: {} }).path).toBe(join(process.cwd(), 'venv/bin/python'));
  });

  it('says so when the interpreter does not exist', async () => {
    const error = await failure(() => findPythonInterpreter({ projectDir: tmpdir(), env: { VIRTUAL_ENV: '/no/such/venv' } }));
    expect(error.code).toBe('not-found');
    expect(error.message).toBe("Python interpreter '/no/such/venv/bin/python' (from $VIRTUAL_ENV) was not found");
  });

  it('says so when the interpreter fails to run', async () => {
    const broken = fakePython('Fatal Python error: init_fs_encoding', 1);
    const error = await failure(() => findPythonInterpreter({ explicit: broken, projectDir: tmpdir(), env: {} }));
    expect(error.message).toContain('did not run');
  });
});
