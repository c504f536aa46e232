import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectGolden } from '../support/golden.js';
import { copyProject, REPO_ROOT, runSvc, SVC_BIN } from '../support/svc.js';

const EXAMPLES = join(REPO_ROOT, 'examples');
const PROJECTS = join(REPO_ROOT, 'test/fixtures/projects');
const GOLDEN = join(REPO_ROOT, 'test/golden/scan');
const ANSI = /\u001b\[/;

const projects = [
  ...readdirSync(EXAMPLES).map((name) => join(EXAMPLES, name)),
  ...readdirSync(PROJECTS).map((name) => join(PROJECTS, name)),
];

describe('svc scan', () => {
  for (const source of projects) {
    const name = source.split('/').at(-1) as string;
    it(`writes the reviewed manifest for ${name}, the same bytes every time`, async () => {
      const project = copyProject(source);
      const first = await runSvc(['scan', project]);
      // The one project whose requirements svc build refuses: the scan refuses them too, and writes its manifest all the same.
      const refused = name === 'messy-requirements';
      expect(first.stderr.includes('error:')).toBe(refused);
      expect(first.exitCode).toBe(refused ? 1 : 0);
      const manifest = readFileSync(join(project, 'apipod-deploy/apipod.json'), 'utf8');
      expectGolden(manifest, join(GOLDEN, `${name}.json`));
      await runSvc(['scan', project]);
      expect(readFileSync(join(project, 'apipod-deploy/apipod.json'), 'utf8')).toBe(manifest);
    });
  }

  it('prints a plain summary without colour when stdout is not a terminal', async () => {
    const project = copyProject(join(EXAMPLES, 'hello'));
    const run = await runSvc(['scan', project]);
    expect(run.stdout).toMatch(/^Scanned Hello: wrote /);
    expect(run.stdout).toContain('base image: python:3.10-slim-bookworm');
    expect(run.stdout).toContain('endpoints: POST /hello; POST /add');
    expect(run.stdout).not.toMatch(ANSI);
  });

  it('colours only when asked to, and never with NO_COLOR', async () => {
    const project = copyProject(join(PROJECTS, 'messy-requirements'));
    expect((await runSvc(['scan', project], { env: { FORCE_COLOR: '1' } })).stderr).toMatch(ANSI);
    expect((await runSvc(['scan', project], { env: { FORCE_COLOR: '1', NO_COLOR: '1' } })).stderr).not.toMatch(ANSI);
  });

  it('decides colour per stream: on a terminal, a stderr sent to a file gets no escape codes', async () => {
    const project = copyProject(join(EXAMPLES, 'hello'));
    writeFileSync(join(project, 'requirements.txt'), 'torch==1.12.0+cpu\n'); // a warning, which svc build does not refuse
    const errors = join(project, 'stderr.txt');
    const inner = [process.execPath, SVC_BIN, 'scan', project].map((word) => `'${word}'`).join(' ');
    const { NO_COLOR: _, FORCE_COLOR: __, ...env } = process.env;
    // script(1) gives the command a terminal for stdout; stderr goes to the file.
    const stdout = execFileSync('script', ['-qec', `${inner} 2>'${errors}'`, '/dev/null'], { env, encoding: 'utf8' });
    expect(stdout).toMatch(ANSI);
    expect(readFileSync(errors, 'utf8')).toContain('warning:');
    expect(readFileSync(errors, 'utf8')).not.toMatch(ANSI);
  });

  it("escapes control characters from the project's text, so a cloned repository cannot drive the terminal", async () => {
    const project = copyProject(join(EXAMPLES, 'hello'));
    writeFileSync(join(project, 'requirements.txt'), 'numpy==1.26.4\nfoo \u001b[2J\u001b]0;pwned\u0007 bar\n');
    const run = await runSvc(['scan', project]);
    expect(run.stderr).toContain('\\x1b[2J\\x1b]0;pwned\\x07');
    expect(run.stderr + run.stdout).not.toMatch(/[\u0007\u001b]/);
  });

  it('says which dependency files are not files it can read, rather than skipping them or waiting on a pipe', async () => {
    const project = copyProject(join(EXAMPLES, 'hello'));
    mkdirSync(join(project, 'requirements.txt'));
    execFileSync('mkfifo', [join(project, '.python-version')]);
    symlinkSync(join(project, 'gone.toml'), join(project, 'pyproject.toml'));
    const run = await runSvc(['scan', project]);
    expect(run.stderr).toContain('warning: requirements.txt: is a directory, not a file svc can read; the scan goes on without it');
    expect(run.stderr).toContain('warning: .python-version: is not a regular file, not a file svc can read; the scan goes on without it');
    expect(run.stderr).toContain('warning: pyproject.toml: is a symbolic link to nothing; the scan goes on without it');
    // An image built without the requirements would lack them: refused, as svc build refuses it.
    expect([run.exitCode, run.stderr.trim().split('\n').at(-1)]).toEqual([
      1,
      'error: requirements.txt: is a directory, not a file svc can read (and 1 more unreadable line: svc scan lists them); pip cannot read it either, so the image would lack it: fix it and build again',
    ]);
  });

  it('refuses an empty --entrypoint as bad usage', async () => {
    const run = await runSvc(['scan', join(EXAMPLES, 'hello'), '--entrypoint', '']);
    expect([run.exitCode, run.stderr.trim()]).toEqual([2, "error: option '--entrypoint <file>' argument '' is invalid. expected a file name, e.g. service.py"]);
  });

  it('gives machines the manifest and its path with --json', async () => {
    const project = copyProject(join(EXAMPLES, 'image'));
    const run = await runSvc(['scan', project, '--json']);
    const answer = JSON.parse(run.stdout);
    expect(answer.manifest_path).toBe(join(project, 'apipod-deploy/apipod.json'));
    expect(answer.manifest.endpoints.map((endpoint: { path: string }) => endpoint.path)).toEqual(['/grayscale', '/thumbnail']);
    expect(answer.manifest).toEqual(JSON.parse(readFileSync(answer.manifest_path, 'utf8')));
  });

  it("takes the Python a wheel URL is built for, and names one the project's own Python cannot install", async () => {
    const project = copyProject(join(EXAMPLES, 'hello'));
    const wheel = 'https://download.pytorch.org/whl/cu121/torch-2.4.0%2Bcu121-cp310-cp310-linux_x86_64.whl';
    writeFileSync(join(project, 'requirements.txt'), `torch @ ${wheel}\n`);
    const chosen = await scannedManifest(project);
    // Not the 3.11 of the PyTorch image, which pip would refuse the wheel on.
    expect([chosen.python_version, chosen.python_version_source]).toEqual(['3.10', 'requirements.txt:1, a wheel for Python 3.10']);
    expect(chosen.base_image.reason).toContain('torch 2.4.0 from its wheel\'s URL');
    writeFileSync(join(project, '.python-version'), '3.12\n');
    const stated = await scannedManifest(project);
    expect(stated.python_version).toBe('3.12');
    expect(stated.warnings).toContain(
      "requirements.txt:1: torch's wheel is built for Python 3.10, not 3.12: pip will refuse it; use the wheel for 3.12, or ask for Python 3.10 (Python 3.12 from .python-version)",
    );
  });

  it('warns about a path outside the project in pyproject.toml, as in requirements.txt', async () => {
    const project = copyProject(join(EXAMPLES, 'hello'));
    writeFileSync(join(project, 'pyproject.toml'), '[project]\nname = "x"\nversion = "0"\ndependencies = ["mylib @ file:///home/me/mylib"]\n');
    const manifest = await scannedManifest(project);
    expect(manifest.warnings).toContain(
      'pyproject.toml:4: file:///home/me/mylib is outside the project, so the image will not have it and svc build leaves it out; require the package by name and version instead',
    );
  });

  it('accepts the service file itself, or another one with --entrypoint', async () => {
    const project = copyProject(join(EXAMPLES, 'hello'));
    writeFileSync(join(project, 'api.py'), readFileSync(join(project, 'service.py')));
    const byFile = await runSvc(['scan', join(project, 'api.py'), '--json']);
    expect(JSON.parse(byFile.stdout).manifest.entrypoint).toBe('api.py');
    const byOption = await runSvc(['scan', project, '--entrypoint', 'api.py', '--json']);
    expect(JSON.parse(byOption.stdout).manifest.entrypoint).toBe('api.py');
  });

  it('takes a service file whose name starts with two dots, and still refuses one outside the project', async () => {
    const project = copyProject(join(EXAMPLES, 'hello'));
    writeFileSync(join(project, '..svc.py'), readFileSync(join(project, 'service.py')));
    const inside = await runSvc(['scan', project, '--entrypoint', '..svc.py', '--json']);
    expect(inside.exitCode).toBe(0);
    expect(JSON.parse(inside.stdout).manifest.entrypoint).toBe('..svc.py');
    const outside = await runSvc(['scan', project, '--entrypoint', '../elsewhere.py']);
    expect(outside.exitCode).toBe(2);
    expect(outside.stderr).toContain('the entrypoint must be inside the project directory');
  });

  it('refuses a service file that is a link to a file outside the project, which no image would have', async () => {
    const project = copyProject(join(EXAMPLES, 'hello'));
    const elsewhere = join(mkdtempSync(join(tmpdir(), 'svc-elsewhere-')), 'real.py');
    writeFileSync(elsewhere, readFileSync(join(project, 'service.py')));
    symlinkSync(elsewhere, join(project, 'linked.py'));
    const linked = await runSvc(['scan', project, '--entrypoint', 'linked.py']);
    expect(linked.exitCode).toBe(2);
    expect(linked.stderr).toContain(`the entrypoint linked.py is a link to ${realpathSync(elsewhere)}, outside the project directory`);
    // A link to a file inside the project is that file.
    symlinkSync('service.py', join(project, 'alias.py'));
    expect((await runSvc(['scan', project, '--entrypoint', 'alias.py'])).exitCode).toBe(0);
  });

  it('refuses an unreadable requirement as svc build does, after warning about each with file and line, and still writes the manifest', async () => {
    const project = copyProject(join(PROJECTS, 'messy-requirements'));
    const run = await runSvc(['scan', project]);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toMatch(/^warning: requirements\.txt:2: /m);
    expect(run.stderr).toContain('warning: base.txt:1: requirements.txt includes itself');
    expect(run.stderr.trim().split('\n').at(-1)).toBe(
      "error: requirements.txt:2: 'not a valid == line!': unexpected 'a valid == line!' after the requirement; pip cannot read it either, so the image would lack it: fix it and build again",
    );
    expect(run.stderr).not.toMatch(ANSI);
    expect(JSON.parse(readFileSync(join(project, 'apipod-deploy/apipod.json'), 'utf8')).dependencies.unreadable).toHaveLength(1);
  });

  it('gives the verdict svc build gives on every requirement line: the same error and exit 1, or both go on', async () => {
    const refused = [
      'numpy ===', // pip cannot parse it
      'numpy[bad extra]',
      'pkg @ https://example.com/a b.whl',
      'numpy >=1.0 --hash=sha256:zz',
      'https://example.com/x.whl#egg=foo bar', // parsed, but no line pip reads whole
      'numpy==1.0; python_version >= "3.8" or extra == "x\\y"',
      'torch===>2', // no release can match: the scan says so, and both refuse it
      '--find-links ../wheels', // a directory the image cannot have
    ];
    const accepted = ['numpy>=1.0 ; python_version >= "3"  # a comment', 'pkg==1!2.0'];
    for (const line of [...refused, ...accepted]) {
      const project = copyProject(join(EXAMPLES, 'hello'));
      writeFileSync(join(project, 'requirements.txt'), `${line}\n`);
      const scan = await runSvc(['scan', project]);
      const build = await runSvc(['build', project]);
      const verdict = (run: typeof scan) => [run.exitCode, run.stderr.split('\n').find((text) => text.startsWith('error:')) ?? null];
      expect([line, ...verdict(scan)]).toEqual([line, ...verdict(build)]);
      expect([line, scan.exitCode]).toEqual([line, refused.includes(line) ? 1 : 0]);
    }
  });

  it('warns that pip will not find torch==X+cpu when the requirements name no index that serves it', async () => {
    const project = copyProject(join(EXAMPLES, 'hello'));
    writeFileSync(join(project, 'requirements.txt'), 'torch==1.12.0+cpu\n');
    const run = await runSvc(['scan', project]);
    expect(run.exitCode).toBe(0);
    expect(run.stderr).toContain(
      'warning: requirements.txt:1: torch==1.12.0+cpu: PyPI serves no local versions (+cpu), and the requirements name no other index, so pip will not find it; ' +
        'add --extra-index-url https://download.pytorch.org/whl/cpu to the requirements',
    );
  });

  it("warns when the markers leave every CUDA wheel out on the image's Python", async () => {
    const project = copyProject(join(EXAMPLES, 'hello'));
    const wheel = 'https://github.com/Dao-AILab/flash-attention/releases/download/v2.7.4.post1/flash_attn-2.7.4.post1+cu12torch2.6cxx11abiFALSE-cp311-cp311-linux_x86_64.whl';
    writeFileSync(join(project, 'requirements.txt'), `numpy\n${wheel}; platform_system == "Linux" and python_version == "3.11"\n`);
    const run = await runSvc(['scan', project]);
    expect(run.stderr).toContain(
      'warning: requirements.txt:2: the markers leave out every CUDA wheel (flash_attn) on Python 3.10 (default): they are for Python 3.11, ' +
        'so the image gets none of them; ask for Python 3.11 in .python-version to install them',
    );
  });

  it("reads the upstream toolkit's APIPod(simulate=...) as the compute and provider it serves", async () => {
    const project = copyProject(join(EXAMPLES, 'hello'));
    const service = readFileSync(join(project, 'service.py'), 'utf8');
    writeFileSync(join(project, 'service.py'), service.replace('APIPod(title="Hello")', 'APIPod(title="Hello", simulate="serverless")'));
    const manifest = await scannedManifest(project);
    expect([manifest.compute, manifest.provider, manifest.warnings]).toEqual(['serverless', 'localhost', []]);

    writeFileSync(join(project, 'service.py'), service.replace('APIPod(title="Hello")', 'APIPod(title="Hello", simulate="gpu")'));
    const refused = await scannedManifest(project);
    expect([refused.compute, refused.warnings]).toEqual([
      'dedicated',
      ["service.py:8: simulate: 'gpu' is not a target the toolkit takes; the manifest uses dedicated compute"],
    ]);
  });

  it('lists warnings by file, then line', async () => {
    const project = copyProject(join(EXAMPLES, 'hello'));
    writeFileSync(join(project, '.env'), 'TOKEN=x\n');
    writeFileSync(join(project, 'requirements.txt'), 'numpy\ntorch==1.12.0+cpu\n');
    writeFileSync(
      join(project, 'service.py'),
      'from apipod import APIPod\napp = APIPod(compute="gpu")\n\n@other.endpoint("/x")\ndef x():\n    pass\n\n' +
        '@app.endpoint("/y")\ndef y():\n    pass\n',
    );
    const manifest = await scannedManifest(project);
    expect(manifest.warnings.map((warning: string) => warning.split(': ')[0])).toEqual([
      '.env',
      'requirements.txt:2',
      'service.py:2',
      'service.py:4',
    ]);
  });

  it('reads requirements and .python-version saved by Windows PowerShell (UTF-16, byte-order marks) as pip and uv do', async () => {
    const project = copyProject(join(EXAMPLES, 'hello'));
    const utf16le = (text: string) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    writeFileSync(join(project, 'requirements.txt'), utf16le('-r base.txt\r\ntorch==2.4.1\r\n'));
    writeFileSync(join(project, 'base.txt'), Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('numpy>=1.26\r\n')]));
    writeFileSync(join(project, '.python-version'), utf16le('3.11\r\n'));
    const run = await runSvc(['scan', project, '--json']);
    expect(run.stderr).toBe('');
    const { manifest } = JSON.parse(run.stdout);
    expect(manifest.dependencies.requirements.map((requirement: { name: string }) => requirement.name)).toEqual(['numpy', 'torch']);
    expect(manifest.frameworks.pytorch.version).toBe('2.4.1');
    expect([manifest.python_version, manifest.python_version_source]).toEqual(['3.11', '.python-version']);

    writeFileSync(join(project, 'service.py'), utf16le(readFileSync(join(EXAMPLES, 'hello/service.py'), 'utf8')));
    const utf16Source = await runSvc(['scan', project]);
    expect(utf16Source.exitCode).toBe(0);
    expect(utf16Source.stderr).toContain('warning: service.py: saved as UTF-16 LE with a byte-order mark: Python reads source files as UTF-8');
    expect(utf16Source.stdout).toContain('endpoints: POST /hello; POST /add');
  });

  it("takes the GPU base image's own Python when the project's range allows it, and never over a version it names", async () => {
    const project = copyProject(join(PROJECTS, 'torch-gpu'));
    writeFileSync(join(project, 'pyproject.toml'), '[project]\nname = "x"\nversion = "1"\nrequires-python = ">=3.10,<3.13"\n');
    const ranged = await scannedManifest(project);
    expect([ranged.python_version, ranged.python_version_source, ranged.base_image.python]).toEqual([
      '3.11',
      "pyproject.toml: project.requires-python; the base image's Python",
      '3.11',
    ]);
    writeFileSync(join(project, '.python-version'), '3.10\n');
    const named = await scannedManifest(project);
    expect([named.python_version, named.python_version_source]).toEqual(['3.10', '.python-version']);
  });

  it("takes a PyTorch image of the Python .python-version names, so pip installs no second torch beside the image's", async () => {
    const project = copyProject(join(EXAMPLES, 'hello'));
    writeFileSync(join(project, 'requirements.txt'), 'torch>=1.7\ntorchaudio\n');
    writeFileSync(join(project, '.python-version'), '3.10\n');
    const manifest = await scannedManifest(project);
    expect([manifest.python_version, manifest.base_image.image, manifest.base_image.python]).toEqual([
      '3.10',
      'pytorch/pytorch:2.3.1-cuda12.1-cudnn8-runtime',
      '3.10',
    ]);
    writeFileSync(join(project, '.python-version'), '3.12\n');
    const noImage = await scannedManifest(project);
    // torch then comes from PyPI: its newest release is a CUDA 13 build, and the image and a warning say so.
    expect(noImage.base_image).toMatchObject({ image: 'nvidia/cuda:13.0.1-cudnn-runtime-ubuntu22.04', cuda: '13.0.1' });
    expect(noImage.base_image.reason).toContain('no PyTorch image for torch>=1.7 with Python 3.12 (its images ship 3.10 or 3.11); torch 2.15.0, built for CUDA 13.2, installs from the requirements');
    expect(noImage.warnings).toContain(
      "requirements.txt:1: torch>=1.7: pip takes PyPI's newest torch for Python 3.12, 2.15.0 (as of svc's table); it is built for CUDA 13.2 and needs NVIDIA driver 580 " +
        'or newer on the host, else torch.cuda.is_available() is false: pin torch<2.11 for a CUDA 12 build, or install it from https://download.pytorch.org/whl/cu128 with --index-url',
    );
  });

  it('takes the TensorFlow image with its own Python, so the image holds one TensorFlow', async () => {
    const project = copyProject(join(EXAMPLES, 'hello'));
    writeFileSync(join(project, 'requirements.txt'), 'tensorflow>=1.9.0\n');
    const manifest = await scannedManifest(project);
    expect([manifest.python_version, manifest.python_version_source, manifest.base_image.image, manifest.base_image.python]).toEqual([
      '3.11',
      'base image',
      'tensorflow/tensorflow:2.18.0-gpu',
      '3.11',
    ]);
  });

  it('keeps to a Python that pinned requirements have wheels for when the project names none, and warns when it names another', async () => {
    const project = copyProject(join(EXAMPLES, 'hello'));
    writeFileSync(join(project, 'requirements.txt'), 'torch>=1.7\nnumba==0.56.4;python_version>="3.9"\n');
    const chosen = await scannedManifest(project);
    expect([chosen.python_version, chosen.python_version_source, chosen.base_image.image]).toEqual([
      '3.10',
      'requirements.txt:2, numba 0.56.4 has wheels for Python 3.8 to 3.10',
      'pytorch/pytorch:2.3.1-cuda12.1-cudnn8-runtime',
    ]);
    writeFileSync(join(project, '.python-version'), '3.11\n');
    const stated = await runSvc(['scan', project]);
    expect(stated.stderr).toContain(
      'warning: requirements.txt:2: numba 0.56.4 publishes wheels for Python 3.8 to 3.10, not 3.11: pip will build it from its source distribution, ' +
        'which may need a compiler or Rust, or refuse that Python; pin a release with wheels for 3.11, or ask for Python 3.10 (Python 3.11 from .python-version)',
    );
  });

  it('takes the PyTorch image whose torch a pinned torchaudio needs, and one for torch that sentence-transformers brings in', async () => {
    const project = copyProject(join(EXAMPLES, 'hello'));
    writeFileSync(join(project, 'requirements.txt'), 'torchaudio==2.5.1\ntorch\n');
    const pinned = await scannedManifest(project);
    expect(pinned.base_image.image).toBe('pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime');
    expect(pinned.base_image.reason).toBe('PyTorch 2.5.1 (torch unpinned; torchaudio==2.5.1 needs torch==2.5.1) with CUDA 12.4');
    writeFileSync(join(project, 'requirements.txt'), 'sentence-transformers\nfastapi\n');
    const transitive = await scannedManifest(project);
    expect([transitive.pytorch, transitive.cuda, transitive.cuda_packages, transitive.base_image.image]).toEqual([
      true,
      true,
      ['sentence-transformers'],
      'pytorch/pytorch:2.9.1-cuda12.8-cudnn9-runtime',
    ]);
  });

  it('says when pyproject.toml builds a package that nothing installs into the image', async () => {
    const project = copyProject(join(EXAMPLES, 'hello'));
    const pyproject = '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n\n[project]\nname = "textkit"\nversion = "0.1"\ndependencies = ["requests"]\n';
    writeFileSync(join(project, 'pyproject.toml'), pyproject);
    const bare = await runSvc(['scan', project]);
    expect(bare.stderr).toContain('warning: pyproject.toml: builds a package, which the image installs only when a requirement says so: add `-e .`');
    writeFileSync(join(project, 'requirements.txt'), '-e .\n');
    expect((await runSvc(['scan', project])).stderr).not.toContain('builds a package');
  });

  it('fails with one line and exit 1 when the directory does not exist', async () => {
    const run = await runSvc(['scan', '/nonexistent/project']);
    expect(run.exitCode).toBe(1);
    expect(run.stderr.trim().split('\n')).toEqual(['error: no such file or directory: /nonexistent/project']);
  });

  it('says how to fix a project without service.py', async () => {
    const project = copyProject(join(PROJECTS, 'torch-gpu'));
    const empty = join(project, 'empty');
    mkdirSync(empty);
    const run = await runSvc(['scan', empty]);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain('no service.py in');
    expect(run.stderr).toContain('--entrypoint FILE');
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it('names the file and field when no supported Python satisfies requires-python', async () => {
    const project = copyProject(join(EXAMPLES, 'hello'));
    writeFileSync(join(project, 'pyproject.toml'), '[project]\nname = "x"\nrequires-python = "<3.9"\n');
    const run = await runSvc(['scan', project]);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toMatch(/^error: pyproject\.toml.*requires-python/);
  });

  it('warns about a .python-version naming a pyenv virtualenv and takes the version from requires-python', async () => {
    const project = copyProject(join(EXAMPLES, 'hello'));
    writeFileSync(join(project, '.python-version'), 'ml-env\n');
    writeFileSync(join(project, 'pyproject.toml'), '[project]\nname = "x"\nrequires-python = ">=3.11"\n');
    const run = await runSvc(['scan', project]);
    expect(run.exitCode).toBe(0);
    expect(run.stderr).toContain("warning: .python-version: 'ml-env' names a pyenv environment");
    expect(run.stdout).toContain('python: 3.11 (pyproject.toml: project.requires-python)');
  });

  it('asks for ffmpeg only when an endpoint takes or returns audio or video, or a requirement runs ffmpeg', async () => {
    const project = copyProject(join(EXAMPLES, 'hello'));
    expect((await scannedManifest(project)).system_packages).toEqual([]);
    writeFileSync(
      join(project, 'service.py'),
      'from typing import Optional\nfrom apipod import APIPod, AudioFile, ImageFile\n\napp = APIPod()\n\n' +
        '@app.endpoint("/gray")\ndef gray(image: ImageFile) -> ImageFile:\n    return image\n',
    );
    expect((await scannedManifest(project)).system_packages).toEqual([]);
    writeFileSync(join(project, 'service.py'), readFileSync(join(project, 'service.py'), 'utf8') +
      '\n@app.endpoint("/clip")\ndef clip(audio: Optional[AudioFile] = None) -> dict:\n    return {}\n');
    expect((await scannedManifest(project)).system_packages).toEqual(['ffmpeg']);

    const withPydub = copyProject(join(EXAMPLES, 'hello'));
    writeFileSync(join(withPydub, 'requirements.txt'), 'pydub==0.25.1\n');
    expect((await scannedManifest(withPydub)).system_packages).toEqual(['ffmpeg']);
  });

  it('answers a machine with a JSON error object on stdout', async () => {
    const run = await runSvc(['scan', '/nonexistent/project', '--json']);
    expect(run.exitCode).toBe(1);
    expect(JSON.parse(run.stdout)).toEqual({
      error: expect.objectContaining({ message: 'no such file or directory: /nonexistent/project' }),
    });
  });

  it('exits 2 on a usage error', async () => {
    const run = await runSvc(['scan', '--no-such-option']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain("unknown option '--no-such-option'");
  });
});

describe('svc', () => {
  it('prints its version', async () => {
    const run = await runSvc(['--version']);
    const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8'));
    expect(run.stdout.trim()).toBe(version);
    expect(run.exitCode).toBe(0);
  });

  it('lists its commands in --help', async () => {
    const run = await runSvc(['--help']);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain('scan [options] [dir]');
  });
});

/** The manifest `svc scan --json` prints for the project. */
async function scannedManifest(project: string) {
  return JSON.parse((await runSvc(['scan', project, '--json'])).stdout).manifest;
}
