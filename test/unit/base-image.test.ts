import { describe, expect, it } from 'vitest';
import { satisfies, valid } from '@renovatebot/pep440';
import { baseImageWarnings, chooseBaseImage } from '../../src/scan/base-image.js';
import { BASE_IMAGE_CATALOG } from '../../src/image/base-image-catalog.js';
import catalogJson from '../../src/image/base-images.json' with { type: 'json' };
import { detectFrameworks } from '../../src/scan/frameworks.js';
import { parseRequirement } from '../../src/scan/pep508.js';
import type { LocatedRequirement } from '../../src/scan/requirements.js';

const catalog = BASE_IMAGE_CATALOG;

function requirements(...lines: string[]): LocatedRequirement[] {
  return lines.map((text, index) => {
    const parsed = parseRequirement(text);
    if ('error' in parsed) throw new Error(parsed.error);
    return { ...parsed.requirement, source: { file: 'requirements.txt', line: index + 1 }, hashes: [] };
  });
}

function choose(lines: string[], options: { indexUrls?: string[]; python?: string; admits?: string[] } = {}) {
  const frameworks = detectFrameworks({ requirements: requirements(...lines), indexUrls: options.indexUrls ?? [] });
  const pythonVersion = options.python ?? '3.11';
  return chooseBaseImage({ frameworks, pythonVersion, pythonAdmits: options.admits ?? [pythonVersion] }, catalog);
}

describe('CUDA users the chosen image does not fit', () => {
  function mismatches(lines: string[]) {
    const frameworks = detectFrameworks({ requirements: requirements(...lines), indexUrls: [] });
    return baseImageWarnings(frameworks, chooseBaseImage({ frameworks, pythonVersion: '3.11', pythonAdmits: ['3.11'] }, catalog), catalog, '3.11');
  }

  it('names onnxruntime-gpu built for another CUDA than the image torch decided', () => {
    expect(mismatches(['torch==2.4.1', 'onnxruntime-gpu==1.17.1'])).toEqual([{
      source: 'requirements.txt:2',
      message:
        'onnxruntime-gpu 1.17.1 needs CUDA 11.8 and cuDNN 8, but the image has CUDA 12.4 with cuDNN 9 (PyTorch 2.4.1): ' +
        'ONNX Runtime would run on the CPU; pin a release built for that CUDA',
    }]);
  });

  it('says nothing when they agree, or when onnxruntime-gpu chose the image itself', () => {
    expect(mismatches(['torch==2.4.1', 'onnxruntime-gpu==1.20.1'])).toEqual([]);
    expect(mismatches(['onnxruntime-gpu==1.17.1'])).toEqual([]);
    expect(mismatches(['torch==2.4.1', 'onnxruntime==1.17.1'])).toEqual([]);
  });
});

describe('choosing the base image', () => {
  it('uses the slim image of the project Python when no framework is used', () => {
    expect(choose(['requests', 'numpy'], { python: '3.12' })).toEqual({
      image: 'python:3.12-slim-bookworm',
      variant: 'slim',
      cuda: null,
      python: '3.12',
      reason: 'no GPU framework',
    });
  });

  it("uses a CUDA image for torch from the nightly index, whose CUDA it names, not a PyTorch image whose stable torch would win", () => {
    expect(choose(['torch'], { indexUrls: ['https://download.pytorch.org/whl/nightly/cu126'] })).toMatchObject({
      image: 'nvidia/cuda:12.6.3-cudnn-runtime-ubuntu22.04',
      cuda: '12.6.3',
      reason: "torch from PyTorch's nightly index, which a PyTorch image's own torch would keep out: CUDA 12.6.3 with cuDNN 9",
    });
  });

  it('uses the slim image for torch built for ROCm, which brings its own runtime, and says why', () => {
    expect(choose(['torch==2.4.1'], { indexUrls: ['https://download.pytorch.org/whl/rocm6.1'] })).toMatchObject({
      image: 'python:3.11-slim-bookworm',
      cuda: null,
      reason: 'torch for ROCm (AMD GPUs), whose wheels bring the ROCm runtime: no CUDA image',
    });
  });

  it('uses the PyTorch runtime image of a pinned torch, newest CUDA first', () => {
    const choice = choose(['torch==2.4.1', 'torchvision==0.19.1']);
    expect(choice).toMatchObject({
      image: 'pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime',
      variant: 'runtime',
      cuda: '12.4',
      python: '3.11',
    });
    expect(choice.reason).toContain('PyTorch 2.4.1');
  });

  it("takes no PyTorch image whose Python the project does not allow, which would leave pip installing a second torch", () => {
    const pinned = choose(['torch==2.2.2'], { python: '3.12' });
    expect(pinned).toMatchObject({ image: 'nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04', python: null });
    expect(pinned.reason).toBe(
      'no PyTorch image for torch==2.2.2 with Python 3.12 (its images ship 3.10); torch 2.2.2, built for CUDA 12.1, installs from the requirements: CUDA 12.1.1 with cuDNN 8',
    );
    // A range takes the newest release that has an image of an allowed Python.
    expect(choose(['torch>=1.7'], { python: '3.10' }).image).toBe('pytorch/pytorch:2.3.1-cuda12.1-cudnn8-runtime');
    expect(choose(['torch>=1.7'], { python: '3.10', admits: ['3.10', '3.11', '3.12', '3.13'] }).image).toBe('pytorch/pytorch:2.9.1-cuda12.8-cudnn9-runtime');
  });

  it('takes no TensorFlow image whose Python it does not know, or one the project does not allow', () => {
    expect(choose(['tensorflow>=1.9.0'], { admits: ['3.10', '3.11', '3.12', '3.13'] })).toMatchObject({ image: 'tensorflow/tensorflow:2.18.0-gpu', python: '3.11' });
    const unknownPython = choose(['tensorflow==2.15.0']);
    expect(unknownPython).toMatchObject({ image: 'nvidia/cuda:12.2.2-cudnn8-runtime-ubuntu22.04' });
    expect(unknownPython.reason).toContain('no TensorFlow GPU image for tensorflow==2.15.0 with Python 3.11 (its images ship an unknown Python)');
    expect(choose(['tensorflow==2.13.0'], { python: '3.10' }).image).toBe('nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04');
  });

  it('takes the CUDA release from a +cu local version', () => {
    expect(choose(['torch==2.4.1+cu121'])).toMatchObject({
      image: 'pytorch/pytorch:2.4.1-cuda12.1-cudnn9-runtime',
      cuda: '12.1',
    });
  });

  it('uses a CUDA image of the asked-for release rather than another CUDA build of the same torch', () => {
    const choice = choose(['torch==2.1.1+cu118']);
    expect(choice.image).toMatch(/^nvidia\/cuda:11\.8\./);
    expect(choice.reason).toContain('no PyTorch image');
  });

  it('takes the CUDA release from the PyTorch index URL', () => {
    expect(choose(['torch==2.5.1'], { indexUrls: ['https://download.pytorch.org/whl/cu121'] })).toMatchObject({
      image: 'pytorch/pytorch:2.5.1-cuda12.1-cudnn9-runtime',
      cuda: '12.1',
    });
    expect(choose(['torch==2.7.1'], { indexUrls: ['https://download.pytorch.org/whl/cu118'] }).image).toBe(
      'pytorch/pytorch:2.7.1-cuda11.8-cudnn9-runtime',
    );
  });

  it('picks the newest catalogued release that satisfies an unpinned range', () => {
    expect(choose(['torch>=2.3,<2.5']).image).toBe('pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime');
  });

  it('uses the devel variant when a requirement compiles CUDA code', () => {
    const choice = choose(['torch==2.4.1', 'flash-attn==2.6.3']);
    expect(choice).toMatchObject({ image: 'pytorch/pytorch:2.4.1-cuda12.4-cudnn9-devel', variant: 'devel' });
    expect(choice.reason).toContain('devel variant because flash-attn compiles CUDA code');
  });

  it('keeps the runtime variant for a prebuilt flash-attn wheel, which compiles nothing', () => {
    const wheel = 'https://github.com/Dao-AILab/flash-attention/releases/download/v2.8.3/flash_attn-2.8.3+cu12torch2.9cxx11abiTRUE-cp311-cp311-linux_x86_64.whl';
    expect(choose(['torch==2.9.1', `flash-attn @ ${wheel}`])).toMatchObject({ image: 'pytorch/pytorch:2.9.1-cuda12.8-cudnn9-runtime', variant: 'runtime' });
  });

  it('uses the TensorFlow GPU image of a pinned tensorflow', () => {
    const choice = choose(['tensorflow==2.16.1']);
    expect(choice).toMatchObject({ image: 'tensorflow/tensorflow:2.16.1-gpu', variant: 'runtime', cuda: '12.3', python: '3.11' });
    expect(choice.reason).toContain('TensorFlow 2.16.1 GPU');
  });

  it('falls back to a CUDA devel image of the TensorFlow release when a compiler is needed', () => {
    const choice = choose(['tensorflow==2.15.0', 'apex']);
    expect(choice).toMatchObject({ image: 'nvidia/cuda:12.2.2-cudnn8-devel-ubuntu22.04', variant: 'devel', cuda: '12.2.2' });
    expect(choice.reason).toContain('no TensorFlow GPU image for tensorflow==2.15.0 with a compiler');
  });

  it("uses a CUDA image of the CUDA and cuDNN major a TensorFlow release without its own image was built for", () => {
    for (const lines of [['tensorflow>=2.10.0,<2.11.0'], ['tensorflow==2.11.0']]) {
      const choice = choose(lines, { python: '3.10' });
      expect(choice).toMatchObject({ image: 'nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04', cuda: '11.8.0' });
      expect(choice.reason).toContain('built for CUDA 11.2 and cuDNN 8.1: CUDA 11.8.0 with cuDNN 8; no CUDA 11.2 image, so the same major release, whose libraries it loads');
    }
  });

  it('warns when it cannot know the CUDA of the TensorFlow pip installs, rather than take the newest silently', () => {
    const warnings = (lines: string[]) => {
      const frameworks = detectFrameworks({ requirements: requirements(...lines), indexUrls: [] });
      return baseImageWarnings(frameworks, chooseBaseImage({ frameworks, pythonVersion: '3.10', pythonAdmits: ['3.10'] }, catalog), catalog, '3.10').map((warning) => warning.message);
    };
    expect(warnings(['tensorflow==2.21.0'])).toEqual([
      'tensorflow==2.21.0: svc knows the CUDA TensorFlow was built for only for releases 2.4 to 2.18, so the image\'s CUDA 12.9.1 is a guess, ' +
        'and on the wrong one TensorFlow runs on the CPU; pin a release from 2.4 to 2.18',
    ]);
    expect(warnings(['tensorflow==2.11.0'])).toEqual([]);
  });

  it('uses a CUDA + cuDNN image matching the ONNX Runtime requirements table', () => {
    const old = choose(['onnxruntime-gpu==1.18.0']);
    expect(old).toMatchObject({ image: 'nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04', cuda: '11.8.0', python: null });
    expect(old.reason).toBe('onnxruntime-gpu 1.18.0 needs CUDA 11.8 and cuDNN 8: CUDA 11.8.0 with cuDNN 8');

    const current = choose(['onnxruntime-gpu==1.20.1']);
    expect(current.image).toMatch(/^nvidia\/cuda:12\.[0-9.]+-cudnn9?-runtime-ubuntu22\.04$/);
    expect(current.reason).toContain('needs CUDA 12 and cuDNN 9');
    const image = catalog.cuda.images.find((candidate) => candidate.image === current.image);
    expect(image?.cudnn).toBe('9');
  });

  it('chooses the CUDA of onnxruntime-gpu by its own version, not that of onnx listed beside it', () => {
    const choice = choose(['onnx==1.17.0', 'onnxruntime-gpu==1.20.1']);
    expect(choice.image).toBe(choose(['onnxruntime-gpu==1.20.1']).image);
    expect(choice.reason).toContain('onnxruntime-gpu 1.20.1 needs CUDA 12 and cuDNN 9');
  });

  it('takes no TensorFlow image for keras alone, which installs no TensorFlow', () => {
    expect(choose(['keras==3.3.3', 'onnxruntime-gpu==1.20.1']).image).toBe(choose(['onnxruntime-gpu==1.20.1']).image);
  });

  it('falls back to a CUDA image, and says so, for a torch release the catalog lacks', () => {
    const choice = choose(['torch==1.13.1']);
    expect(choice.image).toMatch(/^nvidia\/cuda:/);
    expect(choice.variant).toBe('runtime');
    expect(choice.reason).toContain('no PyTorch image for torch==1.13.1; torch 1.13.1 installs from the requirements');
  });

  it('keeps to the CUDA releases of the torch minor when only the patch release is missing', () => {
    const choice = choose(['torch==2.3.9']);
    expect(choice.image).toBe('nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04');
    expect(choice.reason).toContain('no PyTorch image for torch==2.3.9');
  });

  it('chooses an image for an exact pin that is not a PEP 440 version, which matches no catalogued release', () => {
    const torch = choose(['torch===>2']);
    expect(torch.image).toMatch(/^nvidia\/cuda:/);
    expect(torch.reason).toContain('no PyTorch image for torch===>2');
    expect(choose(['tensorflow===latest']).reason).toContain('no TensorFlow GPU image for tensorflow===latest');
    expect(choose(['onnxruntime-gpu===foo']).reason).toContain('onnxruntime-gpu (newest) needs CUDA');
  });

  it('uses the slim Python image for a CPU-only torch', () => {
    const viaIndex = choose(['torch==2.4.1'], { indexUrls: ['https://download.pytorch.org/whl/cpu'], python: '3.10' });
    expect(viaIndex).toMatchObject({ image: 'python:3.10-slim-bookworm', variant: 'slim', cuda: null });
    expect(viaIndex.reason).toBe('no GPU needed (torch without CUDA)');
    expect(choose(['torch==2.4.1+cpu']).image).toBe('python:3.11-slim-bookworm');
  });
});

describe('torch the project does not pin, or never names', () => {
  function warnings(lines: string[], options: { indexUrls?: string[]; python?: string } = {}) {
    const frameworks = detectFrameworks({ requirements: requirements(...lines), indexUrls: options.indexUrls ?? [] });
    const python = options.python ?? '3.11';
    return baseImageWarnings(frameworks, chooseBaseImage({ frameworks, pythonVersion: python, pythonAdmits: [python] }, catalog), catalog, python).map(
      (warning) => warning.message,
    );
  }

  it('takes the PyTorch image whose torch a pinned torchaudio, torchvision or triton goes with, so pip keeps it', () => {
    expect(choose(['torchaudio==2.5.1', 'torch'])).toMatchObject({
      image: 'pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime',
      reason: 'PyTorch 2.5.1 (torch unpinned; torchaudio==2.5.1 needs torch==2.5.1) with CUDA 12.4',
    });
    expect(choose(['torch>=2.0.1', 'triton==2.0.0'], { python: '3.10' }).image).toBe('pytorch/pytorch:2.0.1-cuda11.7-cudnn8-runtime');
  });

  it('installs torch from the requirements on a CUDA image when the torch a pin needs has no image, rather than have pip replace an image torch', () => {
    const choice = choose(['torch', 'torchvision==0.25.0'], { python: '3.10' });
    expect(choice.image).toBe('nvidia/cuda:12.8.1-cudnn-runtime-ubuntu22.04');
    expect(choice.reason).toBe(
      'no PyTorch image for torch unpinned; torchvision==0.25.0 needs torch==2.10.0; torch 2.10.0, built for CUDA 12.8, installs from the requirements: CUDA 12.8.1 with cuDNN 9',
    );
  });

  it('counts packages that require torch as torch users: the image is a CUDA one with torch, not a slim "no GPU needed" one', () => {
    for (const user of ['lightning>=2.1.0', 'pytorch_lightning==1.9.4', 'sentence-transformers', 'ultralytics==8.3.40']) {
      const frameworks = detectFrameworks({ requirements: requirements(user), indexUrls: [] });
      expect(frameworks.cuda, user).toBe(true);
      expect(frameworks.cudaPackages, user).toEqual([requirements(user)[0]?.key]);
      expect(choose([user]).image, user).toBe('pytorch/pytorch:2.9.1-cuda12.8-cudnn9-runtime');
    }
    expect(choose(['lightning'], { indexUrls: ['https://download.pytorch.org/whl/cpu'] }).image).toBe('python:3.11-slim-bookworm');
  });

  it("says when pip installs a CUDA 13 torch from PyPI, which needs NVIDIA driver 580, and takes a CUDA 13 image for it", () => {
    expect(choose(['torch==2.12.0'])).toMatchObject({ image: 'nvidia/cuda:13.0.1-cudnn-runtime-ubuntu22.04', cuda: '13.0.1' });
    expect(warnings(['torch==2.12.0'])).toEqual([
      'torch 2.12.0 from PyPI is built for CUDA 13.0 and needs NVIDIA driver 580 or newer on the host, else torch.cuda.is_available() is false: ' +
        'pin torch<2.11 for a CUDA 12 build, or install it from https://download.pytorch.org/whl/cu128 with --index-url',
    ]);
    expect(warnings(['torch==2.9.1'])).toEqual([]);
    expect(warnings(['torch==2.10.0'])).toEqual([]);
  });

  it('says when an --extra-index-url for an older CUDA loses to PyPI, whose newer torch pip takes', () => {
    const index = ['https://download.pytorch.org/whl/cu124'];
    // With an image of that CUDA, pip keeps the image's torch.
    expect(choose(['torch', 'torchaudio'], { indexUrls: index }).image).toBe('pytorch/pytorch:2.6.0-cuda12.4-cudnn9-runtime');
    expect(warnings(['torch'], { indexUrls: index })).toEqual([]);
    // Without one (no image of Python 3.12), pip takes PyPI's newest.
    expect(choose(['torch'], { indexUrls: index, python: '3.12' }).image).toBe('nvidia/cuda:13.0.1-cudnn-runtime-ubuntu22.04');
    expect(warnings(['torch'], { indexUrls: index, python: '3.12' })).toEqual([
      "torch unpinned: pip takes PyPI's newest torch for Python 3.12, 2.15.0 (as of svc's table), not a build from the --extra-index-url for CUDA 12.4, " +
        'which has none as new (pip takes the newest release of any index); it is built for CUDA 13.2 and needs NVIDIA driver 580 or newer on the host, ' +
        'else torch.cuda.is_available() is false: pin torch to a release that index has (==X+cu124), or make it the --index-url',
    ]);
  });
});

describe('the base-image catalog', () => {
  const frameworkImages = [
    ...catalog.pytorch.images.map((image) => ({ ...image, version: image.torch })),
    ...catalog.tensorflow.images.map((image) => ({ ...image, version: image.tensorflow })),
  ];

  it('has PyTorch tags that spell out their own torch, CUDA, cuDNN and variant', () => {
    for (const image of catalog.pytorch.images) {
      expect(image.image).toBe(`pytorch/pytorch:${image.torch}-cuda${image.cuda}-cudnn${image.cudnn}-${image.variant}`);
      const listed = catalog.pytorch.cudaByRelease[(image.torch ?? '').split('.').slice(0, 2).join('.')];
      expect(listed, image.image).toContain(image.cuda);
    }
  });

  it('has TensorFlow tags that spell out their version, with the CUDA of the tested configuration', () => {
    for (const image of catalog.tensorflow.images) {
      expect(image.image).toBe(`tensorflow/tensorflow:${image.tensorflow}-gpu`);
      expect(image.variant).toBe('runtime');
      const release = catalog.tensorflow.cudaByRelease[(image.tensorflow ?? '').split('.').slice(0, 2).join('.')];
      expect(release, image.image).toEqual({ cuda: image.cuda, cudnn: expect.stringMatching(new RegExp(`^${image.cudnn}\\.`)) });
    }
  });

  it('has CUDA tags that spell out their CUDA, cuDNN, variant and OS', () => {
    for (const image of catalog.cuda.images) {
      const cudnnPart = image.image.includes('-cudnn-') ? 'cudnn' : `cudnn${image.cudnn}`;
      expect(image.image).toBe(`nvidia/cuda:${image.cuda}-${cudnnPart}-${image.variant}-${image.os}`);
      expect(image.python).toBeNull();
      // The unversioned "cudnn" tags carry cuDNN 9.
      if (cudnnPart === 'cudnn') expect(image.cudnn).toBe('9');
    }
  });

  it('has valid versions, known variants and no duplicate tags', () => {
    const tags = [...frameworkImages, ...catalog.cuda.images, ...catalog.python.images].map((image) => image.image);
    expect(new Set(tags).size).toBe(tags.length);
    for (const image of [...frameworkImages, ...catalog.cuda.images]) {
      expect(['runtime', 'devel']).toContain(image.variant);
      expect(valid(image.cuda), image.image).not.toBeNull();
      expect(['8', '9']).toContain(image.cudnn);
      expect(image.python === null || /^3\.\d+$/.test(image.python), image.image).toBe(true);
    }
    for (const image of frameworkImages) expect(valid(image.version ?? ''), image.image).not.toBeNull();
  });

  it('offers both variants of every PyTorch and CUDA image', () => {
    for (const images of [catalog.pytorch.images, catalog.cuda.images]) {
      const tags = new Set(images.map((image) => image.image));
      for (const image of images) {
        const other = image.variant === 'runtime' ? 'devel' : 'runtime';
        expect(tags.has(image.image.replace(new RegExp(`-${image.variant}(?=$|-)`), `-${other}`)), image.image).toBe(true);
      }
    }
  });

  it('has python images whose tags spell out their Python', () => {
    for (const image of catalog.python.images) expect(image.image).toBe(`python:${image.python}-slim-bookworm`);
  });

  it('has an ONNX Runtime table, oldest first, whose every rule has a CUDA image of each variant', () => {
    const rules = catalog.onnxruntime.cudaByVersion;
    expect(rules.length).toBeGreaterThan(0);
    expect(satisfies('1.18.0', rules[0]?.versions ?? '')).toBe(true);
    expect(satisfies('1.22.0', rules.at(-1)?.versions ?? '')).toBe(true);
    for (const rule of rules) {
      for (const variant of ['runtime', 'devel']) {
        const fitting = catalog.cuda.images.filter(
          (image) =>
            image.variant === variant &&
            image.cudnn === rule.cudnn &&
            (image.cuda === rule.cuda || image.cuda.startsWith(`${rule.cuda}.`)),
        );
        expect(fitting.length, `${rule.versions} ${variant}`).toBeGreaterThan(0);
      }
    }
  });

  it('has a CUDA image of the CUDA and cuDNN major every catalogued TensorFlow release was built with', () => {
    for (const [release, entry] of Object.entries(catalog.tensorflow.cudaByRelease)) {
      if (typeof entry === 'string') continue;
      const found = catalog.cuda.images.some(
        (image) => image.cuda.split('.')[0] === entry.cuda.split('.')[0] && image.cudnn === entry.cudnn.split('.')[0],
      );
      expect(found, `tensorflow ${release}: CUDA ${entry.cuda}`).toBe(true);
    }
  });

  it('names its sources', () => {
    expect(Object.keys(catalogJson.sources).sort()).toEqual(['cuda', 'onnxruntime', 'python', 'pytorch', 'tensorflow']);
  });
});
