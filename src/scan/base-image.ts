import { compare, satisfies, valid } from '@renovatebot/pep440';
import type { FrameworkReport, FrameworkUse } from './frameworks.js';

/** The shape of src/build/base-images.json. */
export interface BaseImageCatalog {
  pytorch: { images: FrameworkImage[]; cudaByRelease: Record<string, string[] | string> };
  tensorflow: { images: FrameworkImage[]; cudaByRelease: Record<string, { cuda: string; cudnn: string } | string> };
  cuda: { images: CudaImage[] };
  onnxruntime: { cudaByVersion: Array<{ versions: string; cuda: string; cudnn: string }> };
  python: { images: Array<{ image: string; python: string }> };
}

interface CatalogImage {
  image: string;
  cuda: string;
  cudnn: string;
  variant: Variant;
  python: string | null;
}
type FrameworkImage = CatalogImage & { torch?: string; tensorflow?: string };
type CudaImage = CatalogImage & { os: string };
type Variant = 'runtime' | 'devel';

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
  pythonVersion: string;
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

  if (pytorch && report.cudaPackages.includes('torch') && report.nightlyTorch) {
    return cudaFallback(catalog, variant, report.requestedCuda ? [report.requestedCuda] : [], null,
      "torch from PyTorch's nightly index, which a PyTorch image's own torch would keep out", variantNote);
  }
  if (pytorch && report.cudaPackages.includes('torch')) {
    const image = pickFrameworkImage(catalog.pytorch.images, 'torch', pytorch, variant, request, report.requestedCuda);
    if (image) return fromCatalog(image, `PyTorch ${image.torch} (${describe(pytorch)}) with CUDA ${image.cuda}${variantNote}`);
    const cudas = cudaList(catalog.pytorch.cudaByRelease[minorOf(pytorch.version ?? '')]);
    return cudaFallback(catalog, variant, report.requestedCuda ? [report.requestedCuda] : cudas, null,
      `no PyTorch image for ${describe(pytorch)}; torch installs from the requirements`, variantNote);
  }
  const tensorflowNeedsCuda = tensorflow !== undefined && ['tensorflow', 'tensorflow-gpu'].some((key) => report.cudaPackages.includes(key));
  if (tensorflow && tensorflowNeedsCuda && variant === 'runtime') {
    const image = pickFrameworkImage(catalog.tensorflow.images, 'tensorflow', tensorflow, variant, request, null);
    if (image) return fromCatalog(image, `TensorFlow ${image.tensorflow} GPU (${describe(tensorflow)}) with CUDA ${image.cuda}`);
  }
  if (tensorflow && tensorflowNeedsCuda) {
    const release = catalog.tensorflow.cudaByRelease[minorOf(tensorflow.version ?? '')];
    const cuda = typeof release === 'object' ? [release.cuda] : [];
    return cudaFallback(catalog, variant, cuda, null,
      `no TensorFlow GPU image for ${describe(tensorflow)}${variant === 'devel' ? ' with a compiler' : ''}; tensorflow installs from the requirements`,
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
 * onnxruntime-gpu beside torch or tensorflow gets the image that framework decided, and its
 * CUDA provider loads only on the CUDA and cuDNN its release was built for: on another,
 * ONNX Runtime quietly runs on the CPU. Says so, naming the requirement (`file:line`).
 */
export function cudaMismatches(report: FrameworkReport, choice: BaseImageChoice, catalog: BaseImageCatalog): Array<{ source: string; message: string }> {
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

function pickFrameworkImage(
  images: FrameworkImage[],
  versionField: 'torch' | 'tensorflow',
  use: FrameworkUse,
  variant: Variant,
  request: BaseImageRequest,
  requestedCuda: string | null,
): FrameworkImage | null {
  const matching = images.filter((image) => {
    const version = image[versionField];
    if (image.variant !== variant || version === undefined) return false;
    if (use.version) return compare(version, use.version) === 0;
    return use.specifier === '' || satisfies(version, use.specifier);
  });
  const newest = newestBy(matching, (image) => image[versionField] as string);
  const sameRelease = matching.filter((image) => image[versionField] === newest);
  if (requestedCuda) {
    // Another CUDA build of the same torch would satisfy pip's `torch==X` and quietly
    // replace the CUDA the user asked for, so no image is better than the wrong one.
    const wantedCuda = sameRelease.filter((image) => minorOf(image.cuda) === requestedCuda);
    return preferPythonThenNewestCuda(wantedCuda, request.pythonVersion);
  }
  return preferPythonThenNewestCuda(sameRelease, request.pythonVersion);
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
  const fitting = images.filter(
    (image) =>
      (cudaVersions.length === 0 || cudaVersions.some((wanted) => cudaMatches(image.cuda, wanted))) &&
      (cudnnMajor === null || image.cudnn === cudnnMajor),
  );
  const image = preferPythonThenNewestCuda(fitting.length ? fitting : images, null);
  if (!image) throw new Error(`the base-image catalog has no ${variant} CUDA image`);
  const settled = fitting.length ? '' : `; no CUDA image matches ${cudaVersions.join(' or ')}, newest used`;
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
