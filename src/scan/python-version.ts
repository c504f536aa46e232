import { satisfies, validRange } from '@renovatebot/pep440';
import { SvcError } from '../svc-error.js';
import type { Diagnostic } from './diagnostic.js';
import { poetryToPep440 } from './poetry-constraint.js';

/** Python versions svc's toolkit and base images support, oldest first. */
export const SUPPORTED_PYTHON_VERSIONS = ['3.10', '3.11', '3.12', '3.13'] as const;
export const DEFAULT_PYTHON_VERSION = '3.10';

/** Where a project can state its Python version, in the order svc believes them. */
export interface PythonVersionHints {
  /** `.python-version` (pyenv): first non-comment line, e.g. "3.11.4", "3.11", or an environment name such as "ml-env". */
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
  /**
   * Every supported version the project allows, `version` among them: the one it names, the
   * ones inside its range, or all of them when it says nothing.
   */
  admits: readonly string[];
  /** A `.python-version` that names a pyenv environment rather than a version, and so was passed over. */
  diagnostics: Diagnostic[];
}

/** A version and where it is stated. */
type StatedVersion = Pick<PythonVersionChoice, 'version' | 'source' | 'admits'>;

const PYTHON_VERSION_FILE = '.python-version';

/**
 * A CPython version as pyenv and runtime.txt write it: "3.11", "3.11.4", "3.13t", "python3.11",
 * or a pyenv-virtualenv made from one, "3.11.4/envs/ml-env".
 */
const CPYTHON_VERSION = /^(?:cpython-|python)?(\d+)\.(\d+)(?:\.\d+)?[a-z0-9.+-]*(?:\/envs\/[^/]+)?$/i;
/** Meant as a version, so checked rather than passed over: "3.8" and "2.7" stay errors. */
const LOOKS_LIKE_VERSION = /^(?:cpython-|python)?\d/i;
/**
 * pyenv's build definitions for interpreters other than CPython (pyenv,
 * plugins/python-build/share/python-build/): real versions, but none svc can build.
 */
const OTHER_INTERPRETERS = /^(?:pypy|graalpy|graalpython|jython|ironpython|stackless|pyston|micropython)/i;

/**
 * The image's Python minor version: the first hint that says something wins. An exact
 * version (.python-version, runtime.txt) is taken as is; a range (requires-python, Poetry)
 * gives the oldest supported version inside it, the one most dependencies are tested on.
 * pyenv lets `.python-version` name a virtualenv or `system` instead of a version; such a
 * name says nothing svc can read, so the next hint decides.
 */
export function choosePythonVersion(hints: PythonVersionHints): PythonVersionChoice {
  const pyenvLine = firstLine(hints.pythonVersionFile);
  if (pyenvLine !== null && !namesEnvironment(pyenvLine)) {
    const exact = readExact(pyenvLine, PYTHON_VERSION_FILE);
    // pyenv's `3.13t` is the free-threaded build, which no base image ships.
    const freeThreaded = /^(?:cpython-|python)?\d+\.\d+(?:\.\d+)?t$/i.test(pyenvLine)
      ? [{ file: PYTHON_VERSION_FILE, message: `'${pyenvLine}' asks for free-threaded CPython; the image gets Python ${exact.version} with the GIL` }]
      : [];
    return { ...exact, diagnostics: freeThreaded };
  }
  const choice = chooseFromOtherHints(hints);
  if (pyenvLine === null) return { ...choice, diagnostics: [] };
  // Which version the image gets may still follow the base image (see python_version_source).
  const decides = choice.source === 'default' ? "svc's default" : choice.source;
  const message = `'${pyenvLine}' names a pyenv environment (a virtualenv or \`system\`), not a Python version; passed over for ${decides}`;
  return { ...choice, diagnostics: [{ file: PYTHON_VERSION_FILE, message }] };
}

function chooseFromOtherHints(hints: PythonVersionHints): StatedVersion {
  if (hints.requiresPython?.trim()) {
    return oldestWithin([hints.requiresPython.trim()], 'pyproject.toml', 'project.requires-python');
  }
  const runtimeLine = firstLine(hints.runtimeTxt);
  if (runtimeLine !== null) return readExact(runtimeLine.replace(/^python-/, ''), 'runtime.txt');
  if (hints.poetryPython?.trim()) {
    const converted = poetryToPep440(hints.poetryPython.trim());
    if ('error' in converted) {
      throw invalid('pyproject.toml', 'tool.poetry.dependencies.python', converted.error);
    }
    return oldestWithin(converted.alternatives, 'pyproject.toml', 'tool.poetry.dependencies.python');
  }
  return { version: DEFAULT_PYTHON_VERSION, source: 'default', admits: SUPPORTED_PYTHON_VERSIONS };
}

/** The first line that is neither blank nor a comment, trimmed. */
function firstLine(text: string | null | undefined): string | null {
  return (
    text
      ?.split(/\r?\n/)
      .map((candidate) => candidate.trim())
      .find((candidate) => candidate !== '' && !candidate.startsWith('#')) ?? null
  );
}

/**
 * pyenv takes any other name as a directory of its own: a virtualenv, `system`, or a
 * distribution such as anaconda3-2024.02 whose name does not tell its Python.
 */
function namesEnvironment(line: string): boolean {
  return !LOOKS_LIKE_VERSION.test(line) && !OTHER_INTERPRETERS.test(line);
}

function readExact(line: string, file: string): StatedVersion {
  const match = CPYTHON_VERSION.exec(line);
  if (!match || match[1] !== '3') throw invalid(file, undefined, `'${line}' is not a CPython 3 version`);
  const version = `${match[1]}.${match[2]}`;
  if (!(SUPPORTED_PYTHON_VERSIONS as readonly string[]).includes(version)) {
    throw invalid(file, undefined, `Python ${version} is not supported; svc supports ${supportedList()}`);
  }
  return { version, source: file, admits: [version] };
}

function oldestWithin(alternatives: string[], file: string, field: string): StatedVersion {
  const unreadable = alternatives.find((range) => range !== '' && !validRange(range));
  if (unreadable !== undefined) throw invalid(file, field, `'${unreadable}' is not a PEP 440 version range`);
  // Check the newest patch release too: "<3.11.4" still admits 3.11.
  const admits = SUPPORTED_PYTHON_VERSIONS.filter((version) =>
    alternatives.some((range) => satisfies(`${version}.0`, range) || satisfies(`${version}.99`, range)),
  );
  const [oldest] = admits;
  if (oldest !== undefined) return { version: oldest, source: `${file}: ${field}`, admits };
  const wanted = alternatives.join(' || ');
  throw invalid(file, field, `'${wanted}' excludes every Python version svc supports (${supportedList()})`);
}

function supportedList(): string {
  return SUPPORTED_PYTHON_VERSIONS.join(', ');
}

function invalid(file: string, field: string | undefined, message: string): SvcError {
  return new SvcError('invalid-project', message, { file, field });
}
