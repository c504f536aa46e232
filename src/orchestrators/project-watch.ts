import { existsSync, readdirSync, statSync, watch, type FSWatcher } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { ALWAYS_IGNORED_DIRECTORIES, VIRTUALENV_MARKER } from '../scan/ignore-rules.js';

/** An editor's save is several events (a temporary file, a rename, a write): one reload after they settle. */
const QUIET_MS = 300;

/** The files whose change restarts the workers: Python code, and what lists its dependencies. */
export function isReloadTrigger(name: string): boolean {
  return name.endsWith('.py') || /^requirements.*\.txt$/.test(name) || name === 'pyproject.toml';
}

export interface ProjectWatch {
  close(): void;
}

/**
 * Calls `onChange` with the project-relative paths of the Python files and requirements
 * that changed, once the changes have been quiet for a moment. Directories a scan never
 * reads (tools' directories, virtualenvs, apipod-deploy) are not watched.
 *
 * One non-recursive fs.watch per directory rather than fs.watch's recursive mode: on Linux
 * that mode walks and watches every file of the tree, a virtualenv's tens of thousands
 * included (20,000 files: +74 MB of memory), and has no way to leave a directory out.
 */
export function watchProject(root: string, onChange: (paths: string[]) => void): ProjectWatch {
  const watchers = new Map<string, FSWatcher>();
  const changed = new Set<string>();
  let timer: NodeJS.Timeout | null = null;

  const noteChange = (path: string) => {
    changed.add(relative(root, path).split(sep).join('/'));
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = null;
      const paths = [...changed].sort();
      changed.clear();
      onChange(paths);
    }, QUIET_MS);
  };

  const watchTree = (directory: string) => {
    if (watchers.has(directory) || isLeftOut(directory)) return;
    let watcher: FSWatcher;
    try {
      watcher = watch(directory, (_event, name) => {
        if (name === null) return;
        const path = join(directory, name);
        if (isReloadTrigger(name)) noteChange(path);
        else if (isDirectory(path)) watchTree(path);
      });
    } catch {
      return; // gone, or unreadable: nothing to watch
    }
    // A watched directory that is deleted ends its watcher; a new one with its name is seen by its parent.
    watcher.on('error', () => {
      watcher.close();
      watchers.delete(directory);
    });
    watchers.set(directory, watcher);
    for (const entry of readEntries(directory)) {
      if (entry.isDirectory()) watchTree(join(directory, entry.name));
    }
  };

  watchTree(root);
  return {
    close: () => {
      if (timer) clearTimeout(timer);
      for (const watcher of watchers.values()) watcher.close();
      watchers.clear();
    },
  };
}

function isLeftOut(directory: string): boolean {
  const name = directory.split(sep).at(-1) ?? '';
  return ALWAYS_IGNORED_DIRECTORIES.has(name) || existsSync(join(directory, VIRTUALENV_MARKER));
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function readEntries(directory: string) {
  try {
    return readdirSync(directory, { withFileTypes: true });
  } catch {
    return [];
  }
}
