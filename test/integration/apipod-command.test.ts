import { existsSync, readFileSync, rmSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { closedPort } from '../support/ports.js';
import { postJson } from '../support/server.js';
import { copyProject, REPO_ROOT, runSvc, type SvcRun } from '../support/svc.js';

/**
 * The npm package's `apipod` (bin/apipod.js -> python/apipod/cli.py -> this package's svc): each
 * form of the toolkit's command line does what the svc command it stands for does, on the
 * bundled example. The pure mapping of every option: python/tests/test_cli_forms.py.
 */
const APIPOD_BIN = join(REPO_ROOT, 'bin/apipod.js');
const HELLO = join(REPO_ROOT, 'examples/hello');

// Without a global svc on PATH, so the svc found is the one beside the toolkit, as in the npm package.
const PATH = (process.env.PATH ?? '').split(delimiter).filter((dir) => !existsSync(join(dir, 'svc'))).join(delimiter);

async function runApipod(args: string[], cwd: string): Promise<SvcRun> {
  const result = await execa(process.execPath, [APIPOD_BIN, ...args], { cwd, env: { PATH }, extendEnv: false, reject: false, stdin: 'ignore' });
  return { exitCode: result.exitCode ?? -1, stdout: result.stdout, stderr: result.stderr };
}

/** What a command leaves in apipod-deploy/ of a fresh copy of the example, and what it printed. */
async function outcome(run: (project: string) => Promise<SvcRun>, file: string): Promise<{ exitCode: number; stdout: string; written: string }> {
  const project = copyProject(HELLO);
  try {
    const result = await run(project);
    expect(result.exitCode, result.stderr).toBe(0);
    return { exitCode: result.exitCode, stdout: result.stdout, written: readFileSync(join(project, 'apipod-deploy', file), 'utf8') };
  } finally {
    rmSync(project, { recursive: true, force: true });
  }
}

describe('the apipod command, on the bundled example', () => {
  it('writes the same apipod-deploy/apipod.json as svc scan, in each form, without prompting', async () => {
    const expected = await outcome((project) => runSvc(['scan'], { cwd: project }), 'apipod.json');
    for (const form of [['--scan'], ['-scan'], ['scan'], ['--scan', '--entrypoint', 'service.py']]) {
      expect(await outcome((project) => runApipod(form, project), 'apipod.json'), form.join(' ')).toEqual(expected);
    }
  }, 120_000);

  it('renders the same Dockerfile as svc build, building no image, in each form', async () => {
    const expected = await outcome((project) => runSvc(['build'], { cwd: project }), 'Dockerfile');
    expect(expected.stdout).toContain('build: svc build --image');
    for (const form of [['--build'], ['-build'], ['--build', 'service.py'], ['build'], ['build', 'service.py']]) {
      expect(await outcome((project) => runApipod(form, project), 'Dockerfile'), form.join(' ')).toEqual(expected);
    }
  }, 120_000);

  it('serves /hello with --start and start, on the port given, and stops on SIGTERM', async () => {
    for (const form of [['--start'], ['start'], ['start', 'service.py'], ['--start', '--entrypoint', 'service.py', '--compute', 'dedicated']]) {
      const port = await closedPort();
      const server = await serve([...form, '--host', '127.0.0.1', '--port', String(port)]);
      try {
        const answer = await postJson(`http://127.0.0.1:${port}/hello`, { name: 'Ada' });
        expect(answer, form.join(' ')).toMatchObject({ status: 200, body: { greeting: 'Hello, Ada.' } });
      } finally {
        expect(await server.stop()).toBe(0);
      }
    }
  }, 120_000);

  it('simulates a serverless deployment as svc start --compute serverless does: a job envelope', async () => {
    for (const form of [['simulate'], ['--simulate', 'serverless-runpod'], ['--start', '--compute', 'serverless']]) {
      const port = await closedPort();
      const server = await serve([...form, '--host', '127.0.0.1', '--port', String(port)]);
      try {
        const answer = await postJson(`http://127.0.0.1:${port}/hello`, { name: 'Ada' }, { Prefer: 'wait=10' });
        expect(answer, form.join(' ')).toMatchObject({ status: 200, body: { status: 'FINISHED', result: { greeting: 'Hello, Ada.' } } });
      } finally {
        expect(await server.stop()).toBe(0);
      }
    }
  }, 120_000);

  it('refuses the hosted platform with exit code 2, saying what to run instead', async () => {
    const project = copyProject(HELLO);
    const cases: Array<[string[], string]> = [
      [['deploy', '--yes'], 'svc does not deploy to SocAIty\'s hosted platform; build the image with `svc build --image`'],
      [['--deploy'], 'svc does not deploy to SocAIty\'s hosted platform'],
      [['analyze'], '`svc scan` writes what svc reads of the project'],
      [['--start', '--orchestrator', 'socaity'], '`svc start --orchestrator docker`'],
      [['--build', '--provider', 'runpod'], 'APIPOD_PROVIDER=runpod when the container starts'],
      [['--start', '--workers', '2'], 'unrecognized arguments: --workers 2'],
    ];
    for (const [form, message] of cases) {
      const run = await runApipod(form, project);
      expect(run.exitCode, form.join(' ')).toBe(2);
      expect(run.stderr).toContain(message);
      expect(existsSync(join(project, 'apipod-deploy')), 'nothing written').toBe(false);
    }
    rmSync(project, { recursive: true, force: true });
  }, 60_000);

  it('prints its help for no arguments, --help and help, exit 0', async () => {
    for (const form of [[], ['--help'], ['help', 'start']]) {
      const run = await runApipod(form, HELLO);
      expect(run.exitCode).toBe(0);
      expect(run.stdout).toContain('apipod --scan, apipod scan            svc scan');
    }
  });
});

/** `apipod ...` serving the example from a copy, once it says it is ready. */
async function serve(args: string[]): Promise<{ stop: () => Promise<number> }> {
  const project = copyProject(HELLO);
  const child = execa(process.execPath, [APIPOD_BIN, ...args], { cwd: project, env: { PATH }, extendEnv: false, reject: false, buffer: false });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(' is ready on ')) resolve();
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    child.on('exit', (code) => reject(new Error(`apipod ${args.join(' ')} exited with ${code} before serving:\n${output}`)));
  });
  return {
    stop: async () => {
      child.kill('SIGTERM');
      const result = await child;
      rmSync(project, { recursive: true, force: true });
      return result.exitCode ?? -1;
    },
  };
}
