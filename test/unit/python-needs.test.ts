import { describe, expect, it } from 'vitest';
import { parseRequirement } from '../../src/scan/pep508.js';
import { pythonNeeds } from '../../src/scan/python-needs.js';
import type { LocatedRequirement } from '../../src/scan/requirements.js';

function located(text: string): LocatedRequirement {
  const parsed = parseRequirement(text);
  if ('error' in parsed) throw new Error(parsed.error);
  return { ...parsed.requirement, source: { file: 'requirements.txt', line: 1 }, hashes: [] };
}

function fromUrl(url: string): LocatedRequirement {
  return { name: 'pkg', key: 'pkg', extras: [], specifier: '', marker: null, url, editable: false, source: { file: 'requirements.txt', line: 1 }, hashes: [] };
}

describe('the Pythons a requirement can be installed into', () => {
  it('reads a wheel URL built for one CPython, its file name percent-encoded or followed by a hash', () => {
    expect(pythonNeeds([
      fromUrl('https://download.pytorch.org/whl/cu121/torch-2.4.0%2Bcu121-cp310-cp310-linux_x86_64.whl'),
      fromUrl('https://example.org/numpy-1.26.4-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl#sha256=abc'),
      fromUrl('./wheels/old-1.0-cp39-cp39m-linux_x86_64.whl'),
    ]).map((need) => need.versions)).toEqual([['3.10'], ['3.12'], ['3.9']]);
  });

  it('says nothing of wheels for any Python 3, for the stable ABI, or of what is no wheel', () => {
    expect(pythonNeeds([
      fromUrl('https://example.org/requests-2.32.0-py3-none-any.whl'),
      fromUrl('https://example.org/cryptography-43.0.0-cp39-abi3-manylinux_2_28_x86_64.whl'),
      fromUrl('git+https://github.com/org/repo.git@v1#egg=repo'),
      fromUrl('https://example.org/pkg-1.0.tar.gz'),
    ])).toEqual([]);
  });

  it("reads a pinned release's Pythons from PyPI's wheels, and says what pip does on another", () => {
    const [torch] = pythonNeeds([located('torch==2.1.2')]);
    expect(torch?.versions).toEqual(['3.8', '3.9', '3.10', '3.11']);
    expect(torch?.reason).toBe('torch 2.1.2 has wheels for Python 3.8 to 3.11');
    expect(torch?.mismatch('3.13')).toBe(
      'torch 2.1.2 publishes wheels for Python 3.8 to 3.11, not 3.13: pip will find none to install; pin a release with wheels for 3.13, or ask for Python 3.11',
    );
    expect(pythonNeeds([located('onnxruntime-gpu==1.26.0')])[0]?.versions).toEqual(['3.11', '3.12', '3.13', '3.14']);
  });

  it('knows the old pins of compiled packages that install from wheels on Python 3.10 at most, and that pip would build them from source', () => {
    const needs = pythonNeeds([located('numba==0.56.4'), located('tokenizers==0.12.1'), located('scikit-image==0.19.3'), located('numpy==1.26.4')]);
    expect(needs.map((need) => [need.requirement.key, need.versions.at(-1)])).toEqual([
      ['numba', '3.10'],
      ['tokenizers', '3.10'],
      ['scikit-image', '3.10'],
      ['numpy', '3.12'],
    ]);
    expect(needs[0]?.mismatch('3.11')).toBe(
      'numba 0.56.4 publishes wheels for Python 3.8 to 3.10, not 3.11: pip will build it from its source distribution, which may need a compiler or Rust, ' +
        'or refuse that Python; pin a release with wheels for 3.11, or ask for Python 3.10',
    );
  });

  it('follows a pinned transformers to the tokenizers it pins, whose wheels stop at Python 3.10 for transformers 4.20', () => {
    const [need] = pythonNeeds([located('transformers==4.20.0')]);
    expect(need?.versions).toEqual(['3.8', '3.9', '3.10']);
    expect(need?.reason).toBe('transformers 4.20.0 needs tokenizers!=0.11.3,<0.13,>=0.11.1, with wheels for Python 3.8 to 3.10');
    expect(need?.mismatch('3.11')).toContain('pip will build it from source, which may need a compiler or Rust');
    expect(pythonNeeds([located('transformers==4.44.0')])[0]?.versions).toEqual(['3.8', '3.9', '3.10', '3.11', '3.12']);
  });

  it('leaves ranges, unpinned requirements and packages it has no table for to pip', () => {
    expect(pythonNeeds([located('torch>=2.1,<2.3'), located('tensorflow'), located('fastapi==0.112.4')])).toEqual([]);
  });
});
