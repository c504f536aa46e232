import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { SvcError } from './svc-error.js';

export const DEFAULT_ENTRYPOINT = 'service.py';

export interface ProjectLocation {
  /** Absolute project directory. */
  root: string;
  /** The service file, relative to the root, with forward slashes. */
  entrypoint: string;
}

/**
 * The project and its service file from what a command was given: a directory (with
 * `--entrypoint FILE`, else the one the last scan recorded, else `service.py`), or the
 * service file itself. Shared by every command so they agree on what a project is.
 */
export function locateProject(target: string, entrypointOption: string | undefined): ProjectLocation {
  const absolute = resolve(target);
  if (!existsSync(absolute)) throw new SvcError('not-found', `no such file or directory: ${target}`);
  const targetIsFile = statSync(absolute).isFile();
  if (targetIsFile && entrypointOption !== undefined) {
    throw new SvcError('usage', `give either a service file (${target}) or --entrypoint, not both`);
  }
  const root = targetIsFile ? dirname(absolute) : absolute;
  const entrypointFile = targetIsFile ? basename(absolute) : (entrypointOption ?? recordedEntrypoint(root) ?? DEFAULT_ENTRYPOINT);
  const entrypointPath = resolve(root, entrypointFile);
  const entrypoint = relative(root, entrypointPath).split(sep).join('/');
  // A `..` segment leads out; a name that merely starts with dots (`..svc.py`) is inside.
  if (entrypoint.split('/').includes('..') || isAbsolute(entrypoint)) {
    throw new SvcError('usage', `the entrypoint must be inside the project directory ${root}`, { file: entrypointOption });
  }
  if (!existsSync(entrypointPath) || !statSync(entrypointPath).isFile()) {
    const hint = entrypointOption === undefined ? '; write one, or name the service file with --entrypoint FILE' : '';
    throw new SvcError('invalid-project', `no ${entrypoint} in ${root}${hint}`);
  }
  if (!entrypoint.endsWith('.py')) {
    throw new SvcError('usage', 'the entrypoint must be a Python file (.py)', { file: entrypoint });
  }
  // A link to a file elsewhere reads here, but no image has it: Docker's build context keeps
  // the link, not the file it points to.
  const linkedFile = realpathSync(entrypointPath);
  if (relative(realpathSync(root), linkedFile).split(sep).includes('..')) {
    throw new SvcError('usage', `the entrypoint ${entrypoint} is a link to ${linkedFile}, outside the project directory ${root}; the image would not have that file: copy it into the project`, { file: entrypoint });
  }
  return { root, entrypoint };
}


/** What the last scan recorded in apipod-deploy/apipod.json, as far as it can be read; empty without one. */
function recordedManifest(root: string): { entrypoint?: unknown; python_version?: unknown; python_version_source?: unknown } {
  try {
    const manifest: unknown = JSON.parse(readFileSync(join(root, 'apipod-deploy', 'apipod.json'), 'utf8'));
    return typeof manifest === 'object' && manifest !== null ? manifest : {};
  } catch {
    return {};
  }
}

/**
 * The service file `svc scan --entrypoint FILE` recorded in apipod-deploy/apipod.json, while
 * it is there: `svc build` and `svc start` then need not be told again.
 */
function recordedEntrypoint(root: string): string | undefined {
  const recorded = recordedManifest(root).entrypoint;
  return typeof recorded === 'string' && recorded !== DEFAULT_ENTRYPOINT && existsSync(resolve(root, recorded)) ? recorded : undefined;
}

/** The Python the last scan chose for the image (`3.10`) and why, when there was a scan. */
export function recordedImagePython(root: string): { version: string; source: string } | null {
  const { python_version: version, python_version_source: source } = recordedManifest(root);
  return typeof version === 'string' && typeof source === 'string' ? { version, source } : null;
}
