import { describe, expect, it } from 'vitest';
import type { LocatedRequirement } from '../../src/scan/requirements.js';
import { wheelPythons } from '../../src/scan/wheel-python.js';

function fromUrl(url: string): LocatedRequirement {
  return { name: 'pkg', key: 'pkg', extras: [], specifier: '', marker: null, url, editable: false, source: { file: 'requirements.txt', line: 1 }, hashes: [] };
}

describe('the Python a wheel URL is bound to', () => {
  it('reads a CPython-only wheel, its file name percent-encoded or followed by a hash', () => {
    expect(wheelPythons([
      fromUrl('https://download.pytorch.org/whl/cu121/torch-2.4.0%2Bcu121-cp310-cp310-linux_x86_64.whl'),
      fromUrl('https://example.org/numpy-1.26.4-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl#sha256=abc'),
      fromUrl('./wheels/old-1.0-cp39-cp39m-linux_x86_64.whl'),
    ]).map((wheel) => wheel.version)).toEqual(['3.10', '3.12', '3.9']);
  });

  it('says nothing of wheels for any Python 3, for the stable ABI, or of what is no wheel', () => {
    expect(wheelPythons([
      fromUrl('https://example.org/requests-2.32.0-py3-none-any.whl'),
      fromUrl('https://example.org/cryptography-43.0.0-cp39-abi3-manylinux_2_28_x86_64.whl'),
      fromUrl('git+https://github.com/org/repo.git@v1#egg=repo'),
      fromUrl('https://example.org/pkg-1.0.tar.gz'),
    ])).toEqual([]);
  });
});
