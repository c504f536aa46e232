import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson, startSvc } from '../support/server.js';
import { REPO_ROOT, SVC_BIN } from '../support/svc.js';

const SVC_VERSION: string = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')).version;
const BUNDLED_TOOLKIT = join(REPO_ROOT, 'python', 'apipod');

/** A service that says which apipod it imported, from where. */
const SERVICE = `from apipod import APIPod
import apipod

app = APIPod(title="Which")


@app.endpoint("/which")
def which() -> dict:
    return {"file": apipod.__file__, "version": apipod.__version__}


if __name__ == "__main__":
    app.start()
`;

/** `python -c CODE` in the project, with nothing but the interpreter's own environment on its path. */
function runPython(python: string, code: string, cwd: string): string {
  return execFileSync(python, ['-c', code], { cwd, env: { PATH: '/usr/bin:/bin' }, encoding: 'utf8' });
}

describe('the toolkit as the svc-apipod distribution', () => {
  let dir: string;
  let wheel: string;
  let venvPython: string;
  let project: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-apipod-dist-'));
    // --no-build-isolation: the build backend comes from .ci/setup, so the test reaches no index.
    const hasBackend = execFileSync('python3', ['-c', 'import importlib.util as u; print(u.find_spec("hatchling") is not None)'], { encoding: 'utf8' });
    if (hasBackend.trim() !== 'True') throw new Error('python3 lacks hatchling, which builds the toolkit: run .ci/setup');
    execFileSync('python3', ['-m', 'pip', 'wheel', '--quiet', '--no-build-isolation', '--no-deps', '--wheel-dir', join(dir, 'wheels'), join(REPO_ROOT, 'python')]);
    wheel = join(dir, 'wheels', readdirSync(join(dir, 'wheels'))[0]!);
    execFileSync('python3', ['-m', 'venv', '--without-pip', join(dir, 'venv')]);
    venvPython = join(dir, 'venv', 'bin', 'python');
    execFileSync('python3', ['-m', 'pip', '--python', venvPython, 'install', '--quiet', '--no-index', '--no-deps', wheel]);
    project = join(dir, 'project');
    mkdirSync(project);
    writeFileSync(join(project, 'service.py'), SERVICE);
  }, 180_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("builds as svc-apipod at svc's version, with py.typed, needing nothing beyond the standard library", () => {
    expect(wheel.endsWith(`svc_apipod-${SVC_VERSION}-py3-none-any.whl`)).toBe(true);
    const installed = JSON.parse(runPython(venvPython, [
      'import json; from importlib import metadata as m',
      'd = m.distribution("svc-apipod")',
      'print(json.dumps({"version": d.version, "requires": d.requires, "files": sorted(str(f) for f in d.files)}))',
    ].join('\n'), project));
    expect(installed.version).toBe(SVC_VERSION);
    expect(installed.requires).toBeNull();
    expect(installed.files).toContain('apipod/py.typed');
    expect(installed.files).toContain('apipod/_runtime/worker.py');
    // Beside the package, only the apipod command's console script (into the venv's bin/).
    expect(installed.files.filter((file: string) => !file.startsWith('apipod/') && !file.startsWith('svc_apipod-'))).toEqual(['../../../bin/apipod']);
  });

  it("keeps svc's version in its sdist, whose wheel builds away from package.json (as a published sdist does)", () => {
    const sdists = join(dir, 'sdists');
    execFileSync('python3', ['-m', 'hatchling', 'build', '--target', 'sdist', '--directory', sdists], { cwd: join(REPO_ROOT, 'python'), stdio: 'pipe' });
    const [sdist] = readdirSync(sdists);
    expect(sdist).toBe(`svc_apipod-${SVC_VERSION}.tar.gz`);
    const unpacked = join(dir, 'unpacked');
    mkdirSync(unpacked);
    execFileSync('tar', ['-xzf', join(sdists, sdist!), '-C', unpacked]);
    execFileSync('python3', ['-m', 'pip', 'wheel', '--quiet', '--no-build-isolation', '--no-deps', '--wheel-dir', join(dir, 'from-sdist'), join(unpacked, `svc_apipod-${SVC_VERSION}`)]);
    expect(readdirSync(join(dir, 'from-sdist'))).toEqual([`svc_apipod-${SVC_VERSION}-py3-none-any.whl`]);
  });

  it("lets a service file import apipod outside svc (an editor's or `python service.py`'s interpreter), at svc's version", () => {
    const imported = JSON.parse(runPython(venvPython, 'import json, service; print(json.dumps({"file": service.apipod.__file__, "version": service.apipod.__version__, "paths": [e.path for e in service.app.endpoints]}))', project));
    expect(imported.file.startsWith(join(dir, 'venv'))).toBe(true);
    expect(imported.version).toBe(SVC_VERSION);
    expect(imported.paths).toEqual(['/which']);
    // `python service.py` hands over to svc, and without svc says how to install it by its npm name.
    let advice = '';
    try {
      execFileSync(venvPython, ['service.py'], { cwd: project, env: { PATH: join(dir, 'venv', 'bin') }, encoding: 'utf8', stdio: 'pipe' });
    } catch (error) {
      advice = String((error as { stderr: string }).stderr);
    }
    expect(advice).toContain('Install it with `npm install -g svc-ml`');
  });

  it('installs the apipod command, which needs no Node for its help and refusals and runs the svc on PATH', () => {
    const apipod = join(dir, 'venv', 'bin', 'apipod');
    const run = (args: string[], path: string) => spawnSync(apipod, args, { cwd: project, env: { PATH: path }, encoding: 'utf8' });
    const venvOnly = join(dir, 'venv', 'bin');
    expect(run(['--help'], venvOnly)).toMatchObject({ status: 0, stdout: expect.stringContaining('apipod --scan, apipod scan            svc scan') });
    expect(run(['deploy'], venvOnly)).toMatchObject({ status: 2, stderr: expect.stringContaining("svc does not deploy to SocAIty's hosted platform") });
    expect(run(['--scan'], venvOnly)).toMatchObject({ status: 1, stderr: expect.stringContaining('Install it with `npm install -g svc-ml`, then run `svc scan`') });
    // With svc on PATH (and the node it runs on), the toolkit's own form runs it.
    const bin = join(dir, 'svc-bin');
    mkdirSync(bin);
    symlinkSync(SVC_BIN, join(bin, 'svc'));
    const scanned = run(['--scan'], [venvOnly, bin, dirname(process.execPath)].join(delimiter));
    expect(scanned.status, scanned.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(project, 'apipod-deploy', 'apipod.json'), 'utf8')).title).toBe('Which');
  });

  it('is not what `svc start` serves with: the toolkit bundled with svc wins, in step with its gateway', async () => {
    const server = await startSvc([join(project, 'service.py'), '--python', venvPython]);
    try {
      const answer = await postJson(`${server.url}/which`, {});
      expect(answer.status).toBe(200);
      expect(answer.body.file).toBe(join(BUNDLED_TOOLKIT, '__init__.py'));
      expect(answer.body.version).toBe(SVC_VERSION);
    } finally {
      await server.stop();
    }
  });
});
