import { statfs } from 'node:fs/promises';
import type { Engine } from './docker-engine.js';

/** GPU base images (CUDA, cuDNN, a framework) and their layers take tens of GB while building. */
export const GPU_MIN_FREE_BYTES = 30 * 1000 ** 3;

export interface PreflightFacts {
  architecture: string;
  /** Free bytes where the engine keeps images, or null when that cannot be measured from here. */
  freeBytes: number | null;
  dockerRootDir: string;
  gpuBaseImage: boolean;
  skipDiskCheck: boolean;
}

export interface PreflightVerdict {
  warnings: string[];
  /** Why the build must not start, or null. */
  refusal: string | null;
}

/** What to say before any work, from facts gathered about the engine. Pure. */
export function judgePreflight(facts: PreflightFacts): PreflightVerdict {
  const warnings: string[] = [];
  if (/^(aarch64|arm64)$/i.test(facts.architecture)) {
    warnings.push('this engine runs on arm64: the image is built for linux/amd64 under emulation, which is much slower');
  }
  let refusal: string | null = null;
  if (facts.gpuBaseImage && !facts.skipDiskCheck) {
    if (facts.freeBytes === null) {
      warnings.push(`cannot measure free disk space at ${facts.dockerRootDir} from here; GPU images need about 30 GB`);
    } else if (facts.freeBytes < GPU_MIN_FREE_BYTES) {
      refusal =
        `only ${gigabytes(facts.freeBytes)} GB free at ${facts.dockerRootDir}; GPU base images need at least 30 GB to build ` +
        '(free some space, e.g. `docker system prune`, or pass --skip-disk-check)';
    }
  }
  return { warnings, refusal };
}

/** The facts, measured: free space under the engine's root directory when the engine is local. */
export async function gatherPreflightFacts(engine: Engine, gpuBaseImage: boolean, skipDiskCheck: boolean): Promise<PreflightFacts> {
  let freeBytes: number | null = null;
  if (engine.isLocal && gpuBaseImage && !skipDiskCheck) {
    try {
      const stats = await statfs(engine.dockerRootDir);
      freeBytes = stats.bavail * stats.bsize;
    } catch {
      freeBytes = null; // e.g. Docker Desktop, whose root directory lives in its VM
    }
  }
  return { architecture: engine.architecture, freeBytes, dockerRootDir: engine.dockerRootDir, gpuBaseImage, skipDiskCheck };
}

function gigabytes(bytes: number): string {
  return (bytes / 1000 ** 3).toFixed(1);
}
