import { SvcError } from '../svc-error.js';

/**
 * Values from the project that the Dockerfile uses as they are, checked against their
 * grammar so there is nothing left to quote: a value that fails names its field and stops
 * the build, rather than being passed on to the engine or a shell.
 */

/** Debian policy 5.6.1: lower case letters, digits, `+ - .`, at least two characters, starting alphanumeric. */
const DEBIAN_PACKAGE = /^[a-z0-9][a-z0-9+.-]+$/;
const PYTHON_MINOR = /^3\.\d{1,2}$/;

export function checkDebianPackage(name: string, field: string): string {
  if (!DEBIAN_PACKAGE.test(name)) throw invalid(field, name, 'is not a Debian package name');
  return name;
}

export function checkPythonVersion(version: string, field: string): string {
  if (!PYTHON_MINOR.test(version)) throw invalid(field, version, 'is not a Python version like 3.11');
  return version;
}

/**
 * The service file, relative to the project root: forward slashes, no `..`, no absolute
 * path, no control characters or backslashes, ending in `.py`. It reaches the image only
 * inside the exec-form CMD, which is JSON.
 */
export function checkEntrypoint(path: string, field: string): string {
  const segments = path.split('/');
  const fine =
    path.endsWith('.py') &&
    !path.startsWith('/') &&
    !/[\u0000-\u001f\u007f\\]/.test(path) &&
    segments.every((segment) => segment !== '' && segment !== '..' && segment !== '.');
  if (!fine) throw invalid(field, path, 'is not a relative path to a .py file inside the project');
  return path;
}

export function checkChoice<T extends string>(value: string, allowed: readonly T[], field: string): T {
  if (!(allowed as readonly string[]).includes(value)) throw invalid(field, value, `is not one of ${allowed.join(', ')}`);
  return value as T;
}

function invalid(field: string, value: string, why: string): SvcError {
  const shown = JSON.stringify(value.length > 120 ? `${value.slice(0, 120)}…` : value);
  return new SvcError('invalid-project', `${shown} ${why}`, { file: 'apipod-deploy/apipod.json', field });
}
