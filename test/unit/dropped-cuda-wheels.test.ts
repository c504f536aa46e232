import { describe, expect, it } from 'vitest';
import { formatDiagnostic } from '../../src/scan/diagnostic.js';
import { droppedCudaWheels } from '../../src/scan/dropped-cuda-wheels.js';
import { linuxImageEnvironment } from '../../src/scan/markers.js';
import { readRequirements } from '../../src/scan/requirements.js';

// oobabooga/text-generation-webui requirements/full/requirements.txt: every CUDA wheel is for Python 3.11.
const release = 'https://github.com/oobabooga/llama-cpp-binaries/releases/download/v0.6.0';
const flash = 'https://github.com/Dao-AILab/flash-attention/releases/download/v2.7.4.post1';
const REQUIREMENTS = [
  'transformers==4.50.*',
  'bitsandbytes==0.45.*',
  `${release}/llama_cpp_binaries-0.6.0+cu124-py3-none-win_amd64.whl; platform_system == "Windows" and python_version == "3.11"`,
  `${release}/llama_cpp_binaries-0.6.0+cu124-py3-none-linux_x86_64.whl; platform_system == "Linux" and platform_machine == "x86_64" and python_version == "3.11"`,
  `${flash}/flash_attn-2.7.4.post1+cu12torch2.6cxx11abiFALSE-cp311-cp311-linux_x86_64.whl; platform_system == "Linux" and platform_machine == "x86_64" and python_version == "3.11"`,
].join('\n');

function warnings(python: string, text = REQUIREMENTS): string[] {
  const set = readRequirements('requirements.txt', () => text, linuxImageEnvironment(python));
  return droppedCudaWheels(set.requirements, set.skipped, { version: python, source: 'default' }).map(formatDiagnostic);
}

describe('CUDA requirements that the markers leave out on the image Python', () => {
  it('says when markers drop every CUDA wheel on the chosen Python, naming the Python they are for', () => {
    expect(warnings('3.10')).toEqual([
      'requirements.txt:4: the markers leave out every CUDA wheel (llama_cpp_binaries, flash_attn) on Python 3.10 (default): ' +
        'they are for Python 3.11, so the image gets none of them; ask for Python 3.11 in .python-version to install them',
    ]);
  });

  it('says nothing when one installs, or when the lines are for another platform only', () => {
    expect(warnings('3.11')).toEqual([]);
    expect(warnings('3.10', `${release}/llama_cpp_binaries-0.6.0+cu124-py3-none-win_amd64.whl; platform_system == "Windows"`)).toEqual([]);
  });
});
