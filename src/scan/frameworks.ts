import packages from './packages.json' with { type: 'json' };
import { pinnedVersion } from './pep508.js';
import type { LocatedRequirement } from './requirements.js';
import { bringsTorch, torchDemand, type TorchDemand } from './torch-requirements.js';

export type FrameworkName = keyof typeof packages.frameworks;
export const FRAMEWORK_NAMES = Object.keys(packages.frameworks) as FrameworkName[];

export interface FrameworkUse {
  /**
   * The requirement that decides the framework's version: the first of its version packages
   * (torch; tensorflow; onnxruntime-gpu, onnxruntime; ...) the project lists, else the first of
   * its other packages, whose own version says nothing of the framework's.
   */
  package: string;
  /** The framework's PEP 440 specifier: the version package's, empty when none is listed. */
  specifier: string;
  /** The framework's exact pinned version without a local label ("2.1.0" for ==2.1.0+cu121), else null. */
  version: string | null;
  /** Every requirement of the project that belongs to this framework, sorted. */
  packages: string[];
  /** Where the deciding requirement is written, `file:line`. */
  source: string;
}

export interface FrameworkReport {
  frameworks: Partial<Record<FrameworkName, FrameworkUse>>;
  cuda: boolean;
  /** Requirements that make the image need CUDA, sorted. */
  cudaPackages: string[];
  /** CUDA release asked for by a +cuXYZ local version or a PyTorch cuXYZ index, e.g. "12.1". */
  requestedCuda: string | null;
  /** torch is a ROCm build (AMD GPUs): a +rocm local version or the PyTorch ROCm index. */
  rocm: boolean;
  /** torch comes from PyTorch's nightly index: a PyTorch image's stable torch would satisfy pip instead. */
  nightlyTorch: boolean;
  /**
   * torch, when the image gets it, listed or through another requirement (lightning,
   * sentence-transformers, a pinned torchaudio): what pins it, and whether it is a CUDA build.
   */
  torch: (TorchDemand & { cuda: boolean; fromPypi: boolean }) | null;
  /** Requirements that compile CUDA code at install time: the image needs nvcc (a devel variant). */
  compilerPackages: string[];
  systemPackages: string[];
}

export interface DependencySource {
  requirements: readonly LocatedRequirement[];
  /** Where pip looks for packages: the index URLs and the --find-links locations. */
  indexUrls: readonly string[];
  /** `--index-url`, which replaces PyPI; null when PyPI is the index. */
  indexUrl?: string | null;
}

export function detectFrameworks({ requirements, indexUrls, indexUrl = null }: DependencySource): FrameworkReport {
  const byKey = new Map<string, LocatedRequirement>();
  for (const requirement of requirements) {
    if (!byKey.has(requirement.key)) byKey.set(requirement.key, requirement);
  }
  const keys = [...byKey.keys()].sort();

  const torchUsers = keys.filter((key) => key !== 'torch' && bringsTorch(key));
  const frameworks: FrameworkReport['frameworks'] = {};
  for (const name of FRAMEWORK_NAMES) {
    const { versionPackages, packages: members } = packages.frameworks[name];
    // What installs torch makes the project a PyTorch one, whichever framework it also belongs to.
    const present = keys.filter((key) => members.includes(key) || (name === 'pytorch' && torchUsers.includes(key)));
    if (present.length === 0) continue;
    const versioned = versionPackages.map((key) => byKey.get(key)).find((requirement) => requirement !== undefined);
    const deciding = versioned ?? (byKey.get(present[0] as string) as LocatedRequirement);
    const pinned = versioned === undefined ? null : pinnedVersion(versioned.specifier) ?? wheelVersion(versioned.url);
    frameworks[name] = {
      package: deciding.key,
      specifier: versioned?.specifier ?? '',
      version: pinned === null ? null : pinned.split('+')[0] ?? pinned,
      packages: present,
      source: `${deciding.source.file}:${deciding.source.line}`,
    };
  }

  const torch = byKey.get('torch');
  const rocm = isRocmTorch(torch, indexUrls);
  const torchCuda = (torch !== undefined || torchUsers.length > 0) && !isCpuTorch(torch, indexUrls) && !rocm;
  // torch brought in by another requirement needs CUDA as a listed torch does; that requirement is why.
  const cudaPackages = keys.filter(
    (key) => needsCuda(byKey.get(key) as LocatedRequirement, indexUrls, rocm) || (torch === undefined && torchCuda && torchUsers.includes(key)),
  );
  const requestedCuda = findRequestedCuda(byKey.get('torch'), indexUrls);
  const compilerPackages = keys.filter((key) => packages.cudaCompiler.packages.includes(key) && !isWheel(byKey.get(key) as LocatedRequirement));
  return {
    frameworks,
    cuda: cudaPackages.length > 0,
    cudaPackages,
    requestedCuda,
    rocm,
    nightlyTorch: byKey.has('torch') && indexUrls.some((url) => new RegExp(packages.cuda.nightlyIndexUrlPattern).test(url)),
    torch: torch === undefined && torchUsers.length === 0
      ? null
      : {
          ...torchDemand([...byKey.values()], torch?.specifier ?? ''),
          cuda: torchCuda,
          // A URL, a +cu121 build or a replaced index brings torch from elsewhere than PyPI.
          fromPypi: (torch?.url ?? null) === null && !/\+/.test(torch?.specifier ?? '') && (indexUrl === null || /^https?:\/\/(?:pypi\.org|pypi\.python\.org)\//.test(indexUrl)),
        },
    compilerPackages,
    systemPackages: chooseSystemPackages(keys, requirements),
  };
}

function needsCuda(requirement: LocatedRequirement, indexUrls: readonly string[], rocmTorch: boolean): boolean {
  const { key } = requirement;
  if (packages.cuda.cpuOnlyPackages.includes(key)) return false;
  if (!packages.cuda.packages.includes(key) && !packages.cudaCompiler.packages.includes(key)) return false;
  if (key === 'torch' && (isCpuTorch(requirement, indexUrls) || rocmTorch)) return false;
  return true;
}

/** A CPU build of torch: a +cpu local version, or the PyTorch CPU index. */
function isCpuTorch(torch: LocatedRequirement | undefined, indexUrls: readonly string[]): boolean {
  const cpuIndex = new RegExp(packages.cuda.cpuIndexUrlPattern);
  const pinnedCpu = torch !== undefined && (/\+cpu\b/.test(torch.specifier) || /%2Bcpu|\+cpu/i.test(torch.url ?? ''));
  return pinnedCpu || indexUrls.some((url) => cpuIndex.test(url));
}

/** ROCm wheels of torch bring the ROCm runtime with them: the image needs no CUDA, and no NVIDIA one. */
function isRocmTorch(torch: LocatedRequirement | undefined, indexUrls: readonly string[]): boolean {
  if (torch === undefined) return false;
  const rocmIndex = new RegExp(packages.cuda.rocmIndexUrlPattern);
  return /\+rocm/.test(torch.specifier) || /(?:%2B|\+)rocm/i.test(torch.url ?? '') || indexUrls.some((url) => rocmIndex.test(url));
}

/** A prebuilt wheel (`flash_attn-2.7.4+cu12torch2.6-cp311-cp311-linux_x86_64.whl`) installs as it is: nothing compiles. */
function isWheel(requirement: LocatedRequirement): boolean {
  return /\.whl$/i.test(requirement.url?.split(/[#?]/)[0] ?? '');
}

/** The version in a wheel's file name (`torch-2.3.1%2Bcu121-cp311-...whl`), which pins as `==` would. */
function wheelVersion(url: string | null): string | null {
  const match = /\/[A-Za-z0-9_.]+-(\d[^-/]*)-[^/]*\.whl$/.exec(url?.split('#')[0] ?? '');
  return match ? decodeURIComponent(match[1] as string) : null;
}

/** `torch==2.1.0+cu121`, a wheel URL with `+cu121`, or `.../whl/cu121` (or `/whl/nightly/cu121`): CUDA 12.1. */
function findRequestedCuda(torch: LocatedRequirement | undefined, indexUrls: readonly string[]): string | null {
  const candidates = [torch?.specifier ?? '', torch?.url ?? '', ...indexUrls];
  for (const text of candidates) {
    const match = /(?:\+|%2B|\/whl\/(?:nightly\/)?)cu(\d{2,3})\b/i.exec(text);
    if (match) {
      const digits = match[1] as string;
      return `${digits.slice(0, -1)}.${digits.slice(-1)}`;
    }
  }
  return null;
}

function chooseSystemPackages(keys: string[], requirements: readonly LocatedRequirement[]): string[] {
  const chosen = new Set<string>();
  const byRequirement: Record<string, string[]> = packages.systemPackages.byRequirement;
  for (const key of keys) for (const pkg of byRequirement[key] ?? []) chosen.add(pkg);
  if (requirements.some((requirement) => /^git\+|^hg\+|^svn\+|^bzr\+/.test(requirement.url ?? ''))) {
    for (const pkg of packages.systemPackages.forVcsRequirements) chosen.add(pkg);
  }
  return [...chosen].sort();
}
