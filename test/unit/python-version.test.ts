import { describe, expect, it } from 'vitest';
import { choosePythonVersion } from '../../src/scan/python-version.js';
import { SvcError } from '../../src/svc-error.js';

function failure(run: () => unknown): SvcError {
  try {
    run();
  } catch (error) {
    if (error instanceof SvcError) return error;
    throw error;
  }
  throw new Error('expected an SvcError');
}

describe('choosing the Python version', () => {
  it('defaults to 3.10 when the project says nothing', () => {
    expect(choosePythonVersion({})).toEqual({ version: '3.10', source: 'default', admits: ['3.10', '3.11', '3.12', '3.13'], diagnostics: [] });
  });

  it('takes .python-version first, to the minor version', () => {
    expect(choosePythonVersion({ pythonVersionFile: '# pyenv\n3.11.7\n', requiresPython: '>=3.12' })).toEqual({
      version: '3.11',
      source: '.python-version',
      admits: ['3.11'],
      diagnostics: [],
    });
  });

  it('says that a free-threaded build (3.13t) gets the usual CPython', () => {
    expect(choosePythonVersion({ pythonVersionFile: '3.13t\n' })).toMatchObject({
      version: '3.13',
      diagnostics: [{ file: '.python-version', message: "'3.13t' asks for free-threaded CPython; the image gets Python 3.13 with the GIL" }],
    });
    expect(choosePythonVersion({ pythonVersionFile: '3.13.1\n' }).diagnostics).toEqual([]);
  });

  it('raises requires-python >=3.8 to the oldest supported version, 3.10', () => {
    expect(choosePythonVersion({ requiresPython: '>=3.8' })).toEqual({
      version: '3.10',
      source: 'pyproject.toml: project.requires-python',
      admits: ['3.10', '3.11', '3.12', '3.13'],
      diagnostics: [],
    });
  });

  it('picks the oldest supported version inside a range', () => {
    expect(choosePythonVersion({ requiresPython: '>=3.11,<3.13' }).version).toBe('3.11');
    expect(choosePythonVersion({ requiresPython: '~=3.12.1' }).version).toBe('3.12');
    expect(choosePythonVersion({ requiresPython: '<3.11.4,>=3.11' }).version).toBe('3.11');
    // The others it admits, for a base image that ships one of them.
    expect(choosePythonVersion({ requiresPython: '>=3.10,<3.13' }).admits).toEqual(['3.10', '3.11', '3.12']);
  });

  it('reads runtime.txt in the Heroku form', () => {
    expect(choosePythonVersion({ runtimeTxt: 'python-3.12.3\n' })).toEqual({ version: '3.12', source: 'runtime.txt', admits: ['3.12'], diagnostics: [] });
  });

  it("reads Poetry's python constraint", () => {
    expect(choosePythonVersion({ poetryPython: '^3.11' })).toEqual({
      version: '3.11',
      source: 'pyproject.toml: tool.poetry.dependencies.python',
      admits: ['3.11', '3.12', '3.13'],
      diagnostics: [],
    });
    expect(choosePythonVersion({ poetryPython: '>=3.9,<3.12' }).version).toBe('3.10');
  });

  it('passes over a .python-version that names a pyenv virtualenv or `system`, with a warning', () => {
    expect(choosePythonVersion({ pythonVersionFile: 'ml-env\n', requiresPython: '>=3.11' })).toEqual({
      version: '3.11',
      source: 'pyproject.toml: project.requires-python',
      admits: ['3.11', '3.12', '3.13'],
      diagnostics: [
        {
          file: '.python-version',
          message:
            "'ml-env' names a pyenv environment (a virtualenv or `system`), not a Python version; " +
            'passed over for pyproject.toml: project.requires-python',
        },
      ],
    });
    const system = choosePythonVersion({ pythonVersionFile: 'system' });
    expect([system.version, system.source]).toEqual(['3.10', 'default']);
    expect(system.diagnostics.map((diagnostic) => diagnostic.message)).toEqual([
      "'system' names a pyenv environment (a virtualenv or `system`), not a Python version; passed over for svc's default",
    ]);
    expect(choosePythonVersion({ pythonVersionFile: 'ml-env', runtimeTxt: 'python-3.12.1' }).source).toBe('runtime.txt');
  });

  it('reads the version a pyenv virtualenv was made from when .python-version names its full path', () => {
    expect(choosePythonVersion({ pythonVersionFile: '3.12.4/envs/ml-env' })).toEqual({
      version: '3.12',
      source: '.python-version',
      admits: ['3.12'],
      diagnostics: [],
    });
  });

  it('is a clear error when the project excludes every supported version', () => {
    const error = failure(() => choosePythonVersion({ requiresPython: '<3.10' }));
    expect(error.message).toBe("'<3.10' excludes every Python version svc supports (3.10, 3.11, 3.12, 3.13)");
    expect(error.location).toEqual({ file: 'pyproject.toml', field: 'project.requires-python' });
  });

  it('rejects an unsupported exact version and names the file, whatever else the project says', () => {
    const error = failure(() => choosePythonVersion({ pythonVersionFile: '3.9.18' }));
    expect(error.message).toContain('Python 3.9 is not supported');
    expect(error.location.file).toBe('.python-version');
    expect(failure(() => choosePythonVersion({ pythonVersionFile: '3.8', requiresPython: '>=3.8' })).message).toContain(
      'Python 3.8 is not supported',
    );
    expect(failure(() => choosePythonVersion({ pythonVersionFile: '2.7.18', requiresPython: '>=3.10' })).message).toBe(
      "'2.7.18' is not a CPython 3 version",
    );
  });

  it('rejects text that is not a version', () => {
    expect(failure(() => choosePythonVersion({ pythonVersionFile: 'pypy3.10' })).message).toContain(
      "'pypy3.10' is not a CPython 3 version",
    );
    expect(failure(() => choosePythonVersion({ requiresPython: '>=three' })).message).toContain(
      'is not a PEP 440 version range',
    );
  });
});
