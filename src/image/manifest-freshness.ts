import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ALWAYS_IGNORED_DIRECTORIES, VIRTUALENV_MARKER } from '../scan/ignore-rules.js';

/**
 * Why apipod-deploy/apipod.json needs re-scanning before a build, or null when it is
 * current: missing, or older than a file or directory of the project (a directory's time
 * changes when an entry is added or removed). Stops at the first newer entry.
 */
export function manifestStaleness(root: string, manifestPath: string): string | null {
  let manifestTime: number;
  try {
    manifestTime = statSync(manifestPath).mtimeMs;
  } catch {
    return 'no manifest yet';
  }
  const newer = changedSince(root, manifestTime);
  return newer === null ? null : `${newer} changed since the last scan`;
}

/** The first file or directory of the project (`.` for its root) changed after `time` (ms), or null. */
export function changedSince(root: string, time: number): string | null {
  const newer = findNewerThan(root, '', time);
  return newer === null ? null : newer || '.';
}

function findNewerThan(absolute: string, relative: string, time: number): string | null {
  let names: string[];
  try {
    if (statSync(absolute).mtimeMs > time) return relative;
    names = readdirSync(absolute);
  } catch {
    return null;
  }
  if (relative !== '' && names.includes(VIRTUALENV_MARKER)) return null;
  for (const name of names) {
    if (ALWAYS_IGNORED_DIRECTORIES.has(name)) continue;
    const path = relative === '' ? name : `${relative}/${name}`;
    const entry = join(absolute, name);
    let stats;
    try {
      stats = statSync(entry);
    } catch {
      continue;
    }
    if (stats.isDirectory()) {
      const found = findNewerThan(entry, path, time);
      if (found !== null) return found;
    } else if (stats.mtimeMs > time) {
      return path;
    }
  }
  return null;
}
