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

  it("splits a marker off as pip's parse_req_from_line does: after '; ' in a URL, after ';' in `name @ URL`", () => {
    const wheel = 'https://example.com/foo-1.0-py3-none-any.whl';
    const set = read({
      'requirements.txt': [
        `${wheel}; python_version == "2.7"`,
        `foo @ ${wheel}; python_version == "2.7"`,
        'git+https://github.com/example/foo.git#egg=foo; python_version == "2.7"',
        `bar @ ${wheel};sys_platform == "linux"`,
        'https://example.com/semi;colon/baz-2.0-py3-none-any.whl ; sys_platform == "linux"',
      ].join('\n'),
    });
    expect(set.skipped).toMatchObject([
      { name: 'foo', url: wheel, marker: 'python_version == "2.7"' },
      { name: 'foo', url: wheel, marker: 'python_version == "2.7"' },
      { name: 'foo', url: 'git+https://github.com/example/foo.git#egg=foo', marker: 'python_version == "2.7"' },
    ]);
    expect(set.requirements).toMatchObject([
      { name: 'bar', url: wheel, marker: 'sys_platform == "linux"' },
      { name: 'baz', url: 'https://example.com/semi;colon/baz-2.0-py3-none-any.whl', marker: 'sys_platform == "linux"' },
    ]);
    expect(set.diagnostics).toEqual([]);
  });

  it("refuses a URL whose ';' has no space after it, which pip reads as part of the URL and cannot fetch", () => {
    const set = read({ 'requirements.txt': 'https://example.com/foo-1.0-py3-none-any.whl ;python_version == "2.7"\n' });
    expect(set.requirements).toEqual([]);
    expect(set.skipped).toEqual([]);
    expect(set.unreadable.map(formatDiagnostic)).toEqual([
      "requirements.txt:1: 'https://example.com/foo-1.0-py3-none-any.whl ;python_version == \"2.7\"': pip takes a URL's marker only after '; ' " +
        "(a semicolon, then a space), so it reads the marker as part of the URL and cannot fetch it; write 'URL; marker'",
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

  it('refuses a URL with no host, which pip cannot fetch either', () => {
    const set = read({ 'requirements.txt': 'http://\ngit+https://#egg=x\nfile:///wheels/x.whl\n' });
    expect(set.unreadable.map(formatDiagnostic)).toEqual([
      "requirements.txt:1: 'http://': a URL without a host",
      "requirements.txt:2: 'git+https://#egg=x': a URL without a host",
    ]);
    expect(set.requirements.map((requirement) => requirement.url)).toEqual(['file:///wheels/x.whl']);
  });

  it('rejects a malformed hash', () => {
    const set = read({ 'requirements.txt': 'torch --hash=abc\n' });
    expect(set.diagnostics.map(formatDiagnostic)).toEqual(['requirements.txt:1: --hash abc: expected ALGORITHM:HEXDIGEST']);
  });

  it('never continues a comment line, as pip does not: a Windows path ending in \ swallows nothing', () => {
    const set = read({ 'requirements.txt': '# models live in C:\\temp\\\nrequests==2.31.0\nnumpy \\\n  # a comment ends the continuation\npillow\n' });
    expect(names(set.requirements)).toEqual(['requests', 'numpy', 'pillow']);
    expect(set.diagnostics).toEqual([]);
  });

  it('installs what -r names even inside a constraints file, and reads a file included both ways twice', () => {
    const nested = read({
      'requirements.txt': '-c constraints.txt\nflask\n',
      'constraints.txt': 'numpy==1.26.4\n-r more.txt\n',
      'more.txt': 'scipy==1.13.0\n',
    });
    expect(names(nested.requirements)).toEqual(['scipy', 'flask']);
    expect(names(nested.constraints)).toEqual(['numpy']);
    const bothWays = read({ 'requirements.txt': '-c pins.txt\n-r pins.txt\n', 'pins.txt': 'numpy==1.26.4\nscipy==1.13.0\n' });
    expect(names(bothWays.requirements)).toEqual(['numpy', 'scipy']);
    expect(names(bothWays.constraints)).toEqual(['numpy', 'scipy']);
    expect(bothWays.files).toEqual(['requirements.txt', 'pins.txt']);
  });

  it('reads option values written against the option, and absolute include paths as written', () => {
    const set = read({ 'requirements.txt': '-rdev.txt\n-r /srv/shared/base.txt\n-e.\n', 'dev.txt': 'pytest\n', '/srv/shared/base.txt': 'numpy\n' });
    expect(set.requirements).toMatchObject([{ name: 'pytest' }, { name: 'numpy' }, { name: '', url: '.', editable: true }]);
    expect(set.files).toEqual(['requirements.txt', 'dev.txt', '/srv/shared/base.txt']);
  });

  it('reads paths and archives the way pip tells them from names, extras included', () => {
    const set = read({
      'requirements.txt': ['.[dev]', '-e .[gpu,cli]', 'libs/pkg', 'wheels/x_pkg-1.0-py3-none-any.whl', 'tool-2.0.tar.gz', 'git+https://github.com/org/repo.git@v1', 'docs;extra=="a/b"'].join('\n'),
    });
    expect(set.requirements).toMatchObject([
      { name: '', url: '.', extras: ['dev'], editable: false },
      { name: '', url: '.', extras: ['gpu', 'cli'], editable: true },
      { name: '', url: 'libs/pkg' },
      { name: 'x_pkg', key: 'x-pkg', url: 'wheels/x_pkg-1.0-py3-none-any.whl' },
      { name: 'tool', url: 'tool-2.0.tar.gz' },
      { name: '', url: 'git+https://github.com/org/repo.git@v1' },
    ]);
    expect(set.skipped).toMatchObject([{ name: 'docs', url: null, marker: 'extra=="a/b"' }]);
    expect(set.diagnostics).toEqual([]);
  });

  it('keeps the whole-install options and hashes pip would act on, and says which per-requirement options it drops', () => {
    const hash = `sha256:${'0f'.repeat(32)}`;
    const set = read({
      'requirements.txt': [
        '--trusted-host pypi.internal:8080',
        '--pre',
        '--only-binary=:all:',
        '--no-binary lxml',
        '--require-hashes',
        '--pre',
        `requests==2.31.0 --hash=${hash}`,
        'mypkg --config-settings=--build-option=--foo',
        '--no-deps',
      ].join('\n'),
    });
    expect(set.pipOptions).toEqual(['--trusted-host pypi.internal:8080', '--pre', '--only-binary :all:', '--no-binary lxml', '--require-hashes']);
    expect(set.requirements).toMatchObject([{ name: 'requests', hashes: [hash] }, { name: 'mypkg', hashes: [] }]);
    expect(set.diagnostics.map(formatDiagnostic)).toEqual([
      "requirements.txt:8: --config-settings is not passed on to the image's pip; the requirement is installed without it",
      'requirements.txt:9: unknown option --no-deps',
    ]);
  });

  it('warns about a credential written into a URL, not one left to pip as ${VARIABLE}', () => {
    const set = read({
      'requirements.txt': [
        '--extra-index-url https://__token__:pypi-SECRET@private.example.com/simple/',
        '--index-url https://__token__:${PIP_TOKEN}@private.example.com/simple/',
        'mylib @ git+https://ghp_abc123@github.com/org/mylib.git',
        'other @ git+ssh://git@github.com/org/other.git',
      ].join('\n'),
    });
    expect(set.diagnostics.map((diagnostic) => [diagnostic.line, diagnostic.message.split(',')[0]])).toEqual([
      [1, '--extra-index-url holds a credential'],
      [3, 'its URL holds a credential'],
    ]);
    expect(set.diagnostics.map(formatDiagnostic).join('\n')).not.toContain('SECRET');
  });

  it('records an absolute path inside the project relative to it, as pip freeze writes `-e` installs', () => {
    const set = readRequirements(
      'requirements.txt',
      () => '-e /home/me/project\nlib @ file:///home/me/project/libs/my%20lib\n-e /home/me/other\n',
      linuxImageEnvironment('3.11'),
      '/home/me/project',
    );
    expect(set.requirements.map((requirement) => requirement.url)).toEqual(['.', './libs/my lib', '/home/me/other']);
    expect(set.diagnostics.map(formatDiagnostic)).toEqual([
      'requirements.txt:3: /home/me/other is outside the project, so the image will not have it and svc build leaves it out; require the package by name and version instead',
    ]);
  });

  it('warns about paths outside the project, which the image will not have', () => {
    const set = read({
      'requirements.txt': 'brotli @ file:///croot/brotli-split_1714483155106/work\n-e /home/me/src/lib\n../sibling\n./inside\n',
    });
    expect(names(set.requirements)).toEqual(['brotli', '', '', '']);
    expect(set.diagnostics.map(formatDiagnostic)).toEqual([
      'requirements.txt:1: file:///croot/brotli-split_1714483155106/work is outside the project, so the image will not have it and svc build leaves it out; require the package by name and version instead',
      'requirements.txt:2: /home/me/src/lib is outside the project, so the image will not have it and svc build leaves it out; require the package by name and version instead',
      'requirements.txt:3: ../sibling is outside the project, so the image will not have it and svc build leaves it out; require the package by name and version instead',
    ]);
  });
});
