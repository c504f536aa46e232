import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** svc's name on the npm registry (the bare `svc` there is an unrelated package); the command stays `svc`. */
export const SVC_PACKAGE_NAME = 'svc-ml';

/**
 * svc's own package root: the nearest directory above this module whose package.json is
 * named SVC_PACKAGE_NAME. Found by walking up because this code runs both bundled (dist/svc.js or a chunk in dist/chunks/) and
 * from source (src/worker/ under vitest).
 */
export function findSvcPackageRoot(fromUrl: string = import.meta.url): string {
  let dir = dirname(fileURLToPath(fromUrl));
  for (;;) {
    if (readPackageName(join(dir, 'package.json')) === SVC_PACKAGE_NAME) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package.json named "${SVC_PACKAGE_NAME}" above ${fileURLToPath(fromUrl)}`);
    dir = parent;
  }
}

/** The directory holding the `apipod` toolkit that workers import. */
export function toolkitPythonDir(packageRoot: string = findSvcPackageRoot()): string {
  return join(packageRoot, 'python');
}

function readPackageName(file: string): string | undefined {
  try {
    const manifest: unknown = JSON.parse(readFileSync(file, 'utf8'));
    return typeof manifest === 'object' && manifest !== null && 'name' in manifest && typeof manifest.name === 'string'
      ? manifest.name
      : undefined;
  } catch {
    return undefined;
  }
}
