import { readdirSync, readFileSync, statSync, type Dirent, type Stats } from 'node:fs';
import { join } from 'node:path';
import {
  ALWAYS_IGNORED_DIRECTORIES,
  VIRTUALENV_MARKER,
  dockerignoreRules,
  gitignoreRules,
  isIgnored,
  type IgnoreRuleSet,
} from './ignore-rules.js';

export interface ProjectFile {
  /** Project-relative POSIX path. */
  path: string;
  /** Bytes. */
  size: number;
}

export interface ProjectListing {
  files: ProjectFile[];
  /** Ignore files that were honoured, project-relative. */
  ignoreFiles: string[];
}

/**
 * The project's files whose name `wanted` accepts, with their sizes, in no particular
 * order, as they would reach the image: skips version control, virtualenvs, caches, and
 * what `.gitignore` files (at any depth) and the root `.dockerignore` exclude. Symlinked
 * directories are not followed (no cycles); symlinked files are. Names are filtered before
 * any path is built or ignore rule tested: on a large tree those are the walk's cost.
 */
export function listProjectFiles(root: string, wanted: (name: string) => boolean): ProjectListing {
  const ignoreFiles: string[] = [];
  const rootRules: IgnoreRuleSet[] = [];
  const dockerignore = readTextIfPresent(join(root, '.dockerignore'));
  if (dockerignore !== null) {
    rootRules.push(dockerignoreRules(dockerignore));
    ignoreFiles.push('.dockerignore');
  }
  const files: ProjectFile[] = [];
  walk(root, '', rootRules, files, ignoreFiles, wanted);
  return { files, ignoreFiles: ignoreFiles.sort() };
}

function walk(
  absolute: string,
  relative: string,
  inherited: IgnoreRuleSet[],
  files: ProjectFile[],
  ignoreFiles: string[],
  wanted: (name: string) => boolean,
): void {
  let entries: Dirent[];
  try {
    entries = readdirSync(absolute, { withFileTypes: true });
  } catch {
    return; // unreadable directory: nothing in it can reach the image either
  }
  let hasGitignore = false;
  for (const entry of entries) {
    if (entry.name === VIRTUALENV_MARKER && relative !== '') return;
    if (entry.name === '.gitignore' && entry.isFile()) hasGitignore = true;
  }

  let ruleSets = inherited;
  if (hasGitignore) {
    const text = readTextIfPresent(`${absolute}/.gitignore`);
    if (text !== null) {
      ruleSets = [...inherited, gitignoreRules(relative, text)];
      ignoreFiles.push(relative === '' ? '.gitignore' : `${relative}/.gitignore`);
    }
  }

  for (const entry of entries) {
    const isDirectory = entry.isDirectory();
    if (!isDirectory && !wanted(entry.name)) continue;
    const path = relative === '' ? entry.name : `${relative}/${entry.name}`;
    if (isDirectory) {
      if (ALWAYS_IGNORED_DIRECTORIES.has(entry.name)) continue;
      if (ruleSets.length > 0 && isIgnored(ruleSets, path, true)) continue;
      walk(`${absolute}/${entry.name}`, path, ruleSets, files, ignoreFiles, wanted);
      continue;
    }
    if (!entry.isFile() && !entry.isSymbolicLink()) continue;
    if (ruleSets.length > 0 && isIgnored(ruleSets, path, false)) continue;
    const stats = statIfPresent(`${absolute}/${entry.name}`);
    if (stats === null || !stats.isFile()) continue; // dangling link, or a link to a directory
    files.push({ path, size: stats.size });
  }
}

function readTextIfPresent(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

function statIfPresent(path: string): Stats | null {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}
