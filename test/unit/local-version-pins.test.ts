import { describe, expect, it } from 'vitest';
import { formatDiagnostic } from '../../src/scan/diagnostic.js';
import { localPinsWithoutIndex } from '../../src/scan/local-version-pins.js';
import { linuxImageEnvironment } from '../../src/scan/markers.js';
import { readRequirements } from '../../src/scan/requirements.js';

function warnings(text: string): string[] {
  const set = readRequirements('requirements.txt', () => text, linuxImageEnvironment('3.10'));
  const indexUrls = [set.indexUrl, ...set.extraIndexUrls, ...set.findLinks].filter((url): url is string => url !== null);
  return localPinsWithoutIndex(set.requirements, indexUrls).map(formatDiagnostic);
}

describe('pins of local versions with no index that serves them', () => {
  it('says pip will not find torch==X+cpu on PyPI alone, and names the PyTorch index that has it', () => {
    expect(warnings('torch==1.12.0+cpu\ntorchvision==0.13.0+cu116\nnumpy==1.26.4\n')).toEqual([
      'requirements.txt:1: torch==1.12.0+cpu: PyPI serves no local versions (+cpu), and the requirements name no other index, so pip will not find it; ' +
        'add --extra-index-url https://download.pytorch.org/whl/cpu to the requirements',
      'requirements.txt:2: torchvision==0.13.0+cu116: PyPI serves no local versions (+cu116), and the requirements name no other index, so pip will not find it; ' +
        'add --extra-index-url https://download.pytorch.org/whl/cu116 to the requirements',
    ]);
    expect(warnings('--index-url https://pypi.org/simple\nmypkg==1.0+internal\n')).toEqual([
      'requirements.txt:2: mypkg==1.0+internal: PyPI serves no local versions (+internal), and the requirements name no other index, so pip will not find it; ' +
        'name the index that serves it with --extra-index-url',
    ]);
  });

  it('says nothing when an index or a find-links location could serve it', () => {
    expect(warnings('--extra-index-url https://download.pytorch.org/whl/cu118\ntorch==2.0.1+cu118\n')).toEqual([]);
    expect(warnings('-f https://download.pytorch.org/whl/torch_stable.html\ntorch==1.12.0+cpu\n')).toEqual([]);
    expect(warnings('torch==2.0.1\n')).toEqual([]);
  });
});
