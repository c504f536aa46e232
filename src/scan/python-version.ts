import { satisfies, validRange } from '@renovatebot/pep440';
import { SvcError } from '../svc-error.js';
import { poetryToPep440 } from './poetry-constraint.js';

/** Python versions svc's toolkit and base images support, oldest first. */
export const SUPPORTED_PYTHON_VERSIONS = ['3.10', '3.11', '3.12', '3.13'] as const;
export const DEFAULT_PYTHON_VERSION = '3.10';

/** Where a project can state its Python version, in the order svc believes them. */
export interface PythonVersionHints {
  /** `.python-version` (pyenv): first non-comment line, e.g. "3.11.4" or "3.11". */
  pythonVersionFile?: string | null;
  /** pyproject.toml `[project] requires-python`, PEP 440, e.g. ">=3.10,<3.13". */
  requiresPython?: string | null;
  /** `runtime.txt` (Heroku style): "python-3.11.4". */
  runtimeTxt?: string | null;
  /** pyproject.toml `[tool.poetry.dependencies] python`, Poetry syntax, e.g. "^3.10". */
  poetryPython?: string | null;
}

export interface PythonVersionChoice {
  version: string;
  source: string;
}

/**
 * The image's Python minor version: the first hint that says something wins. An exact
 * version (.python-version, runtime.txt) is taken as is; a range (requires-python, Poetry)
 * gives the oldest supported version inside it, the one most dependencies are tested on.
 */
export function choosePythonVersion(hints: PythonVersionHints): PythonVersionChoice {
  const exactFile = readExact(hints.pythonVersionFile, '.python-version', (text) => text);
  if (exactFile) return exactFile;
  if (hints.requiresPython?.trim()) {
    return oldestWithin([hints.requiresPython.trim()], 'pyproject.toml', 'project.requires-python');
  }
  const runtime = readExact(hints.runtimeTxt, 'runtime.txt', (text) => text.replace(/^python-/, ''));
  if (runtime) return runtime;
  if (hints.poetryPython?.trim()) {
    const converted = poetryToPep440(hints.poetryPython.trim());
    if ('error' in converted) {
      throw invalid('pyproject.toml', 'tool.poetry.dependencies.python', converted.error);
    }
    return oldestWithin(converted.alternatives, 'pyproject.toml', 'tool.poetry.dependencies.python');
  }
  return { version: DEFAULT_PYTHON_VERSION, source: 'default' };
}

function readExact(
  text: string | null | undefined,
  file: string,
  strip: (line: string) => string,
): PythonVersionChoice | null {
  const line = text
    ?.split(/\r?\n/)
    .map((candidate) => candidate.trim())
    .find((candidate) => candidate !== '' && !candidate.startsWith('#'));
  if (!line) return null;
  const match = /^(?:cpython-|python)?(3)\.(\d+)(?:\.\d+)?(?:[a-z0-9.+-]*)?$/i.exec(strip(line));
  if (!match) throw invalid(file, undefined, `'${line}' is not a CPython 3 version`);
  const version = `${match[1]}.${match[2]}`;
  if (!(SUPPORTED_PYTHON_VERSIONS as readonly string[]).includes(version)) {
    throw invalid(file, undefined, `Python ${version} is not supported; svc supports ${supportedList()}`);
  }
  return { version, source: file };
}

function oldestWithin(alternatives: string[], file: string, field: string): PythonVersionChoice {
  const unreadable = alternatives.find((range) => range !== '' && !validRange(range));
  if (unreadable !== undefined) throw invalid(file, field, `'${unreadable}' is not a PEP 440 version range`);
  for (const version of SUPPORTED_PYTHON_VERSIONS) {
    // Check the newest patch release too: "<3.11.4" still admits 3.11.
    const admitted = alternatives.some(
      (range) => satisfies(`${version}.0`, range) || satisfies(`${version}.99`, range),
    );
    if (admitted) return { version, source: `${file}: ${field}` };
  }
  const wanted = alternatives.join(' || ');
  throw invalid(file, field, `'${wanted}' excludes every Python version svc supports (${supportedList()})`);
}

function supportedList(): string {
  return SUPPORTED_PYTHON_VERSIONS.join(', ');
}

function invalid(file: string, field: string | undefined, message: string): SvcError {
  return new SvcError('invalid-project', message, { file, field });
}
