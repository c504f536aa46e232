import { posix } from 'node:path';

/**
 * The filesystem path a requirement's or `--find-links`' location names (`./pkg`,
 * `file:///home/me/pkg`), or null for a remote or VCS URL.
 */
export function localPathOf(location: string): string | null {
  if (/^(git|hg|svn|bzr)\+/.test(location)) return null;
  if (location.startsWith('file:')) return decodedUri(location.replace(/^file:(\/\/[^/]*)?/, ''));
  return /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(location) ? null : location;
}

/** Whether a path leads out of the project: absolute, or up from its root (svc scan records the paths inside it relative to it). */
export function leavesProject(path: string): boolean {
  const normal = posix.normalize(path);
  return posix.isAbsolute(normal) || normal === '..' || normal.startsWith('../');
}

function decodedUri(text: string): string {
  try {
    return decodeURI(text);
  } catch {
    return text; // a stray `%`: the path as written
  }
}
