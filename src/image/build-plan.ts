import { createHash } from 'node:crypto';
import { COMPUTE_VALUES, PROVIDER_VALUES, type Compute, type Provider } from '../deployment-target.js';
import type { BaseImageCatalog } from './base-image-catalog.js';
import { renderManifest, type Manifest } from '../scan/manifest.js';
import { singleLine } from './dockerfile-quoting.js';
import { checkImageReference } from './image-reference.js';
import { choosePython, knownBasePython, type PythonPlan } from './image-python.js';
import { checkChoice, checkDebianPackage, checkEntrypoint, checkPythonVersion } from './project-values.js';
import { normaliseName } from '../scan/pep508.js';
import { renderRequirementFiles, type RequirementFiles } from './requirements-file.js';
import { SvcError } from '../svc-error.js';
import {
  COMPILER_PACKAGES,
  FFMPEG_PACKAGE,
  IMAGE_PLATFORM,
  IMAGE_PORT,
  IMAGE_USER,
  NODE_IMAGE,
  PROVIDER_PACKAGES,
  RUN_TIME_COMPILER_REQUIREMENTS,
  RUNTIME_SYSTEM_PACKAGES,
  TOOLKIT_MEDIA_PACKAGES,
  UV_IMAGE,
} from './runtime-images.js';

/**
 * Everything the Dockerfile says, decided from the manifest before any text is written:
 * `svc build`'s middle stage (manifest -> plan -> Dockerfile). Every value from the project
 * is checked against its grammar here, so the template only places values.
 */
export interface BuildPlan {
  svcVersion: string;
  platform: typeof IMAGE_PLATFORM;
  base: { image: string; overridden: boolean; gpu: boolean; reason: string };
  nodeImage: string;
  uvImage: string | null;
  python: PythonPlan;
  /** Debian packages of the image, sorted: the manifest's, svc's runtime needs, gcc and g++ when `compilers.where` is `image`. */
  systemPackages: string[];
  /** Whether the image has ffmpeg, and why. */
  ffmpeg: { included: boolean; reason: string };
  /**
   * Where gcc and g++ are: in the image, for what compiles at run time; in a build stage
   * only, whose installed packages the image copies; or nowhere, when pip installs nothing.
   */
  compilers: { where: CompilerPlace; reason: string };
  /** The build stage's Debian packages (the image's and the compilers), when there is one. */
  buildStage: { systemPackages: string[] } | null;
  requirementFiles: RequirementFiles;
  /** pip specifiers installed with the requirements (the provider's client library). */
  providerPackages: string[];
  /**
   * pip specifiers installed with the requirements in place of an `apipod` requirement: what
   * the toolkit's media conversions use, unless the project lists them itself.
   */
  toolkitPackages: string[];
  entrypoint: string;
  /** null when it depends on which arm of an `if` makes the app: the image then leaves it to the app. */
  compute: Compute | null;
  provider: Provider | null;
  user: { name: string; uid: number };
  port: number;
  /** Labels fixed by the manifest; `created`, `source` and `version` come from build args. */
  labels: Array<[name: string, value: string]>;
  /** Things the user should know about the image, shown by `svc build`. */
  notes: string[];
}

export type CompilerPlace = 'image' | 'build-stage' | 'none';

export interface PlanOptions {
  svcVersion: string;
  catalog: BaseImageCatalog;
  /** `--base-image REF`. */
  baseImage?: string | undefined;
  /** `--ffmpeg`: ffmpeg in the image whatever the scan found. */
  ffmpeg?: boolean | undefined;
  /** `--compilers`: gcc and g++ in the image whatever the project needs. */
  compilers?: boolean | undefined;
}

/** Labels longer than this hold the manifest's digest instead: the engine reads a Dockerfile line by line into 64 KiB. */
const MANIFEST_LABEL_LIMIT = 48 * 1024;

export function planBuild(manifest: Manifest, options: PlanOptions): BuildPlan {
  const notes: string[] = [];
  const overridden = options.baseImage !== undefined;
  const image = checkImageReference(options.baseImage ?? manifest.base_image.image, overridden ? '--base-image' : 'base_image.image');
  const version = checkPythonVersion(manifest.python_version, 'python_version');
  const basePython = overridden ? knownBasePython(image, options.catalog) : manifest.base_image.python;
  const python = choosePython(version, basePython);
  if (python.strategy === 'install') {
    notes.push(
      basePython === null
        ? `${image} ships no Python svc knows of: Python ${version} is installed with uv`
        : `${image} ships Python ${basePython}, the project asks for ${version}: Python ${version} is installed with uv` +
            ' (pin the base image\'s version in .python-version to reuse its interpreter and packages)',
    );
  }
  if (overridden) notes.push(`base image ${image} from --base-image (the manifest chose ${manifest.base_image.image})`);

  const projectPackages = manifest.system_packages.map((name, index) => checkDebianPackage(name, `system_packages[${index}]`));
  const ffmpeg = includeFfmpeg(projectPackages, options.ffmpeg === true);
  const branches = manifest.app?.branch_arguments ?? {};
  const provider = 'provider' in branches ? null : checkChoice(manifest.provider, PROVIDER_VALUES, 'provider');
  // A provider chosen by a branch gets every library one of its values needs.
  const providers = provider === null ? (branches.provider ?? []).filter((value): value is string => typeof value === 'string') : [provider];
  const providerPackages = [...new Set(providers.flatMap((name) => PROVIDER_PACKAGES[name] ?? []))];
  refuseBrokenService(manifest.service_errors);
  const rendered = renderRequirementFiles(manifest.dependencies, manifest.cuda_compiler_packages);
  const listed = new Set(manifest.dependencies.requirements.map((requirement) => normaliseName(requirement.name)));
  const toolkitPackages = rendered.omittedApipod ? TOOLKIT_MEDIA_PACKAGES.filter((name) => !listed.has(normaliseName(name))) : [];
  // The options file is staged only when svc installs packages of its own through it.
  const needsPipOptions = rendered.compiled !== null || toolkitPackages.length + providerPackages.length > 0;
  const requirementFiles = needsPipOptions ? rendered : { ...rendered, pipOptions: null };
  const installsPackages = requirementFiles.requirements !== null || toolkitPackages.length + providerPackages.length > 0;
  const compilers = placeCompilers(manifest, requirementFiles, installsPackages, options.compilers === true);
  const imagePackages = [...projectPackages, ...RUNTIME_SYSTEM_PACKAGES, ...(ffmpeg.included ? [FFMPEG_PACKAGE] : [])];
  const withCompilers = (names: readonly string[]) => [...new Set([...names, ...COMPILER_PACKAGES])].sort();
  const systemPackages = compilers.where === 'image' ? withCompilers(imagePackages) : [...new Set(imagePackages)].sort();
  if (requirementFiles.omittedApipod) {
    const inItsPlace = toolkitPackages.length ? `, and the image gets ${toolkitPackages.join(' and ')} in its place for the toolkit's media conversions (to_np_array, from_np_array)` : '';
    notes.push(
      `${requirementFiles.omittedApipod}: apipod left out of the image's requirements; svc's runtime provides the toolkit${inItsPlace}. ` +
        "apipod's other dependencies (opencv-python, av, fastapi, ...) are not installed: list those service.py imports",
    );
  }
  if (requirementFiles.local) notes.push('requirements that are paths into the project install after the code is copied');
  for (const requirement of requirementFiles.outsideProject) {
    notes.push(`${requirement}: a path outside the project, left out of the image, which has no such path`);
  }
  const compute = 'compute' in branches ? null : checkChoice(manifest.compute, COMPUTE_VALUES, 'compute');
  for (const [option, value] of [['compute', compute], ['provider', provider]] as const) {
    if (value === null) notes.push(`APIPod's ${option} depends on which branch of ${manifest.entrypoint} runs: the image sets no default for it and leaves it to the app`);
  }
  if (manifest.has_env_file) notes.push('.env stays out of the image; pass its variables when the container starts');

  return {
    svcVersion: options.svcVersion,
    platform: IMAGE_PLATFORM,
    base: { image, overridden, gpu: overridden ? looksLikeGpuImage(image) : manifest.cuda, reason: manifest.base_image.reason },
    nodeImage: NODE_IMAGE,
    uvImage: python.strategy === 'install' ? UV_IMAGE : null,
    python,
    systemPackages,
    ffmpeg,
    compilers,
    buildStage: compilers.where === 'build-stage' ? { systemPackages: withCompilers(imagePackages) } : null,
    requirementFiles,
    providerPackages,
    toolkitPackages,
    entrypoint: checkEntrypoint(manifest.entrypoint, 'entrypoint'),
    compute,
    provider,
    user: { ...IMAGE_USER },
    port: IMAGE_PORT,
    labels: imageLabels(manifest, options.svcVersion, notes),
    notes,
  };
}

/** ffmpeg is large (its Debian package brings Mesa, LLVM and codec libraries): only where the service handles audio or video, or asked for. */
function includeFfmpeg(projectPackages: readonly string[], forced: boolean): BuildPlan['ffmpeg'] {
  if (projectPackages.includes(FFMPEG_PACKAGE)) return { included: true, reason: 'the service handles audio or video' };
  if (forced) return { included: true, reason: '--ffmpeg' };
  return { included: false, reason: 'no endpoint takes or returns audio or video and no requirement runs ffmpeg (--ffmpeg adds it)' };
}

/**
 * gcc and g++ stay in the image only for what compiles while the service runs (torch,
 * triton, CUDA extensions built against the image's torch, requirements that are paths into
 * the project and install after the code) or when asked; otherwise pip uses them in a build
 * stage and the image copies what it installed, without them.
 */
function placeCompilers(manifest: Manifest, files: RequirementFiles, installsPackages: boolean, forced: boolean): BuildPlan['compilers'] {
  const runTimeCompilers = manifest.dependencies.requirements
    .map((requirement) => requirement.name)
    .filter((name) => RUN_TIME_COMPILER_REQUIREMENTS.includes(normaliseName(name)));
  if (forced) return { where: 'image', reason: '--compilers' };
  if (manifest.pytorch) return { where: 'image', reason: 'torch compiles code while it runs, with torch.compile and triton' };
  if (manifest.cuda_compiler_packages.length) return { where: 'image', reason: `${manifest.cuda_compiler_packages.join(', ')} compile against the image's torch` };
  if (runTimeCompilers.length) return { where: 'image', reason: `${runTimeCompilers.join(', ')} compiles code while it runs` };
  if (files.local) return { where: 'image', reason: 'requirements that are paths into the project install after the code is copied' };
  if (installsPackages) return { where: 'build-stage', reason: 'pip builds source distributions with them in a build stage; the image gets what it installed' };
  return { where: 'none', reason: 'pip installs nothing' };
}

/** URLs' user information (an index token, a password) blanked: anyone who can pull the image reads its labels. */
function withCredentialsBlanked(text: string): string {
  return text.replace(/([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^/@\s"]+@/g, '$1***@');
}

function imageLabels(manifest: Manifest, svcVersion: string, notes: string[]): Array<[string, string]> {
  const compact = withCredentialsBlanked(JSON.stringify(JSON.parse(renderManifest(manifest))));
  const manifestLabel: [string, string] =
    compact.length <= MANIFEST_LABEL_LIMIT
      ? ['svc.manifest', compact]
      : ['svc.manifest.sha256', createHash('sha256').update(renderManifest(manifest)).digest('hex')];
  if (manifestLabel[0] !== 'svc.manifest') notes.push('the manifest is too large for a label: the image carries its sha256 instead');
  return [
    ['org.opencontainers.image.title', singleLine(manifest.title) || 'service'],
    ['org.opencontainers.image.description', `svc service: ${manifest.endpoints.length} endpoint(s), ${manifest.compute}, ${manifest.provider}`],
    ['svc.version', svcVersion],
    ['svc.entrypoint', manifest.entrypoint],
    manifestLabel,
  ];
}

/** For --base-image: CUDA images by name, since the manifest's GPU verdict is about its own choice. */
function looksLikeGpuImage(image: string): boolean {
  return /cuda|cudnn|-gpu|nvidia|pytorch\/pytorch/i.test(image);
}

/** An image whose service file Python cannot read would only fail when it starts. */
function refuseBrokenService([first, ...more]: readonly string[]): void {
  if (first === undefined) return;
  const others = more.length === 0 ? '' : ` (and ${more.length} more: svc scan lists them)`;
  throw new SvcError('invalid-project', `${first}${others}; Python cannot run the service as it is, so the image would not start: fix it and build again`);
}
