import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson, startSvc, type RunningSvc } from '../support/server.js';
import { copyProject, REPO_ROOT } from '../support/svc.js';

/**
 * A new user's first hour, from the packed npm tarball and the toolkit's wheel rather than
 * this checkout: install both, `svc init`, `svc start --reload`, an edit, `svc call -i ... -o`.
 * (`svc build --image` of the same kind of project is test/e2e/docker-build.test.ts.)
 */
describe('svc installed from its npm tarball, with the toolkit from its wheel', () => {
  let dir: string;
  let svc: string;
  let unbuiltSvc: string;
  let project: string;
  let server: RunningSvc | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'svc-first-hour-'));
    execFileSync('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    const tarball = join(dir, readdirSync(dir).find((name) => name.endsWith('.tgz'))!);
    execFileSync('npm', ['install', '--global', '--prefix', join(dir, 'prefix'), '--no-audit', '--no-fund', '--silent', tarball], { stdio: ['ignore', 'ignore', 'inherit'] });
    svc = realpathSync(join(dir, 'prefix', 'bin', 'svc'));
    // What npm 12 installs when a dependency's install script is not allowed: better-sqlite3 without its native module.
    execFileSync('npm', ['install', '--global', '--prefix', join(dir, 'unbuilt'), '--ignore-scripts', '--no-audit', '--no-fund', '--silent', tarball], { stdio: ['ignore', 'ignore', 'inherit'] });
    unbuiltSvc = realpathSync(join(dir, 'unbuilt', 'bin', 'svc'));
    execFileSync('python3', ['-m', 'venv', '--without-pip', join(dir, 'venv')]);
    // The wheel is built from the installed package's python/, with the backend .ci/setup installs, reaching no index.
    const wheels = join(dir, 'wheels');
    execFileSync('python3', ['-m', 'pip', 'wheel', '--quiet', '--no-build-isolation', '--no-deps', '--wheel-dir', wheels, join(dir, 'prefix', 'lib', 'node_modules', 'svc-ml', 'python')]);
    execFileSync('python3', ['-m', 'pip', '--python', join(dir, 'venv', 'bin', 'python'), 'install', '--quiet', '--no-index', '--no-deps', join(wheels, readdirSync(wheels)[0]!)]);
    project = join(dir, 'project');
  }, 600_000);

  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  const run = (args: string[]) => execa(process.execPath, [svc, ...args], { cwd: project, reject: false });

  it('writes a starter project that the installed toolkit imports', async () => {
    const init = await execa(process.execPath, [svc, 'init', project], { reject: false });
    expect([init.exitCode, readdirSync(project).sort()]).toEqual([0, ['.dockerignore', '.gitignore', 'requirements.txt', 'service.py']]);
    const imported = execFileSync(join(dir, 'venv', 'bin', 'python'), ['-c', 'import apipod, service; print(apipod.__version__, service.app.title)'], { cwd: project, encoding: 'utf8' });
    expect(imported.trim()).toBe(`${JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')).version} Starter`);
  });

  it('serves it with --reload, follows an edit, and calls it with -i and -o', async () => {
    server = await startSvc([project, '--reload'], {}, { bin: svc });
    const hello = await run(['call', '/hello', '--url', server.url, '-i', 'name=Ada', '-i', 'excited=true']);
    expect([hello.exitCode, JSON.parse(hello.stdout)]).toEqual([0, { greeting: 'Hello, Ada!' }]);

    const file = join(project, 'service.py');
    writeFileSync(file, readFileSync(file, 'utf8').replace('f"Hello, {name}', 'f"Howdy, {name}'));
    let greeting = '';
    for (const started = Date.now(); Date.now() - started < 60_000 && !greeting.startsWith('Howdy'); await new Promise((resolve) => setTimeout(resolve, 250))) {
      const again = await run(['call', '/hello', '--url', server.url, '-i', 'name=Ada']);
      greeting = again.exitCode === 0 ? JSON.parse(again.stdout).greeting : '';
    }
    expect(greeting).toBe('Howdy, Ada.');

    writeFileSync(join(project, 'in.txt'), 'quiet words\n');
    const shout = await run(['call', '/shout', '--url', server.url, '-i', 'file=@in.txt', '-o', 'out.txt']);
    expect([shout.exitCode, readFileSync(join(project, 'out.txt'), 'utf8')]).toEqual([0, 'QUIET WORDS\n']);
  }, 120_000);

  it('without better-sqlite3 built keeps serverless jobs in memory, says how to install it, and refuses an explicit SQLite store in one line', async () => {
    const hello = copyProject(join(REPO_ROOT, 'examples', 'hello'));
    const unbuilt = await startSvc([hello, '--compute', 'serverless'], {}, { bin: unbuiltSvc });
    try {
      const job = await postJson(`${unbuilt.url}/hello`, { name: 'Ada' }, { prefer: 'wait=10' });
      expect([job.status, job.body.status, job.body.result]).toEqual([200, 'FINISHED', { greeting: 'Hello, Ada.' }]);
      expect(unbuilt.logs()).toMatch(/jobs are kept in memory, not in sqlite:\S+, and a crash loses them: SQLite \(better-sqlite3\) is installed without its native module, .*--allow-scripts=better-sqlite3/);
    } finally {
      await unbuilt.stop();
    }

    const store = join(dir, 'jobs.sqlite');
    const refused = await execa(process.execPath, [unbuiltSvc, 'start', hello, '--compute', 'serverless', '--port', '0', '--job-store', `sqlite:${store}`], { reject: false });
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr.trim().split('\n')).toEqual([
      `error: --job-store sqlite:${store}: SQLite (better-sqlite3) is installed without its native module, whose install script npm 12 runs only when allowed: reinstall with \`npm install -g svc-ml --allow-scripts=better-sqlite3\` (docs/install.md); or use --job-store memory`,
    ]);
  }, 120_000);
});
