import { accessSync, constants, readFileSync, readdirSync, lstatSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, join, relative as relativePath } from 'node:path';
import type { Readable } from 'node:stream';
import dockerignoreModule from '@balena/dockerignore';
import tar from 'tar-fs';
import { isModelFile } from '../scan/model-files.js';
import { SvcError } from '../svc-error.js';
import { BUILD_RECORD_FILE } from './build-record.js';
import { DOCKERIGNORE_FILE, SHARED_ENV_TEMPLATES } from './dockerignore.js';

// A CommonJS module whose typings declare a default export; it sets `.default` on itself for that.
const dockerignore = dockerignoreModule.default;

/**
 * Never sent to the engine, whatever .dockerignore says: they hold secrets. `.env` and
 * `.env.production`, `config/.env.local` ... at any depth; the templates meant to be shared
 * (SHARED_ENV_TEMPLATES) go.
 */
function isSecretFile(name: string): boolean {
  return (name === '.env' || name.startsWith('.env.')) && !SHARED_ENV_TEMPLATES.includes(name);
}

export interface BuildContext {
  /** Project-relative POSIX paths of the files sent, sorted. */
  files: string[];
  /** Their total size. */
  bytes: number;
  /** The model weights among them (by svc scan's rule), largest first: they go into the image. */
  weights: Array<{ path: string; size: number }>;
  /** Secrets left out although .dockerignore lets them in (a plain `docker build` would send them). */
  secretsLeftOut: string[];
  /** Symbolic links that point out of the project: the context carries the link, not what it points at. */
  linksOut: string[];
}

/**
 * The files of the build context, as `docker build` would send them: the project root less
 * what the root .dockerignore excludes, matched with Docker's own rules (@balena/dockerignore
 * follows moby's patternmatcher, `!` exceptions included), plus always the Dockerfile and
 * .dockerignore themselves (as the docker CLI does). `.env` is never sent, nor the record of
 * the last build (apipod-deploy/image.json), which changes with every build and would make
 * every rebuild miss the cache from the code layer on.
 */
export function listBuildContext(root: string, dockerfile: string): BuildContext {
  let rulesText = '';
  try {
    rulesText = readFileSync(join(root, DOCKERIGNORE_FILE), 'utf8');
  } catch {
    // no .dockerignore: everything goes
  }
  const rules = dockerignore({ ignorecase: false }).add(rulesText);
  // With an exception (`!path`) an excluded directory may still hold included files, so walk it.
  const hasExceptions = /^\s*!/m.test(rulesText);
  const files: string[] = [];
  const weights: BuildContext['weights'] = [];
  let bytes = 0;
  const secretsLeftOut: string[] = [];
  const linksOut: string[] = [];
  const walk = (relative: string, excluded: boolean) => {
    // An excluded directory is walked only for the exceptions it may hold: unreadable, it holds none to send.
    const names = excluded ? readdirOrNone(join(root, relative)) : readable(relative, () => readdirSync(join(root, relative)));
    for (const name of names.sort()) {
      const path = relative ? `${relative}/${name}` : name;
      const stats = lstatSync(join(root, path));
      const ignored = rules.ignores(path);
      if (stats.isDirectory()) {
        if (!ignored || hasExceptions) walk(path, ignored);
      } else if (!ignored && path !== BUILD_RECORD_FILE) {
        if (isSecretFile(name)) {
          secretsLeftOut.push(path);
          continue;
        }
        // Found now, it is named; found by the engine's tar stream, it is "EACCES" alone.
        if (stats.isFile()) readable(path, () => accessSync(join(root, path), constants.R_OK));
        files.push(path);
        if (stats.isSymbolicLink() && pointsOutOf(root, join(root, path))) linksOut.push(path);
        bytes += stats.size;
        if (isModelFile(path, stats.size)) weights.push({ path, size: stats.size });
      }
    }
  };
  walk('', false);
  for (const always of [dockerfile, DOCKERIGNORE_FILE]) {
    if (!files.includes(always) && isFile(join(root, always))) files.push(always);
  }
  weights.sort((a, b) => b.size - a.size || (a.path < b.path ? -1 : 1));
  return { files: files.sort(), bytes, weights, secretsLeftOut, linksOut };
}

function readdirOrNone(directory: string): string[] {
  try {
    return readdirSync(directory);
  } catch {
    return [];
  }
}

/** What `read` returns; a file or directory this user may not read fails naming it. */
function readable<T>(path: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new SvcError('invalid-project', `cannot be read (${code}), and the build context sends it: fix its permissions, or add it to .dockerignore`, {
      file: path || '.',
    });
  }
}

/** Whether a link's target lies outside the root (or does not exist): in the image it would dangle. */
function pointsOutOf(root: string, link: string): boolean {
  try {
    const target = relativePath(realpathSync(root), realpathSync(link));
    return target.startsWith('..') || isAbsolute(target);
  } catch {
    return true;
  }
}

/** Fails with a clear message when the staged runtime would not reach the engine. */
export function checkStagedFilesIncluded(context: BuildContext, required: readonly string[]): void {
  const sent = new Set(context.files);
  const missing = required.find((path) => !sent.has(path));
  if (missing) {
    throw new SvcError(
      'invalid-project',
      `leaves out ${missing}, which the generated Dockerfile copies; add \`!apipod-deploy/\` to it`,
      { file: DOCKERIGNORE_FILE },
    );
  }
}

/** The context as the tar stream the engine's /build endpoint reads. Symlinks stay symlinks. */
export function packBuildContext(root: string, context: BuildContext): Readable {
  return tar.pack(root, { entries: context.files }) as unknown as Readable;
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
