import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { SvcError } from '../svc-error.js';
import { renderManifest, type Manifest } from './manifest.js';

export const DEPLOY_DIRECTORY = 'apipod-deploy';
export const MANIFEST_FILE = 'apipod.json';

/**
 * Writes apipod-deploy/apipod.json, replacing any earlier one. Written to a temporary file
 * and renamed, so an interrupted scan never leaves half a manifest behind.
 */
export async function writeManifest(root: string, manifest: Manifest): Promise<string> {
  const directory = join(root, DEPLOY_DIRECTORY);
  const path = join(directory, MANIFEST_FILE);
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    await mkdir(directory, { recursive: true });
    await writeFile(temporary, renderManifest(manifest));
    await rename(temporary, path);
  } catch (error) {
    const reason = error instanceof Error && 'code' in error ? String(error.code) : String(error);
    throw new SvcError('io', `cannot write the manifest (${reason})`, { file: path });
  }
  return path;
}
