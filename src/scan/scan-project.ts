import { existsSync, lstatSync, readFileSync, statSync } from 'node:fs';
import { basename, resolve, sep } from 'node:path';
import { locateProject } from '../project-location.js';
import { BASE_IMAGE_CATALOG } from '../image/base-image-catalog.js';
import { buildManifest, type ProjectSnapshot } from './build-manifest.js';
import type { Manifest } from './manifest.js';
import { listProjectFiles } from './project-files.js';
import type { ReadBytes } from './project-text.js';
import { mightBeModelFile } from './model-files.js';
import { loadPythonParser } from './python-parser.js';

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
  const snapshot = readSnapshot(root, entrypoint);
  // After the walk, not beside it: loading the grammar (~25 ms) is nearly all this thread's
  // work, compiling web-tree-sitter and running its WebAssembly, and the synchronous walk
  // would hold back its every step anyway. A walk that yielded to it measured no faster.
  const parser = await loadPythonParser();
  return { root, manifest: buildManifest(snapshot, parser, BASE_IMAGE_CATALOG) };
}

function readSnapshot(root: string, entrypoint: string): ProjectSnapshot {
  const readBytes: ReadBytes = (path) => {
    const full = resolve(root, path);
    try {
      // Only regular files: reading a FIFO would wait forever, and a directory is no requirements file.
      const stats = statSync(full);
      if (!stats.isFile()) return { unreadable: `is ${stats.isDirectory() ? 'a directory' : 'not a regular file'}, not a file svc can read` };
      return readFileSync(full);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'an error';
      if (code !== 'ENOENT' && code !== 'ENOTDIR') return { unreadable: `cannot be read (${code})` };
      return isSymbolicLink(full) ? { unreadable: 'is a symbolic link to nothing' } : null;
    }
  };
  return {
    root: root.split(sep).join('/'),
    directoryName: basename(root),
    entrypoint,
    readBytes,
    hasEnvFile: existsSync(resolve(root, '.env')),
    listing: listProjectFiles(root, mightBeModelFile),
  };
}

function isSymbolicLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}
