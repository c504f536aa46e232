import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DEPLOY_DIRECTORY } from '../scan/manifest-file.js';
import { SvcError } from '../svc-error.js';
import { SVC_PACKAGE_NAME } from '../worker/svc-package.js';
import type { RequirementFiles } from './requirements-file.js';

/** svc's runtime under apipod-deploy/, where the Dockerfile's `COPY apipod-deploy/svc/ /opt/svc/` finds it. */
export const STAGED_RUNTIME_DIR = `${DEPLOY_DIRECTORY}/svc`;
export const STAGED_FILES = {
  dockerfile: `${DEPLOY_DIRECTORY}/Dockerfile`,
  requirements: `${DEPLOY_DIRECTORY}/requirements.txt`,
  constraints: `${DEPLOY_DIRECTORY}/constraints.txt`,
  localRequirements: `${DEPLOY_DIRECTORY}/requirements-local.txt`,
  compiledRequirements: `${DEPLOY_DIRECTORY}/requirements-compiled.txt`,
  pipOptions: `${DEPLOY_DIRECTORY}/pip-options.txt`,
} as const;

export interface StagingInput {
  root: string;
  dockerfile: string;
  requirementFiles: RequirementFiles;
  /** svc's own package: the bundle (dist/svc.js, dist/chunks/) and python/apipod are copied from it. */
  svcPackageRoot: string;
  svcVersion: string;
}

/**
 * Writes what `docker build -f apipod-deploy/Dockerfile .` needs beside the project's files:
 * the Dockerfile, the requirement files, and svc's runtime (a package.json with svc's package name,
 * so the runtime finds its python/ directory, the bundle dist/svc.js with its chunks, python/apipod).
 * Files whose bytes are unchanged are left alone and stale ones removed, so the staged
 * tree is exactly what the plan says. Returns what the Dockerfile copies of them (all but
 * itself), project-relative.
 */
export function stageBuildFiles(input: StagingInput): string[] {
  const { root } = input;
  const wanted = new Map<string, string | Buffer>();
  wanted.set(STAGED_FILES.dockerfile, input.dockerfile);
  const optional: Array<[string, string | null]> = [
    [STAGED_FILES.requirements, input.requirementFiles.requirements],
    [STAGED_FILES.constraints, input.requirementFiles.constraints],
    [STAGED_FILES.localRequirements, input.requirementFiles.local],
    [STAGED_FILES.compiledRequirements, input.requirementFiles.compiled],
    [STAGED_FILES.pipOptions, input.requirementFiles.pipOptions],
  ];
  for (const [path, text] of optional) {
    if (text === null) rmSync(join(root, path), { force: true });
    else wanted.set(path, text);
  }

  const runtime = new Map<string, string | Buffer>();
  runtime.set('package.json', `${JSON.stringify({ name: SVC_PACKAGE_NAME, version: input.svcVersion, private: true, type: 'module' }, null, 2)}\n`);
  for (const file of listBundle(input.svcPackageRoot)) runtime.set(file, readFileSync(join(input.svcPackageRoot, file)));
  const toolkit = join(input.svcPackageRoot, 'python', 'apipod');
  for (const file of listToolkit(toolkit)) runtime.set(`python/apipod/${file}`, readFileSync(join(toolkit, file)));
  for (const [path, content] of runtime) wanted.set(`${STAGED_RUNTIME_DIR}/${path}`, content);

  try {
    for (const [path, content] of wanted) writeIfChanged(join(root, path), content);
    removeUnwanted(join(root, STAGED_RUNTIME_DIR), new Set([...runtime.keys()]));
  } catch (error) {
    if (error instanceof SvcError) throw error;
    const reason = error instanceof Error && 'code' in error ? String(error.code) : String(error);
    throw new SvcError('io', `cannot write the build files (${reason})`, { file: join(root, DEPLOY_DIRECTORY) });
  }
  return [...wanted.keys()].filter((path) => path !== STAGED_FILES.dockerfile);
}

/**
 * The bundled CLI, package-relative: dist/svc.js and every chunk it loads commands from
 * (scripts/bundle.js empties dist/chunks/ before each build, so all of them are this build's).
 */
function listBundle(packageRoot: string): string[] {
  const entry = join(packageRoot, 'dist', 'svc.js');
  const chunks = join(packageRoot, 'dist', 'chunks');
  if (!existsSync(entry) || !existsSync(chunks)) {
    throw new SvcError('not-found', `svc's bundle (dist/svc.js and dist/chunks/) is missing in ${packageRoot}; run \`npm run build\` there`);
  }
  return ['dist/svc.js', ...readdirSync(chunks).map((file) => `dist/chunks/${file}`)];
}

function listToolkit(directory: string, prefix = ''): string[] {
  return readdirSync(join(directory, prefix), { withFileTypes: true }).flatMap((entry) => {
    const path = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) return entry.name === '__pycache__' ? [] : listToolkit(directory, path);
    return /\.py[cod]$/.test(entry.name) ? [] : [path];
  });
}

function writeIfChanged(path: string, content: string | Buffer): void {
  const bytes = typeof content === 'string' ? Buffer.from(content) : content;
  try {
    if (readFileSync(path).equals(bytes)) return;
  } catch {
    // missing: written below
  }
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, bytes);
}

function removeUnwanted(directory: string, keep: Set<string>, prefix = ''): void {
  for (const entry of readdirSync(join(directory, prefix), { withFileTypes: true })) {
    const path = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) {
      removeUnwanted(directory, keep, path);
      if (readdirSync(join(directory, path)).length === 0) rmSync(join(directory, path), { recursive: true });
    } else if (!keep.has(path)) {
      rmSync(join(directory, path));
    }
  }
}
