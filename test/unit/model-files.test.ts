import { describe, expect, it } from 'vitest';
import { findModelFiles, mightBeModelFile } from '../../src/scan/model-files.js';

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

  it('asks for the size of every file whose extension could be weights, in any case, and of no other', () => {
    const candidates = ['model.safetensors', 'MODEL.PT', 'x.Pth', 'a.h5', 'g.pb', 'arrays.npy', 'vocab.bin', 'w.GGUF'];
    const others = ['service.py', 'notes.txt', 'run.log', 'pt', '.pt', 'a.pt.py', 'model.safetensors.json', 'Makefile', 'x.pbx'];
    expect(candidates.filter(mightBeModelFile)).toEqual(candidates);
    expect(others.filter(mightBeModelFile)).toEqual([]);
  });
});
