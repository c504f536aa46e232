import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { copyProject, REPO_ROOT, runSvc } from '../support/svc.js';

const EXAMPLES = join(REPO_ROOT, 'examples');
const PROJECTS = join(REPO_ROOT, 'test/fixtures/projects');

describe('svc build (files only, no engine)', () => {
  it('scans first, then writes the Dockerfile, the staged runtime and a .dockerignore', async () => {
    const project = copyProject(join(EXAMPLES, 'hello'));
    const run = await runSvc(['build', project]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^Wrote .*apipod-deploy\/Dockerfile$/m);
    expect(run.stdout).toContain('base image: python:3.10-slim-bookworm');
    expect(run.stderr).toContain('svc wrote .dockerignore (the project had none)');
    const dockerfile = readFileSync(join(project, 'apipod-deploy/Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/^FROM --platform=linux\/amd64 python:3\.10-slim-bookworm$/m);
    expect(JSON.parse(readFileSync(join(project, 'apipod-deploy/svc/package.json'), 'utf8'))).toMatchObject({ name: 'svc-ml' });
    expect(existsSync(join(project, 'apipod-deploy/svc/dist/svc.js'))).toBe(true);
    // The bundle's entry loads each command's code from its chunks: all of them go into the image.
    expect(readdirSync(join(project, 'apipod-deploy/svc/dist/chunks')).sort()).toEqual(readdirSync(join(REPO_ROOT, 'dist/chunks')).sort());
    expect(existsSync(join(project, 'apipod-deploy/svc/python/apipod/_runtime/worker.py'))).toBe(true);
    const dockerignore = readFileSync(join(project, '.dockerignore'), 'utf8');
    for (const entry of ['**/.env', '**/.env.*', '**/.git', '.venv', '**/node_modules', '**/__pycache__', '**/.pytest_cache']) expect(dockerignore.split('\n')).toContain(entry);
  });

  it('builds a service whose endpoints are registered when the import runs, which the scan cannot list, saying so', async () => {
    const project = copyProject(join(PROJECTS, 'upstream-registered'));
    const run = await runSvc(['build', project]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toContain('no endpoints found statically: the 4 registrations warned about above run only when the file runs; svc start serves what they register');
    expect(existsSync(join(project, 'apipod-deploy/Dockerfile'))).toBe(true);
    expect(readFileSync(join(project, 'apipod-deploy/requirements.txt'), 'utf8').split('\n')).toEqual(expect.arrayContaining(['fastapi', 'socaity-schemas']));
  });

  it('leaves an existing .dockerignore alone and re-scans only when the project changed', async () => {
    const project = copyProject(join(EXAMPLES, 'hello'));
    writeFileSync(join(project, '.dockerignore'), 'secrets/\n');
    const first = await runSvc(['build', project]);
    expect(first.stderr).toMatch(/scanned the project first/);
    expect(readFileSync(join(project, '.dockerignore'), 'utf8')).toBe('secrets/\n');
    const second = await runSvc(['build', project]);
    expect(second.stderr).not.toMatch(/scanned the project first/);
    const later = new Date(Date.now() + 5_000);
    utimesSync(join(project, 'service.py'), later, later);
    const third = await runSvc(['build', project]);
    expect(third.stderr).toContain('scanned the project first (service.py changed since the last scan)');
  });

  it("leaves svc's own toolkit distribution (svc-apipod, listed for the editor) out of the image, which carries the toolkit, saying so", async () => {
    const project = copyProject(join(REPO_ROOT, 'examples/hello'));
    writeFileSync(join(project, 'requirements.txt'), 'svc-apipod==0.1.0\nrequests>=2\n');
    const run = await runSvc(['build', project, '--json']);
    expect(run.exitCode, run.stderr).toBe(0);
    const answer = JSON.parse(run.stdout);
    expect(answer.warnings).toContain("requirements.txt:1: svc-apipod is svc's toolkit, which svc's runtime provides: the image leaves this requirement out");
    const requirements = readFileSync(join(project, 'apipod-deploy/requirements.txt'), 'utf8');
    expect(requirements).toMatch(/^requests>=2$/m);
    expect(requirements).not.toContain('svc-apipod');
    expect(answer.plan.toolkit_packages).toEqual([]); // stdlib only: nothing goes in its place
  });

  it('refuses a requirement line pip cannot read; once it is fixed, writes the filtered requirements and says that apipod was left out', async () => {
    const project = copyProject(join(PROJECTS, 'messy-requirements'));
    const refused = await runSvc(['build', project]);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr.trim().split('\n').at(-1)).toBe(
      "error: requirements.txt:2: 'not a valid == line!': unexpected 'a valid == line!' after the requirement; pip cannot read it either, so the image would lack it: fix it and build again",
    );
    const requirementsFile = join(project, 'requirements.txt');
    writeFileSync(requirementsFile, readFileSync(requirementsFile, 'utf8').replace('not a valid == line!', '# fixed'));
    const run = await runSvc(['build', project, '--json']);
    expect(run.exitCode, run.stderr).toBe(0);
    const requirements = readFileSync(join(project, 'apipod-deploy/requirements.txt'), 'utf8');
    expect(requirements).toContain('openai-whisper @ git+https://github.com/openai/whisper.git#egg=openai-whisper');
    expect(requirements).not.toMatch(/^apipod/m);
    const answer = JSON.parse(run.stdout);
    expect(answer.plan.notes).toContain(
      "requirements.txt:5: apipod left out of the image's requirements; svc's runtime provides the toolkit. " +
        "apipod's other dependencies (opencv-python, av, fastapi, ...) are not installed: list those service.py imports",
    );
    expect(answer.plan.toolkit_packages).toEqual([]); // the project lists numpy and pillow itself
    const again = await runSvc(['build', project]);
    expect(again.stderr).not.toContain('scanned the project first');
    expect(again.stderr).toContain('warning: .env: never copied into the image'); // the manifest's warnings, every build
  });

  it("builds URL requirements whose marker follows '; ', as pip reads them, and leaves out those for other platforms", async () => {
    const project = copyProject(join(EXAMPLES, 'hello'));
    const base = 'https://github.com/oobabooga/llama-cpp-binaries/releases/download/v0.6.0/llama_cpp_binaries-0.6.0+cu124-py3-none';
    writeFileSync(join(project, 'requirements.txt'), [
      `${base}-win_amd64.whl; platform_system == "Windows"`,
      `${base}-linux_x86_64.whl; platform_system == "Linux"`,
      'foo @ https://example.com/foo-1.0-py3-none-any.whl; python_version == "2.7"',
    ].join('\n'));
    const run = await runSvc(['build', project]);
    expect(run.exitCode, run.stderr).toBe(0);
    const requirements = readFileSync(join(project, 'apipod-deploy/requirements.txt'), 'utf8');
    expect(requirements.split('\n').filter((line) => !line.startsWith('#') && line !== '')).toEqual([
      `llama_cpp_binaries @ ${base}-linux_x86_64.whl ; platform_system == "Linux"`,
    ]);
  });

  it('installs a prebuilt flash-attn wheel with the other requirements, on a runtime image: nothing compiles', async () => {
    const project = copyProject(join(EXAMPLES, 'hello'));
    const wheel = 'https://github.com/Dao-AILab/flash-attention/releases/download/v2.8.3/flash_attn-2.8.3+cu12torch2.9cxx11abiTRUE-cp311-cp311-linux_x86_64.whl';
    writeFileSync(join(project, 'requirements.txt'), `torch==2.9.1\n${wheel}\n`);
    const run = await runSvc(['build', project]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(readFileSync(join(project, 'apipod-deploy/Dockerfile'), 'utf8')).toMatch(/^FROM --platform=linux\/amd64 pytorch\/pytorch:2\.9\.1-cuda12\.8-cudnn9-runtime$/m);
    expect(readFileSync(join(project, 'apipod-deploy/requirements.txt'), 'utf8')).toContain(wheel);
    expect(existsSync(join(project, 'apipod-deploy/requirements-compiled.txt'))).toBe(false);
  });

  it('says why an included requirements file cannot be read, when it is there', async () => {
    const project = copyProject(join(EXAMPLES, 'hello'));
    writeFileSync(join(project, 'requirements.txt'), '-r base\n');
    mkdirSync(join(project, 'base'));
    const refused = await runSvc(['build', project]);
    expect([refused.exitCode, refused.stderr.trim().split('\n').at(-1)]).toEqual([
      1,
      'error: requirements.txt:1: base is a directory, not a file svc can read; pip cannot read it either, so the image would lack it: fix it and build again',
    ]);
  });

  it('refuses a requirements.txt or pyproject.toml that is there but cannot be read, rather than build without its dependencies', async () => {
    for (const file of ['requirements.txt', 'pyproject.toml']) {
      const project = copyProject(join(EXAMPLES, 'hello'));
      mkdirSync(join(project, file));
      const refused = await runSvc(['build', project]);
      expect([refused.exitCode, refused.stderr.trim().split('\n').at(-1)]).toEqual([
        1,
        `error: ${file}: is a directory, not a file svc can read; pip cannot read it either, so the image would lack it: fix it and build again`,
      ]);
    }
  });

  it('refuses a pyproject.toml that is not TOML, whose dependencies the image would otherwise lack', async () => {
    const project = copyProject(join(EXAMPLES, 'hello'));
    writeFileSync(join(project, 'pyproject.toml'), '[project]\ndependencies = ["numpy",\n[[oops\n');
    const refused = await runSvc(['build', project]);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr.trim().split('\n').at(-1)).toMatch(
      /^error: pyproject\.toml:3: not valid TOML: .*; pip cannot read it either, so the image would lack it: fix it and build again$/,
    );
  });

  it('refuses a service file with a syntax error, which the image could not start, naming its line', async () => {
    const project = copyProject(join(EXAMPLES, 'hello'));
    writeFileSync(join(project, 'service.py'), 'from apipod import APIPod\napp = APIPod()\n\n@app.endpoint("/x")\ndef x(: pass\n');
    const refused = await runSvc(['build', project]);
    expect([refused.exitCode, refused.stderr.trim().split('\n').at(-1)]).toEqual([
      1,
      'error: service.py:5: syntax error: missing `)`; Python cannot run the service as it is, so the image would not start: fix it and build again',
    ]);
    expect(existsSync(join(project, 'apipod-deploy/Dockerfile'))).toBe(false);
    // Fixed without a newer time (as a chmod fixes an unreadable file): read again all the same.
    const { mtime } = statSync(join(project, 'service.py'));
    writeFileSync(join(project, 'service.py'), readFileSync(join(EXAMPLES, 'hello/service.py')));
    utimesSync(join(project, 'service.py'), mtime, mtime);
    const fixed = await runSvc(['build', project]);
    expect(fixed.exitCode, fixed.stderr).toBe(0);
    expect(fixed.stderr).toContain('scanned the project first (the last scan found files it could not use)');
  });

  it("refuses syntax newer than the image's Python, saying which Python reads it; builds once .python-version names that one", async () => {
    const project = copyProject(join(EXAMPLES, 'hello'));
    writeFileSync(
      join(project, 'service.py'),
      'from apipod import APIPod\napp = APIPod()\n\n@app.endpoint("/label")\ndef label(item: dict) -> dict:\n    return {"message": f"label {item["name"]}"}\n',
    );
    const refused = await runSvc(['build', project]);
    expect([refused.exitCode, refused.stderr.trim().split('\n').at(-1)]).toEqual([
      1,
      "error: service.py:6: SyntaxError: an f-string's own quote cannot appear inside its replacement fields before Python 3.12 (PEP 701); " +
        'the image runs Python 3.10 (from default); Python cannot run the service as it is, so the image would not start: fix it and build again',
    ]);
    writeFileSync(join(project, '.python-version'), '3.12\n');
    const built = await runSvc(['build', project]);
    expect(built.exitCode, built.stderr).toBe(0);
    expect(built.stdout).toContain('base image: python:3.12-slim-bookworm');
  });

  it('keeps to the service file the scan was given, with no --entrypoint on later commands', async () => {
    const project = copyProject(join(EXAMPLES, 'hello'));
    mkdirSync(join(project, 'app'));
    renameSync(join(project, 'service.py'), join(project, 'app/service.py'));
    expect((await runSvc(['scan', project, '--entrypoint', 'app/service.py'])).exitCode).toBe(0);
    const build = await runSvc(['build', project]);
    expect(build.exitCode, build.stderr).toBe(0);
    expect(readFileSync(join(project, 'apipod-deploy/Dockerfile'), 'utf8')).toContain('"start", "/app/app/service.py"');
    const rescan = await runSvc(['scan', project, '--json']);
    expect(JSON.parse(rescan.stdout).manifest.entrypoint).toBe('app/service.py');
    // Once that file is gone, the default again, with its usual error.
    rmSync(join(project, 'app/service.py'));
    const gone = await runSvc(['build', project]);
    expect([gone.exitCode, gone.stderr.trim().split('\n').at(-1)]).toEqual([
      1,
      `error: no service.py in ${project}; write one, or name the service file with --entrypoint FILE`,
    ]);
  });

  it('says when a Dockerfile at the project root replaces the generated one', async () => {
    const project = copyProject(join(EXAMPLES, 'hello'));
    writeFileSync(join(project, 'Dockerfile'), 'FROM python:3.11-slim-bookworm\n');
    const run = await runSvc(['build', project, '--json']);
    expect(JSON.parse(run.stdout)).toMatchObject({ dockerfile: 'Dockerfile', uses_project_dockerfile: true });
    const plain = await runSvc(['build', project]);
    expect(plain.stderr).toContain('the project has its own Dockerfile: building that one instead of apipod-deploy/Dockerfile');
    expect(plain.stdout).toMatch(/^Using .*\/Dockerfile, the project's own/);
    expect(plain.stdout).not.toContain('base image:'); // the generated file's, which is not built
  });

  it('builds FROM --base-image, installing the Python the project asks for when that image does not ship it', async () => {
    const project = copyProject(join(EXAMPLES, 'hello'));
    const run = await runSvc(['build', project, '--base-image', 'nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04']);
    expect(run.exitCode, run.stderr).toBe(0);
    const dockerfile = readFileSync(join(project, 'apipod-deploy/Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/^FROM --platform=linux\/amd64 nvidia\/cuda:12\.4\.1-cudnn-runtime-ubuntu22\.04$/m);
    expect(dockerfile).toContain('RUN uv python install 3.10');
  });

  it('rejects a malformed --base-image, --image tag or --build-arg with one line and exit 2', async () => {
    const project = copyProject(join(EXAMPLES, 'hello'));
    const base = await runSvc(['build', project, '--base-image', 'Not A Reference']);
    expect(base.exitCode).toBe(2);
    expect(base.stderr.trim().split('\n')).toEqual([
      "error: --base-image: 'Not A Reference' is not a valid image reference (e.g. python:3.11-slim-bookworm)",
    ]);
    const noEngine = { env: { DOCKER_HOST: 'unix:///nonexistent/docker.sock' } };
    const arg = await runSvc(['build', project, '--image', 'x', '--build-arg', 'NO SPACES=1'], noEngine);
    expect(arg.exitCode).toBe(2);
    expect(arg.stderr).toContain("--build-arg name 'NO SPACES' is not a valid variable name");
    const tag = await runSvc(['build', project, '--image', 'Bad Tag!'], noEngine);
    expect(tag.exitCode).toBe(2);
    expect(tag.stderr).toContain("error: --image: 'Bad Tag!' is not a valid image reference");
  });

  it('says in one line how to start or point to the engine when none answers, before any work', async () => {
    const project = copyProject(join(EXAMPLES, 'hello'));
    const run = await runSvc(['build', project, '--image'], { env: { DOCKER_HOST: 'unix:///nonexistent/docker.sock' } });
    expect(run.exitCode).toBe(1);
    expect(run.stderr.trim().split('\n')).toEqual([
      'error: cannot reach the Docker engine at unix:///nonexistent/docker.sock (ENOENT): start it (e.g. `sudo systemctl start docker`, or Docker Desktop), or point DOCKER_HOST at a running engine',
    ]);
    expect(existsSync(join(project, 'apipod-deploy/Dockerfile'))).toBe(false);
  });

  it('refuses the options of an image build without --image, rather than ignoring them', async () => {
    const run = await runSvc(['build', copyProject(join(REPO_ROOT, 'examples/hello')), '--build-arg', 'A=1', '--no-cache']);
    expect([run.exitCode, run.stderr.trim()]).toEqual([2, 'error: --build-arg, --no-cache apply to an image build: add --image']);
    const start = await runSvc(['start', join(REPO_ROOT, 'examples/hello'), '--image', 'hello:latest']);
    expect([start.exitCode, start.stderr.trim().split('\n').at(-1)]).toEqual([2, 'error: --image chooses the image --orchestrator docker runs: add --orchestrator docker']);
  });
});
