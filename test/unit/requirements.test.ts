import { describe, expect, it } from 'vitest';
import { formatDiagnostic } from '../../src/scan/diagnostic.js';
import { linuxImageEnvironment } from '../../src/scan/markers.js';
import { readRequirements } from '../../src/scan/requirements.js';

function read(files: Record<string, string>, entry = 'requirements.txt') {
  return readRequirements(entry, (path) => files[path] ?? null, linuxImageEnvironment('3.11'));
}

const names = (list: Array<{ name: string }>) => list.map((requirement) => requirement.name);

describe('reading requirements.txt', () => {
  it('reads names, extras, specifiers and the line each comes from, skipping comments', () => {
    const set = read({
      'requirements.txt': '# models\ntorch==2.4.1  # pinned for CUDA 12.4\n\nuvicorn[standard] >= 0.30, <1\n',
    });
    expect(set.requirements).toMatchObject([
      { name: 'torch', specifier: '==2.4.1', source: { file: 'requirements.txt', line: 2 } },
      { name: 'uvicorn', extras: ['standard'], specifier: '>=0.30,<1', source: { line: 4 } },
    ]);
    expect(set.diagnostics).toEqual([]);
  });

  it('joins backslash continuations and reports the first line', () => {
    const set = read({ 'requirements.txt': 'numpy \\\n  >=1.26 \\\n  --hash=sha256:abc123\npillow\n' });
    expect(set.requirements).toMatchObject([
      { name: 'numpy', specifier: '>=1.26', hashes: ['sha256:abc123'], source: { line: 1 } },
      { name: 'pillow', source: { line: 4 } },
    ]);
  });

  it('evaluates markers for linux x86_64 and the image Python, keeping the rest aside', () => {
    const set = read({
      'requirements.txt': [
        'pywin32 ; sys_platform == "win32"',
        'uvloop ; sys_platform == "linux"',
        'tomli ; python_version < "3.11"',
        'triton ; platform_machine == "x86_64"',
      ].join('\n'),
    });
    expect(names(set.requirements)).toEqual(['uvloop', 'triton']);
    expect(names(set.skipped)).toEqual(['pywin32', 'tomli']);
  });

  it('follows -r and -c relative to the including file and records every file read', () => {
    const set = read({
      'requirements.txt': '-r requirements/base.txt\n--constraint=requirements/pins.txt\nrequests\n',
      'requirements/base.txt': '-r common.txt\nfastapi\n',
      'requirements/common.txt': 'numpy\n',
      'requirements/pins.txt': 'numpy==1.26.4\n',
    });
    expect(names(set.requirements)).toEqual(['numpy', 'fastapi', 'requests']);
    expect(set.constraints).toMatchObject([{ name: 'numpy', specifier: '==1.26.4', source: { file: 'requirements/pins.txt' } }]);
    expect(set.files).toEqual(['requirements.txt', 'requirements/base.txt', 'requirements/common.txt', 'requirements/pins.txt']);
  });

  it('detects an include cycle and stops instead of looping', () => {
    const set = read({ 'requirements.txt': '-r a.txt\ntorch\n', 'a.txt': 'numpy\n-r requirements.txt\n' });
    expect(names(set.requirements)).toEqual(['numpy', 'torch']);
    expect(set.diagnostics.map(formatDiagnostic)).toEqual([
      'a.txt:2: requirements.txt includes itself through requirements.txt -> a.txt -> requirements.txt; not read again',
    ]);
  });

  it('names a missing include with the line that asks for it', () => {
    const set = read({ 'requirements.txt': 'torch\n-r missing.txt\n' });
    expect(set.diagnostics.map(formatDiagnostic)).toEqual(['requirements.txt:2: missing.txt not found']);
    expect(names(set.requirements)).toEqual(['torch']);
  });

  it('records index options and ignores options pip handles alone', () => {
    const set = read({
      'requirements.txt': [
        '--index-url https://download.pytorch.org/whl/cu121',
        '--extra-index-url=https://pypi.org/simple',
        '-f https://data.pyg.org/whl/torch-2.4.0+cu121.html',
        '--trusted-host example.org',
        '--prefer-binary',
        'torch',
      ].join('\n'),
    });
    expect(set.indexUrl).toBe('https://download.pytorch.org/whl/cu121');
    expect(set.extraIndexUrls).toEqual(['https://pypi.org/simple']);
    expect(set.findLinks).toEqual(['https://data.pyg.org/whl/torch-2.4.0+cu121.html']);
    expect(set.diagnostics).toEqual([]);
  });

  it('reads URL, VCS and local-path requirements, with names where pip knows them', () => {
    const set = read({
      'requirements.txt': [
        'git+https://github.com/huggingface/diffusers.git@v0.30.0#egg=diffusers',
        'https://example.org/wheels/flash_attn-2.6.3-cp311-cp311-linux_x86_64.whl',
        '-e ./libs/local_pkg',
        'mylib @ https://example.org/mylib-1.0.tar.gz ; python_version >= "3.10"',
      ].join('\n'),
    });
    expect(set.requirements).toMatchObject([
      { name: 'diffusers', key: 'diffusers', url: 'git+https://github.com/huggingface/diffusers.git@v0.30.0#egg=diffusers' },
      { name: 'flash_attn', key: 'flash-attn' },
      { name: '', url: './libs/local_pkg', editable: true },
      { name: 'mylib', url: 'https://example.org/mylib-1.0.tar.gz', marker: 'python_version >= "3.10"' },
    ]);
  });

  it('reports a line it cannot parse as file:line and reads on', () => {
    const set = read({ 'requirements.txt': 'torch\nnot a valid == requirement!\n--frobnicate\npillow\n' });
    expect(names(set.requirements)).toEqual(['torch', 'pillow']);
    const messages = set.diagnostics.map(formatDiagnostic);
    expect(messages).toHaveLength(2);
    expect(messages[0]).toMatch(/^requirements\.txt:2: /);
    expect(messages[1]).toBe('requirements.txt:3: unknown option --frobnicate');
  });

  it('rejects a malformed hash', () => {
    const set = read({ 'requirements.txt': 'torch --hash=abc\n' });
    expect(set.diagnostics.map(formatDiagnostic)).toEqual(['requirements.txt:1: --hash abc: expected ALGORITHM:HEXDIGEST']);
  });
});
