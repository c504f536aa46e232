import { compare, satisfies, valid } from '@renovatebot/pep440';
import type { BaseImageCatalog, CatalogImage, FrameworkImage, ImageVariant as Variant } from '../image/base-image-catalog.js';
import type { FrameworkReport, FrameworkUse } from './frameworks.js';
import { meetsConstraints, newestPypiTorch, pypiTorchCuda, type TorchConstraint } from './torch-requirements.js';


export interface BaseImageChoice {
  image: string;
  /** runtime / devel for CUDA images, slim for the plain Python image. */
  variant: Variant | 'slim';
  cuda: string | null;
  /** The Python the image ships, when known; the build installs the manifest's version otherwise. */
  python: string | null;
  reason: string;
}

export interface BaseImageRequest {
  frameworks: FrameworkReport;
  /** The Python the project asks for, which the image's own is preferred to match. */
  pythonVersion: string;
  /**
   * Every Python the project and its requirements allow: a PyTorch or TensorFlow image is
   * taken only when its own Python is one of them, since under another the build installs a
   * second interpreter, into which pip installs the framework a second time.
   */
  pythonAdmits: readonly string[];
}

/**
 * Picks the image to build FROM. The most specific framework decides: a PyTorch image for
 * torch, a TensorFlow GPU image for tensorflow, a CUDA + cuDNN image for onnxruntime-gpu
 * or other CUDA users, a slim Python image when nothing needs a GPU. Devel variants only
 * when a requirement compiles CUDA code. Ties go to the image whose Python matches, then
 * to the newest CUDA.
 */
export function chooseBaseImage(request: BaseImageRequest, catalog: BaseImageCatalog): BaseImageChoice {
  const { frameworks: report, pythonVersion } = request;
  if (!report.cuda) return slimPython(pythonVersion, catalog, cpuReason(report));
  const variant: Variant = report.compilerPackages.length > 0 ? 'devel' : 'runtime';
  const variantNote =
    variant === 'devel'
      ? `; devel variant because ${report.compilerPackages.join(', ')} compile${report.compilerPackages.length === 1 ? 's' : ''} CUDA code`
      : '';
  const { pytorch, tensorflow, onnx } = report.frameworks;

  if (pytorch && report.torch?.cuda && report.nightlyTorch) {
    return cudaFallback(catalog, variant, report.requestedCuda ? [report.requestedCuda] : [], null,
      "torch from PyTorch's nightly index, which a PyTorch image's own torch would keep out", variantNote);
  }
  if (pytorch && report.torch?.cuda) {
    const { constraints } = report.torch;
    const image = pickFrameworkImage(catalog.pytorch.images, 'torch', pytorch, variant, request, report.requestedCuda, constraints);
    if (image) return fromCatalog(image, `PyTorch ${image.torch} (${describeTorch(pytorch, constraints, catalog.pytorch.images)}) with CUDA ${image.cuda}${variantNote}`);
    const installed = pipTorch(report, request.pythonVersion, catalog);
    const cuda = installed?.cuda ?? report.requestedCuda;
    const cudas = cuda ? [cuda] : cudaList(catalog.pytorch.cudaByRelease[minorOf(pytorch.version ?? '')]);
    const what = installed ? `torch ${installed.release}${installed.cuda ? `, built for CUDA ${installed.cuda},` : ''}` : 'torch';
    return cudaFallback(catalog, variant, cudas, null,
      `no PyTorch image for ${noImageFor(catalog.pytorch.images, 'torch', pytorch, variant, request, constraints)}; ${what} installs from the requirements`, variantNote);
  }
  const tensorflowNeedsCuda = tensorflow !== undefined && needsCudaTensorflow(report);
  if (tensorflow && tensorflowNeedsCuda && variant === 'runtime') {
    const image = pickFrameworkImage(catalog.tensorflow.images, 'tensorflow', tensorflow, variant, request, null);
    if (image) return fromCatalog(image, `TensorFlow ${image.tensorflow} GPU (${describe(tensorflow)}) with CUDA ${image.cuda}`);
  }
  if (tensorflow && tensorflowNeedsCuda) {
    const built = tensorflowBuild(tensorflow, catalog);
    const builtFor = built ? `, built for CUDA ${built.cuda} and cuDNN ${built.cudnn}` : '';
    return cudaFallback(catalog, variant, built ? [built.cuda] : [], built ? majorOf(built.cudnn) : null,
      `no TensorFlow GPU image for ${noImageFor(catalog.tensorflow.images, 'tensorflow', tensorflow, variant, request)}${variant === 'devel' ? ' with a compiler' : ''}; tensorflow installs from the requirements${builtFor}`,
      variantNote);
  }
  if (onnx && report.cudaPackages.includes('onnxruntime-gpu')) {
    const rule = catalog.onnxruntime.cudaByVersion.findLast((candidate) =>
      onnx.version ? satisfies(onnx.version, candidate.versions) : true,
    );
    if (rule) {
      return cudaFallback(catalog, variant, [rule.cuda], rule.cudnn,
        `onnxruntime-gpu ${onnx.version ?? '(newest)'} needs CUDA ${rule.cuda} and cuDNN ${rule.cudnn}`, variantNote);
    }
  }
  const users = report.cudaPackages.join(', ');
  return cudaFallback(catalog, variant, report.requestedCuda ? [report.requestedCuda] : [], null,
    `${users} need${report.cudaPackages.length === 1 ? 's' : ''} CUDA`, variantNote);
}

/**
 * What the chosen image may not give the requirements, each at the requirement (`file:line`):
 * the CUDA a framework was built for, where svc could not match it.
 */
export function baseImageWarnings(
  report: FrameworkReport,
  choice: BaseImageChoice,
  catalog: BaseImageCatalog,
  python: string,
): Array<{ source: string; message: string }> {
  return [...onnxRuntimeMismatch(report, choice, catalog), ...tensorflowUnknownCuda(report, choice, catalog), ...pypiTorchCuda13(report, choice, catalog, python)];
}

/**
 * torch from PyPI, where the image carries none: from 2.11 on its wheels are CUDA 13 builds,
 * which need NVIDIA driver 580 or newer, whatever CUDA the image has; and an --extra-index-url
 * of an older CUDA does not keep pip from taking them.
 */
function pypiTorchCuda13(report: FrameworkReport, choice: BaseImageChoice, catalog: BaseImageCatalog, python: string): Array<{ source: string; message: string }> {
  const pytorch = report.frameworks.pytorch;
  if (!pytorch || !report.torch?.cuda || report.nightlyTorch || catalog.pytorch.images.some((image) => image.image === choice.image)) return [];
  const installed = pipTorch(report, python, catalog);
  if (installed === null) return [];
  const cuda13 = installed.cuda !== null && Number(majorOf(installed.cuda)) >= 13;
  if (!cuda13 && installed.overshadows === null) return [];
  const which = pytorch.version
    ? `torch ${installed.release} from PyPI`
    : `${describeTorch(pytorch, [])}: pip takes PyPI's newest torch for Python ${python}, ${installed.release} (as of svc's table)`;
  const notIndex = installed.overshadows === null
    ? ''
    : `, not a build from the --extra-index-url for CUDA ${installed.overshadows}, which has none as new (pip takes the newest release of any index)`;
  const built = installed.cuda === null ? '' : `${pytorch.version ? '' : '; it'} is built for CUDA ${installed.cuda}`;
  const driver = cuda13 ? ' and needs NVIDIA driver 580 or newer on the host, else torch.cuda.is_available() is false' : '';
  const fix = installed.overshadows === null
    ? 'pin torch<2.11 for a CUDA 12 build, or install it from https://download.pytorch.org/whl/cu128 with --index-url'
    : `pin torch to a release that index has (==X+cu${installed.overshadows.replace('.', '')}), or make it the --index-url`;
  return [{ source: pytorch.source, message: `${which}${notIndex}${built}${driver}: ${fix}` }];
}

/**
 * onnxruntime-gpu beside torch or tensorflow gets the image that framework decided, and its
 * CUDA provider loads only on the CUDA and cuDNN its release was built for: on another,
 * ONNX Runtime quietly runs on the CPU.
 */
function onnxRuntimeMismatch(report: FrameworkReport, choice: BaseImageChoice, catalog: BaseImageCatalog): Array<{ source: string; message: string }> {
  const onnx = report.frameworks.onnx;
  if (!onnx || !report.cudaPackages.includes('onnxruntime-gpu') || choice.cuda === null) return [];
  const rule = catalog.onnxruntime.cudaByVersion.findLast((candidate) => (onnx.version ? satisfies(onnx.version, candidate.versions) : true));
  const image = [...catalog.pytorch.images, ...catalog.tensorflow.images, ...catalog.cuda.images].find((candidate) => candidate.image === choice.image);
  if (!rule || !image || (cudaMatches(image.cuda, rule.cuda) && image.cudnn === rule.cudnn)) return [];
  return [{
    source: onnx.source,
    message:
      `onnxruntime-gpu ${onnx.version ?? '(newest)'} needs CUDA ${rule.cuda} and cuDNN ${rule.cudnn}, but the image has CUDA ${image.cuda} ` +
      `with cuDNN ${image.cudnn} (${choice.reason.split(' (')[0]}): ONNX Runtime would run on the CPU; pin a release built for that CUDA`,
  }];
}

/**
 * tensorflow installed from the requirements, of a release whose CUDA TensorFlow's tested
 * configurations (the catalog's table) do not give: the image's CUDA is a guess, and on the
 * wrong one TensorFlow runs on the CPU.
 */
function tensorflowUnknownCuda(report: FrameworkReport, choice: BaseImageChoice, catalog: BaseImageCatalog): Array<{ source: string; message: string }> {
  const tensorflow = report.frameworks.tensorflow;
  if (!tensorflow || !needsCudaTensorflow(report) || choice.cuda === null || catalog.tensorflow.images.some((image) => image.image === choice.image)) return [];
  if (tensorflowBuild(tensorflow, catalog) !== null) return [];
  const listed = Object.keys(catalog.tensorflow.cudaByRelease).filter((release) => !release.startsWith('$'));
  return [{
    source: tensorflow.source,
    message:
      `${describe(tensorflow)}: svc knows the CUDA TensorFlow was built for only for releases ${listed[0]} to ${listed.at(-1)}, so the image's ` +
      `CUDA ${choice.cuda} is a guess, and on the wrong one TensorFlow runs on the CPU; pin a release from ${listed[0]} to ${listed.at(-1)}`,
  }];
}

/** TensorFlow that needs CUDA: tensorflow or tensorflow-gpu among the CUDA users, not tensorflow-cpu or keras alone. */
function needsCudaTensorflow(report: FrameworkReport): boolean {
  return ['tensorflow', 'tensorflow-gpu'].some((key) => report.cudaPackages.includes(key));
}

function pickFrameworkImage(
  images: FrameworkImage[],
  versionField: 'torch' | 'tensorflow',
  use: FrameworkUse,
  variant: Variant,
  request: BaseImageRequest,
  requestedCuda: string | null,
  constraints: readonly TorchConstraint[] = [],
): FrameworkImage | null {
  const matching = releaseImages(images, versionField, use, variant, constraints).filter(
    (image) =>
      image.python !== null &&
      request.pythonAdmits.includes(image.python) &&
      // Another CUDA build of the same torch would satisfy pip's `torch==X` and quietly
      // replace the CUDA the user asked for, so no image is better than the wrong one.
      (requestedCuda === null || minorOf(image.cuda) === requestedCuda),
  );
  const newest = newestBy(matching, (image) => image[versionField] as string);
  return preferPythonThenNewestCuda(matching.filter((image) => image[versionField] === newest), request.pythonVersion);
}

/** Why no PyTorch or TensorFlow image fits: none of the release, or none of a Python the project allows. */
function noImageFor(
  images: FrameworkImage[],
  versionField: 'torch' | 'tensorflow',
  use: FrameworkUse,
  variant: Variant,
  request: BaseImageRequest,
  constraints: readonly TorchConstraint[] = [],
): string {
  const wanted = versionField === 'torch' ? describeTorch(use, constraints, images) : describe(use);
  const ofRelease = releaseImages(images, versionField, use, variant, constraints);
  if (ofRelease.length === 0 || ofRelease.some((image) => image.python !== null && request.pythonAdmits.includes(image.python))) return wanted;
  const shipped = [...new Set(ofRelease.map((image) => image.python ?? 'an unknown Python'))].join(' or ');
  return `${wanted} with Python ${request.pythonAdmits.join(' or ')} (its images ship ${shipped})`;
}

/** The images of the variant whose framework release the requirement line and the torch constraints allow, whatever their Python. */
function releaseImages(
  images: FrameworkImage[],
  versionField: 'torch' | 'tensorflow',
  use: FrameworkUse,
  variant: Variant,
  constraints: readonly TorchConstraint[],
): FrameworkImage[] {
  return images.filter((image) => {
    const version = image[versionField];
    return version !== undefined && image.variant === variant && meetsConstraints(version, constraints) && allowsRelease(use, version);
  });
}

/** Whether the requirement line lets pip keep this release: the pinned one, or one the specifier allows. */
function allowsRelease(use: FrameworkUse, version: string): boolean {
  if (use.version) return compare(version, use.version) === 0;
  return use.specifier === '' || satisfies(version, use.specifier);
}

/**
 * The torch pip installs from PyPI where no PyTorch image carries it: the pinned release, else
 * PyPI's newest that the constraints and the Python allow (as of svc's table), with the CUDA it
 * is built for. `overshadows` is the CUDA of an --extra-index-url that pip passes over, since
 * it takes the newest release of any index and that index stopped before (cu124: torch 2.6).
 */
function pipTorch(report: FrameworkReport, python: string, catalog: BaseImageCatalog): { release: string; cuda: string | null; overshadows: string | null } | null {
  const pytorch = report.frameworks.pytorch;
  if (!pytorch || !report.torch?.fromPypi) return null;
  const release = pytorch.version ?? newestPypiTorch(pytorch.specifier, report.torch.constraints, python);
  if (release === null) return null;
  const requested = report.requestedCuda;
  if (requested === null) return { release, cuda: pypiTorchCuda(release), overshadows: null };
  // A pin matches the index's +cuXYZ build, which pip ranks above PyPI's of the same version.
  if (pytorch.version !== null) return null;
  const minors = Object.entries(catalog.pytorch.cudaByRelease).flatMap(([minor, cudas]) => (Array.isArray(cudas) ? [{ minor, cudas }] : []));
  const lastWith = minors.filter(({ cudas }) => cudas.includes(requested)).map(({ minor }) => minor).sort((a, b) => compare(`${a}.0`, `${b}.0`)).at(-1);
  const stopped = lastWith !== undefined && minors.some(({ minor }) => compare(`${minor}.0`, `${lastWith}.0`) > 0);
  if (!stopped || compare(minorOf(release), lastWith) <= 0) return null;
  return { release, cuda: pypiTorchCuda(release), overshadows: requested };
}

/**
 * `torch unpinned; torchaudio==2.5.1 needs torch==2.5.1`, or `torch through lightning` when the
 * project never names torch; of the constraints, those that rule out a catalogued release the
 * torch line allows, which are the ones that decided.
 */
function describeTorch(use: FrameworkUse, constraints: readonly TorchConstraint[], images: readonly FrameworkImage[] = []): string {
  const own = use.package === 'torch' ? describe(use) : `torch through ${use.package}`;
  const allowed = images.flatMap((image) => (image.torch !== undefined && allowsRelease(use, image.torch) ? [image.torch] : []));
  const deciding = constraints.filter((constraint) => allowed.some((torch) => !meetsConstraints(torch, [constraint])));
  return [own, ...deciding.map((constraint) => constraint.because)].join('; ');
}

function cudaFallback(
  catalog: BaseImageCatalog,
  variant: Variant,
  cudaVersions: string[],
  cudnnMajor: string | null,
  why: string,
  variantNote: string,
): BaseImageChoice {
  const images = catalog.cuda.images.filter((image) => image.variant === variant);
  const defaults = images.filter((image) => majorOf(image.cuda) === catalog.cuda.defaultMajor);
  const fitting = (cudaVersions.length === 0 ? defaults : images).filter(
    (image) =>
      (cudaVersions.length === 0 || cudaVersions.some((wanted) => cudaMatches(image.cuda, wanted))) &&
      (cudnnMajor === null || image.cudnn === cudnnMajor),
  );
  // Libraries load across minor releases of one CUDA major (libcudart.so.11.0 serves 11.2 and 11.8 alike).
  const sameMajor = images.filter(
    (image) => cudaVersions.some((wanted) => majorOf(image.cuda) === majorOf(wanted)) && (cudnnMajor === null || image.cudnn === cudnnMajor),
  );
  const pool = fitting.length ? fitting : sameMajor.length ? sameMajor : defaults;
  const image = preferPythonThenNewestCuda(pool, null);
  if (!image) throw new Error(`the base-image catalog has no ${variant} CUDA image`);
  const settled = fitting.length
    ? ''
    : sameMajor.length
      ? `; no CUDA ${cudaVersions.join(' or ')} image, so the same major release, whose libraries it loads`
      : `; no CUDA image matches ${cudaVersions.join(' or ')}, newest used`;
  return fromCatalog(image, `${why}: CUDA ${image.cuda} with cuDNN ${image.cudnn}${settled}${variantNote}`);
}

function slimPython(pythonVersion: string, catalog: BaseImageCatalog, reason: string): BaseImageChoice {
  const entry = catalog.python.images.find((image) => image.python === pythonVersion);
  if (!entry) throw new Error(`the base-image catalog has no image for Python ${pythonVersion}`);
  return { image: entry.image, variant: 'slim', cuda: null, python: entry.python, reason };
}

function cpuReason(report: FrameworkReport): string {
  if (report.rocm) return 'torch for ROCm (AMD GPUs), whose wheels bring the ROCm runtime: no CUDA image';
  const used = Object.values(report.frameworks).map((use) => use.package);
  return used.length === 0 ? 'no GPU framework' : `no GPU needed (${used.join(', ')} without CUDA)`;
}

function fromCatalog(image: CatalogImage, reason: string): BaseImageChoice {
  return { image: image.image, variant: image.variant, cuda: image.cuda, python: image.python, reason };
}

function preferPythonThenNewestCuda<T extends CatalogImage>(images: T[], python: string | null): T | null {
  const samePython = python ? images.filter((image) => image.python === python) : [];
  const pool = samePython.length ? samePython : images;
  const newestCuda = newestBy(pool, (image) => image.cuda);
  return pool.find((image) => image.cuda === newestCuda) ?? null;
}

function newestBy<T>(items: T[], version: (item: T) => string): string | null {
  const versions = items.map(version).filter((candidate) => valid(candidate) !== null);
  versions.sort(compare);
  return versions.at(-1) ?? null;
}

/** "12.4.1" matches a wanted "12.4" or "12"; "12.4" matches "12.4.1" too. */
function cudaMatches(imageCuda: string, wanted: string): boolean {
  return imageCuda === wanted || imageCuda.startsWith(`${wanted}.`) || wanted.startsWith(`${imageCuda}.`);
}

/**
 * The CUDA and cuDNN TensorFlow's tested configuration gives for the release pip installs: the
 * pinned one's minor, else the newest catalogued minor the specifier allows; null when the
 * specifier allows a release newer than the table knows (pip would take that one), or none.
 */
function tensorflowBuild(use: FrameworkUse, catalog: BaseImageCatalog): { release: string; cuda: string; cudnn: string } | null {
  const known = Object.entries(catalog.tensorflow.cudaByRelease).flatMap(([release, entry]) =>
    typeof entry === 'object' ? [{ release, ...entry }] : [],
  );
  if (use.version) return known.find((entry) => entry.release === minorOf(use.version as string)) ?? null;
  const allowed = known.filter((entry) => allowsMinor(use.specifier, entry.release));
  const newest = allowed.sort((a, b) => compare(`${a.release}.0`, `${b.release}.0`)).at(-1);
  if (newest === undefined) return null;
  const [major, minor] = newest.release.split('.').map(Number) as [number, number];
  return allowsMinor(use.specifier, `${major}.${minor + 1}`) ? null : newest;
}

function allowsMinor(specifier: string, minor: string): boolean {
  return specifier === '' || satisfies(`${minor}.0`, specifier) || satisfies(`${minor}.99`, specifier);
}

function majorOf(version: string): string {
  return version.split('.')[0] as string;
}

function minorOf(version: string): string {
  return version.split('.').slice(0, 2).join('.');
}

function cudaList(entry: string[] | string | undefined): string[] {
  return Array.isArray(entry) ? entry : [];
}

function describe(use: FrameworkUse): string {
  if (use.specifier) return `${use.package}${use.specifier}`;
  return use.version ? `${use.package} ${use.version} from its wheel's URL` : `${use.package} unpinned`;
}
