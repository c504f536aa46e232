import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { SvcError } from '../svc-error.js';
import catalog from '../build/base-images.json' with { type: 'json' };
import type { BaseImageCatalog } from './base-image.js';
import { buildManifest, type ProjectSnapshot } from './build-manifest.js';
import type { Manifest } from './manifest.js';
import { listProjectFiles } from './project-files.js';
import { mightBeModelFile } from './model-files.js';
import { loadPythonParser } from './python-parser.js';

export const DEFAULT_ENTRYPOINT = 'service.py';

export interface ScanRequest {
  entrypoint?: string | undefined;
}

export interface ScanResult {
  root: string;
  manifest: Manifest;
}

/**
 * `svc scan`: locate the project, read its files (the only I/O), and derive the manifest
 * in pure stages. `target` is the project directory or the service file itself.
 */
export async function scanProject(target: string, request: ScanRequest = {}): Promise<ScanResult> {
  const { root, entrypoint } = locateProject(target, request.entrypoint);
  // The grammar compiles on V8's background threads while this thread walks the tree.
  const parserLoading = loadPythonParser();
  const snapshot = readSnapshot(root, entrypoint);
  const parser = await parserLoading;
  return { root, manifest: buildManifest(snapshot, parser, catalog as BaseImageCatalog) };
}

function locateProject(target: string, entrypointOption: string | undefined): { root: string; entrypoint: string } {
  const absolute = resolve(target);
  if (!existsSync(absolute)) throw new SvcError('not-found', `no such file or directory: ${target}`);
  const targetIsFile = statSync(absolute).isFile();
  if (targetIsFile && entrypointOption !== undefined) {
    throw new SvcError('usage', `give either a service file (${target}) or --entrypoint, not both`);
  }
  const root = targetIsFile ? dirname(absolute) : absolute;
  const entrypointPath = resolve(root, targetIsFile ? basename(absolute) : (entrypointOption ?? DEFAULT_ENTRYPOINT));
  const entrypoint = relative(root, entrypointPath).split(sep).join('/');
  if (entrypoint.startsWith('..') || isAbsolute(entrypoint)) {
    throw new SvcError('usage', `the entrypoint must be inside the project directory ${root}`, { file: entrypointOption });
  }
  if (!existsSync(entrypointPath) || !statSync(entrypointPath).isFile()) {
    const hint = entrypointOption === undefined ? '; write one, or name the service file with --entrypoint FILE' : '';
    throw new SvcError('invalid-project', `no ${entrypoint} in ${root}${hint}`);
  }
  if (!entrypoint.endsWith('.py')) {
    throw new SvcError('usage', 'the entrypoint must be a Python file (.py)', { file: entrypoint });
  }
  return { root, entrypoint };
}

function readSnapshot(root: string, entrypoint: string): ProjectSnapshot {
  const readText = (path: string): string | null => {
    try {
      return readFileSync(resolve(root, path), 'utf8');
    } catch {
      return null;
    }
  };
  return {
    directoryName: basename(root),
    entrypoint,
    readText,
    hasEnvFile: existsSync(resolve(root, '.env')),
    listing: listProjectFiles(root, mightBeModelFile),
  };
}
