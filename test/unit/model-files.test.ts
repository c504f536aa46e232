import { describe, expect, it } from 'vitest';
import { findModelFiles } from '../../src/scan/model-files.js';

describe('recognising model files', () => {
  it('counts weight formats at any size and generic ones from 1 MiB, sorted by path', () => {
    const files = [
      { path: 'models/unet.safetensors', size: 10 },
      { path: 'model.onnx', size: 2 },
      { path: 'vocab.bin', size: 512 },
      { path: 'models/pytorch_model.bin', size: 5 * 1024 * 1024 },
      { path: 'service.py', size: 300 },
      { path: 'README.md', size: 100 },
    ];
    expect(findModelFiles(files)).toEqual([
      { path: 'model.onnx', size: 2 },
      { path: 'models/pytorch_model.bin', size: 5 * 1024 * 1024 },
      { path: 'models/unet.safetensors', size: 10 },
    ]);
  });
});
