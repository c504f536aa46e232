import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TOOL_DIRECTORIES, VIRTUALENV_MARKER } from '../scan/ignore-rules.js';
import { SvcError } from '../svc-error.js';
import { BUILD_RECORD_FILE } from './build-record.js';

export const DOCKERIGNORE_FILE = '.dockerignore';

/** `.env` files meant to be shared, with placeholders: they may go into an image. */
export const SHARED_ENV_TEMPLATES: readonly string[] = ['.env.example', '.env.sample', '.env.template'];

/**
 * The .dockerignore svc writes when a project has none: what never belongs in an image
 * (https://docs.docker.com/build/concepts/context/#dockerignore-files). Secrets (.env) and
 * virtualenvs above all; `virtualenvs` adds the project's own, found by pyvenv.cfg, whatever
 * their names. apipod-deploy/ stays in: the Dockerfile copies svc's runtime from it.
 * `writtenBy` names the command in its first line (svc init writes one too).
 */
export function renderDockerignore(virtualenvs: readonly string[] = [], writtenBy = 'svc build because the project had no .dockerignore'): string {
  const lines = [
    `# Written by ${writtenBy}; edit it freely, svc never overwrites it.`,
    '# apipod-deploy/ must stay in the build context: the Dockerfile copies svc\'s runtime from it.',
    // The record of the last build changes with each one: in the context, no rebuild would hit the cache.
    BUILD_RECORD_FILE,
    // At any depth: Docker anchors a bare `.env` at the context root.
    '**/.env',
    '**/.env.*',
    ...SHARED_ENV_TEMPLATES.map((name) => `!**/${name}`),
    // The scan's list (src/scan/ignore-rules.ts), at any depth as the scan reads it.
    ...TOOL_DIRECTORIES.map((name) => `**/${name}`),
    '.venv',
    'venv',
    ...virtualenvs.filter((name) => name !== '.venv' && name !== 'venv'),
    '**/*.py[cod]',
    '**/.DS_Store',
  ];
  return `${lines.join('\n')}\n`;
}

/** Writes the default .dockerignore unless the project has one; returns whether it wrote. */
export function writeDockerignoreIfMissing(root: string): boolean {
  const path = join(root, DOCKERIGNORE_FILE);
  if (existsSync(path)) return false;
  try {
    writeFileSync(path, renderDockerignore(topLevelVirtualenvs(root)), { flag: 'wx' });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new SvcError('io', `cannot write the default .dockerignore (${code}); add one yourself, or make the project writable`, { file: path });
  }
  return true;
}

function topLevelVirtualenvs(root: string): string[] {
  return readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(root, entry.name, VIRTUALENV_MARKER)))
    .map((entry) => entry.name)
    .filter((name) => /^[A-Za-z0-9._-]+$/.test(name))
    .sort();
}
