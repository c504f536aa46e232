import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEPLOY_DIRECTORY } from '../scan/manifest-file.js';

/**
 * apipod-deploy/image.json: the image `svc build --image` last built for the project, so
 * `svc start --orchestrator docker` runs that one without being told its tag.
 */
export const BUILD_RECORD_FILE = `${DEPLOY_DIRECTORY}/image.json`;

export interface BuildRecord {
  image: string;
  image_id: string;
  built_at: string;
}

export function writeBuildRecord(root: string, record: BuildRecord): void {
  writeFileSync(join(root, BUILD_RECORD_FILE), `${JSON.stringify(record, null, 2)}\n`);
}

export function readBuildRecord(root: string): BuildRecord | null {
  try {
    const record = JSON.parse(readFileSync(join(root, BUILD_RECORD_FILE), 'utf8')) as Partial<BuildRecord>;
    return typeof record.image === 'string' && typeof record.image_id === 'string' ? (record as BuildRecord) : null;
  } catch {
    return null;
  }
}
