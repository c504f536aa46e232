import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { locateProject } from '../project-location.js';
import { BASE_IMAGE_CATALOG } from './base-image-catalog.js';
import { MANIFEST_SCHEMA_VERSION, type Manifest } from '../scan/manifest.js';
import { DEPLOY_DIRECTORY, MANIFEST_FILE, writeManifest } from '../scan/manifest-file.js';
import { findSvcPackageRoot } from '../worker/svc-package.js';
import { planBuild, type BuildPlan } from './build-plan.js';
import { renderDockerfile } from './dockerfile.js';
import { writeDockerignoreIfMissing } from './dockerignore.js';
import { manifestStaleness } from './manifest-freshness.js';
import { STAGED_FILES, stageBuildFiles } from './runtime-staging.js';

export interface PrepareOptions {
  entrypoint?: string | undefined;
  baseImage?: string | undefined;
  /** `--ffmpeg` and `--compilers`: see PlanOptions. */
  ffmpeg?: boolean | undefined;
  compilers?: boolean | undefined;
  svcVersion: string;
}

export interface PreparedBuild {
  root: string;
  manifest: Manifest;
  plan: BuildPlan;
  /** Why the project was scanned first, or null when the manifest was current. */
  scannedBecause: string | null;
  /** The Dockerfile to build, relative to the root: the project's own when it has one. */
  dockerfile: string;
  usesProjectDockerfile: boolean;
  wroteDockerignore: boolean;
  /** The manifest's warnings, repeated on every build, whether it scanned or not. */
  warnings: string[];
  /** The requirement files and svc's runtime staged under apipod-deploy/, project-relative: the generated Dockerfile copies every one. */
  stagedFiles: string[];
}

export const PROJECT_DOCKERFILE = 'Dockerfile';

/**
 * `svc build` up to the engine: the manifest (scanning first when it is missing or older
 * than the project), the plan, the Dockerfile, and the staged runtime under apipod-deploy/.
 */
export async function prepareBuild(target: string, options: PrepareOptions): Promise<PreparedBuild> {
  const { root, entrypoint } = locateProject(target, options.entrypoint);
  // Before the scan, which records the ignore files it honoured.
  const wroteDockerignore = writeDockerignoreIfMissing(root);
  const manifestPath = join(root, DEPLOY_DIRECTORY, MANIFEST_FILE);
  let manifest = readManifest(manifestPath);
  const scannedBecause = whyScanAgain(manifest, { root, entrypoint, manifestPath, wroteDockerignore });
  if (scannedBecause !== null || manifest === null) {
    // Loaded on use: the scanner brings the Python grammar, which a current manifest does not need.
    const { scanProject } = await import('../scan/scan-project.js');
    const scan = await scanProject(root, { entrypoint });
    await writeManifest(root, scan.manifest);
    manifest = scan.manifest;
  }

  const plan = planBuild(manifest, {
    svcVersion: options.svcVersion,
    catalog: BASE_IMAGE_CATALOG,
    baseImage: options.baseImage,
    ffmpeg: options.ffmpeg,
    compilers: options.compilers,
  });
  const stagedFiles = stageBuildFiles({
    root,
    dockerfile: renderDockerfile(plan),
    requirementFiles: plan.requirementFiles,
    svcPackageRoot: findSvcPackageRoot(import.meta.url),
    svcVersion: options.svcVersion,
  });
  const usesProjectDockerfile = existsSync(join(root, PROJECT_DOCKERFILE));
  return {
    root,
    manifest,
    plan,
    scannedBecause,
    dockerfile: usesProjectDockerfile ? PROJECT_DOCKERFILE : STAGED_FILES.dockerfile,
    usesProjectDockerfile,
    wroteDockerignore,
    warnings: manifest.warnings,
    stagedFiles,
  };
}

/** Why the manifest must be written anew before this build, or null when it is current. */
function whyScanAgain(
  manifest: Manifest | null,
  { root, entrypoint, manifestPath, wroteDockerignore }: { root: string; entrypoint: string; manifestPath: string; wroteDockerignore: boolean },
): string | null {
  if (manifest === null) return 'no manifest yet';
  if (manifest.entrypoint !== entrypoint) return `the entrypoint is now ${entrypoint}`;
  if (wroteDockerignore) return 'svc wrote .dockerignore, and the manifest lists the ignore files';
  const stale = manifestStaleness(root, manifestPath);
  if (stale !== null) return stale;
  // A fix may change no file's time (chmod does not): what the last scan refused is read again.
  if (manifest.service_errors.length > 0 || manifest.dependencies.unreadable.length > 0) return 'the last scan found files it could not use';
  return null;
}

function readManifest(path: string): Manifest | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return null;
  }
  try {
    const manifest = JSON.parse(text) as Manifest;
    return typeof manifest === 'object' && manifest !== null && manifest.schema_version === MANIFEST_SCHEMA_VERSION ? manifest : null;
  } catch {
    return null; // written by svc: a damaged one is simply scanned again
  }
}
