import { describe, expect, it } from 'vitest';
import { detectFrameworks } from '../../src/scan/frameworks.js';
import { parseRequirement } from '../../src/scan/pep508.js';
import type { LocatedRequirement } from '../../src/scan/requirements.js';

function requirements(...lines: string[]): LocatedRequirement[] {
  return lines.map((text, index) => {
    const parsed = parseRequirement(text);
    if ('error' in parsed) throw new Error(parsed.error);
    return { ...parsed.requirement, source: { file: 'requirements.txt', line: index + 1 }, hashes: [] };
  });
}

describe('detecting frameworks', () => {
  it('reports the pinned torch version and every PyTorch package, and needs CUDA', () => {
    const report = detectFrameworks({
      requirements: requirements('torchvision==0.19.1', 'torch==2.4.1', 'diffusers>=0.30', 'transformers'),
      indexUrls: [],
    });
    expect(report.frameworks.pytorch).toEqual({
      package: 'torch',
      specifier: '==2.4.1',
      version: '2.4.1',
      packages: ['torch', 'torchvision'],
      source: 'requirements.txt:2',
    });
    expect(report.frameworks.diffusers?.version).toBeNull();
    expect(report.frameworks.transformers?.specifier).toBe('');
    expect(report.cuda).toBe(true);
    expect(report.cudaPackages).toEqual(['torch']);
    expect(report.compilerPackages).toEqual([]);
  });

  it("never takes one package's version for another's: onnx is no onnxruntime, keras no tensorflow, torchvision no torch", () => {
    const versions = (...lines: string[]) => {
      const { frameworks } = detectFrameworks({ requirements: requirements(...lines), indexUrls: [] });
      return Object.fromEntries(Object.entries(frameworks).map(([name, use]) => [name, [use.package, use.specifier, use.version]]));
    };
    expect(versions('onnx==1.17.0', 'onnxruntime-gpu==1.20.1')).toEqual({ onnx: ['onnxruntime-gpu', '==1.20.1', '1.20.1'] });
    expect(versions('onnxruntime==1.17.0', 'onnxruntime-gpu==1.20.1')).toEqual({ onnx: ['onnxruntime-gpu', '==1.20.1', '1.20.1'] });
    expect(versions('keras==3.3.3', 'tensorflow-gpu==2.10.0')).toEqual({ tensorflow: ['tensorflow-gpu', '==2.10.0', '2.10.0'] });
    expect(versions('sentence-transformers==3.0.1', 'transformers==4.44.0')).toEqual({
      pytorch: ['sentence-transformers', '', null],
      transformers: ['transformers', '==4.44.0', '4.44.0'],
    });
    // Without a version package, the framework is used but its version is not stated.
    expect(versions('onnx==1.17.0', 'torchvision==0.20.1', 'keras==3.3.3', 'sentence-transformers==3.0.1')).toEqual({
      onnx: ['onnx', '', null],
      pytorch: ['sentence-transformers', '', null],
      tensorflow: ['keras', '', null],
      transformers: ['sentence-transformers', '', null],
    });
  });

  it('takes the CUDA release from a +cu local version or the PyTorch index', () => {
    expect(detectFrameworks({ requirements: requirements('torch==2.1.0+cu118'), indexUrls: [] })).toMatchObject({
      requestedCuda: '11.8',
      frameworks: { pytorch: { version: '2.1.0' } },
    });
    const viaIndex = detectFrameworks({
      requirements: requirements('torch>=2.3'),
      indexUrls: ['https://download.pytorch.org/whl/cu121'],
    });
    expect(viaIndex.requestedCuda).toBe('12.1');
  });

  it('a CPU build of torch needs no CUDA', () => {
    expect(detectFrameworks({ requirements: requirements('torch==2.4.1+cpu'), indexUrls: [] }).cuda).toBe(false);
    const cpuIndex = detectFrameworks({
      requirements: requirements('torch'),
      indexUrls: ['https://download.pytorch.org/whl/cpu'],
    });
    expect(cpuIndex.cuda).toBe(false);
    const cpuFindLinks = detectFrameworks({
      requirements: requirements('torch==2.3.1'),
      indexUrls: ['https://download.pytorch.org/whl/cpu/torch_stable.html'],
    });
    expect(cpuFindLinks.cuda).toBe(false);
  });

  it('a ROCm build of torch needs no CUDA, and says it is one', () => {
    for (const [lines, indexUrls] of [
      [['torch==2.4.1+rocm6.1'], []],
      [['torch==2.4.1', 'torchvision'], ['https://download.pytorch.org/whl/rocm6.1']],
      [['torch'], ['https://download.pytorch.org/whl/nightly/rocm6.2/']],
      [['torch @ https://download.pytorch.org/whl/rocm6.1/torch-2.4.1%2Brocm6.1-cp310-cp310-linux_x86_64.whl'], []],
    ] as const) {
      const report = detectFrameworks({ requirements: requirements(...lines), indexUrls });
      expect([report.cuda, report.rocm], lines.join(' ')).toEqual([false, true]);
    }
    expect(detectFrameworks({ requirements: requirements('torch==2.4.1'), indexUrls: [] }).rocm).toBe(false);
  });

  it("takes torch's version and CUDA release from a wheel URL's file name", () => {
    const report = detectFrameworks({
      requirements: requirements('torch @ https://download.pytorch.org/whl/cu121/torch-2.3.1%2Bcu121-cp311-cp311-linux_x86_64.whl'),
      indexUrls: [],
    });
    expect(report).toMatchObject({ requestedCuda: '12.1', frameworks: { pytorch: { version: '2.3.1', specifier: '' } } });
  });

  it('onnxruntime runs on CPU, onnxruntime-gpu needs CUDA', () => {
    expect(detectFrameworks({ requirements: requirements('onnxruntime==1.18.0'), indexUrls: [] })).toMatchObject({
      cuda: false,
      frameworks: { onnx: { package: 'onnxruntime', version: '1.18.0' } },
    });
    const gpu = detectFrameworks({ requirements: requirements('onnxruntime-gpu==1.20.1'), indexUrls: [] });
    expect(gpu.cuda).toBe(true);
    expect(gpu.frameworks.onnx?.package).toBe('onnxruntime-gpu');
  });

  it('flash-attn needs a CUDA compiler', () => {
    const report = detectFrameworks({ requirements: requirements('torch==2.4.1', 'flash-attn==2.6.3'), indexUrls: [] });
    expect(report.compilerPackages).toEqual(['flash-attn']);
    expect(report.cudaPackages).toEqual(['flash-attn', 'torch']);
  });

  it('adds the system packages a requirement needs, and git for VCS requirements', () => {
    const report = detectFrameworks({
      requirements: requirements('opencv-python', 'soundfile', 'mylib @ git+https://github.com/example/mylib.git'),
      indexUrls: [],
    });
    expect(report.systemPackages).toEqual(['git', 'libgl1', 'libglib2.0-0', 'libsndfile1']);
  });

  it('adds ffmpeg for requirements that run it (pydub, moviepy, whisper, torchaudio), not for those that ship their own', () => {
    for (const name of ['pydub', 'moviepy', 'openai-whisper', 'torchaudio', 'librosa']) {
      expect(detectFrameworks({ requirements: requirements(name), indexUrls: [] }).systemPackages).toContain('ffmpeg');
    }
    expect(detectFrameworks({ requirements: requirements('av', 'imageio-ffmpeg', 'opencv-python-headless'), indexUrls: [] }).systemPackages).toEqual(['libglib2.0-0']);
  });

  it('finds nothing in a project without ML packages', () => {
    const report = detectFrameworks({ requirements: requirements('requests', 'numpy'), indexUrls: [] });
    expect(report).toEqual({
      frameworks: {},
      cuda: false,
      cudaPackages: [],
      requestedCuda: null,
      rocm: false,
      nightlyTorch: false,
      torch: null,
      compilerPackages: [],
      systemPackages: [],
    });
  });
});
