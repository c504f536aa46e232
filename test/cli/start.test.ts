import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startSvc } from '../support/server.js';
import { copyProject, REPO_ROOT, runSvc } from '../support/svc.js';

const HELLO = copyProject(join(REPO_ROOT, 'examples/hello'));

/** `svc start` on a project whose service.py is `source`: its exit code and the last line it wrote to stderr. */
async function startRefusal(project: string, source: string): Promise<[number, string | undefined]> {
  writeFileSync(join(project, 'service.py'), source);
  const run = await runSvc(['start', project, '--port', '0']);
  return [run.exitCode, run.stderr.trim().split('\n').at(-1)];
}

describe('svc start on the command line', () => {
  it('rejects values outside the enums with one line and exit 2', async () => {
    const run = await runSvc(['start', HELLO, '--compute', 'gpu-cloud']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr.trim()).toBe(
      "error: option '--compute <mode>' argument 'gpu-cloud' is invalid. expected one of dedicated, serverless",
    );
  });

  it('rejects a provider svc does not implement, naming it as such', async () => {
    const run = await runSvc(['start', HELLO, '--provider', 'azure']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain("'azure' is not available in this version of svc");
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it('rejects a port that is not a port', async () => {
    const run = await runSvc(['start', HELLO, '--port', '80000']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('expected a whole number from 0 to 65535');
  });

  it('rejects a --max-body-size below 1 MiB, which would refuse every body, naming the flag', async () => {
    for (const size of ['0', '0.5']) {
      const run = await runSvc(['start', HELLO, '--port', '0', '--max-body-size', size]);
      expect([run.exitCode, run.stderr.trim()], size).toEqual([2, `error: option '--max-body-size <MiB>' argument '${size}' is invalid. expected a whole number from 1 to 1048576`]);
    }
  });

  it('rejects an --image the engine could not read, rather than sending it to the engine mangled', async () => {
    for (const image of ['Bad Ref', 'a?b']) {
      const run = await runSvc(['start', HELLO, '--orchestrator', 'docker', '--image', image]);
      expect([run.exitCode, run.stderr.trim()]).toEqual([
        2,
        `error: option '--image <ref>' argument '${image}' is invalid. expected an image reference, e.g. my-service:latest`,
      ]);
    }
  });

  it('rejects a --cors-origin that is not an origin', async () => {
    for (const origin of ['app.example.com', 'https://app.example.com/path', 'ftp://files.example.com']) {
      const run = await runSvc(['start', HELLO, '--cors-origin', origin]);
      expect([run.exitCode, run.stderr.trim()]).toEqual([
        2,
        `error: option '--cors-origin <origin>' argument '${origin}' is invalid. expected * or an origin such as https://app.example.com (scheme, host and port; no path)`,
      ]);
    }
  });

  it('says in one line when the port is taken, rather than failing inside the server', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      const run = await runSvc(['start', HELLO, '--host', '127.0.0.1', '--port', String(port)]);
      expect(run.exitCode).toBe(1);
      // In the order things happen: the workers were being started when the port was found taken.
      expect(run.stderr.trim().split('\n').map((line) => line.split(' ').slice(0, 3).join(' '))).toEqual(['svc starting 1', 'error: port ' + port]);
      expect(run.stderr.trim().split('\n').at(-1)).toBe(`error: port ${port} is in use on 127.0.0.1: stop what listens there, or choose another with --port`);
    } finally {
      taken.close();
    }
  });

  it("says once that the project's .env is not read, naming --dotenv, and nothing when --dotenv reads it", async () => {
    const project = copyProject(HELLO);
    writeFileSync(join(project, '.env'), 'GREETING=hi\n');
    const server = await startSvc([project]);
    const unread = `svc ${relative(REPO_ROOT, join(project, '.env'))} is not read: svc start --dotenv ${relative(REPO_ROOT, join(project, '.env'))} gives its variables to the service`;
    await server.stop();
    expect(server.logs().split('\n').filter((line) => line.includes('.env'))).toEqual([unread]);
    const told = await startSvc([project, '--dotenv', join(project, '.env')]);
    await told.stop();
    expect(told.logs()).not.toContain('is not read');
  });

  it('names each default once in --help', async () => {
    const run = await runSvc(['start', '--help']);
    const help = run.stdout.replace(/\s+/g, ' ');
    expect(help).toMatch(/--max-job-memory <MiB> most memory the ended jobs' results may hold, like --max-jobs \(default: a quarter of Node's heap, \d+\)/);
    expect(help.match(/\(default: [^)]*\) \(default:/g)).toBeNull();
  });

  it('stops at once on a second Ctrl-C, without waiting for the call in flight', async () => {
    const project = copyProject(HELLO);
    writeFileSync(join(project, 'service.py'), 'import time\nfrom apipod import APIPod\napp = APIPod()\n@app.endpoint("/slow")\ndef slow() -> dict:\n    time.sleep(30)\n    return {}\n');
    const server = await startSvc([project]);
    void fetch(`${server.url}/slow`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } }).catch(() => undefined);
    // The call is in flight once a worker is busy (the log's endpoint list also names POST /slow).
    while (((await (await fetch(`${server.url}/health`)).json()) as { busy: number }).busy === 0) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    server.process.kill('SIGINT');
    while (!server.logs().includes('SIGINT: finishing')) await new Promise((resolve) => setTimeout(resolve, 50));
    const second = Date.now();
    server.process.kill('SIGINT');
    const result = await server.process;
    expect([result.exitCode, Date.now() - second < 2000]).toEqual([130, true]);
  });

  it('refuses a job file with --orchestrator docker, naming what the container can use instead', async () => {
    const run = await runSvc(['start', 'examples/hello', '--orchestrator', 'docker', '--job-store', 'sqlite:/tmp/jobs.sqlite']);
    expect([run.exitCode, run.stderr.trim()]).toEqual([
      2,
      'error: --job-store sqlite: names a file on this machine: with --orchestrator docker, give the container a store it reaches (redis://HOST:PORT), or none (docs/jobs.md)',
    ]);
  });

  it('rejects a --public-url that clients could not follow', async () => {
    for (const url of ['notaurl', 'ftp://files.example.com', 'https://api.example.com/?x=1']) {
      const run = await runSvc(['start', HELLO, '--public-url', url]);
      expect(run.exitCode, url).toBe(2);
      expect(run.stderr).toContain('expected an http or https URL');
    }
  });

  it('refuses a time-out for a path that is no endpoint, which would leave the real one unlimited', async () => {
    const run = await runSvc(['start', HELLO, '--port', '0', '--endpoint-timeout', '/helo=5']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr.trim().split('\n').at(-1)).toBe('error: --endpoint-timeout /helo: no endpoint has that path; the endpoints are /hello, /add');
  });

  it('keeps --json output JSON lines when it fails, a usage error included', async () => {
    const failed = await runSvc(['--json', 'start', HELLO, '--port', '0', '--endpoint-timeout', '/helo=5']);
    const lines = failed.stdout.trim().split('\n').map((line) => JSON.parse(line));
    expect(lines.at(-1)).toEqual({ error: expect.objectContaining({ code: 'usage', message: expect.stringContaining('--endpoint-timeout /helo') }) });
    const bare = await runSvc(['--json']);
    expect([bare.exitCode, JSON.parse(bare.stdout)]).toEqual([2, { error: { code: 'usage', message: 'expected a command: init, scan, build, start, call, webhook-secret' } }]);
    const misused = await runSvc(['--json', 'start', HELLO, '--bogus']);
    expect([misused.exitCode, JSON.parse(misused.stdout)]).toEqual([2, { error: { code: 'usage', message: "unknown option '--bogus'" } }]);
  });

  it('says which service file it starts: the one the last scan recorded, when not told', async () => {
    const project = mkdtempSync(join(tmpdir(), 'svc-recorded-'));
    mkdirSync(join(project, 'app'));
    writeFileSync(join(project, 'app/service.py'), readFileSync(join(HELLO, 'service.py')));
    expect((await runSvc(['scan', project, '--entrypoint', 'app/service.py'])).exitCode).toBe(0);
    const server = await startSvc([project]);
    await server.stop();
    expect(server.logs()).toMatch(/starting 1 worker of app\/service\.py with /);
  });

  it('warns when the workers run another Python than the image will, as the last scan chose it', async () => {
    // The interpreter itself, not a version manager's shim, which would obey the .python-version below.
    const [executable = '', local = ''] = execFileSync('python3', ['-c', 'import sys; print(sys.executable); print("%d.%d" % sys.version_info[:2])'], { encoding: 'utf8' }).trim().split('\n');
    const other = local === '3.10' ? '3.12' : '3.10';
    const project = mkdtempSync(join(tmpdir(), 'svc-other-python-'));
    writeFileSync(join(project, 'service.py'), readFileSync(join(HELLO, 'service.py')));
    writeFileSync(join(project, '.python-version'), `${other}\n`);
    expect((await runSvc(['scan', project])).exitCode).toBe(0);
    const server = await startSvc([project, '--python', executable]);
    await server.stop();
    expect(server.logs()).toMatch(new RegExp(`warning: the image runs Python ${other} \\(from \\.python-version\\), these workers ${local.replace('.', '\\.')}\\.\\d+: `));
  });

  it("escapes control characters in the title and paths it logs, so a cloned service cannot drive the terminal", async () => {
    const project = mkdtempSync(join(tmpdir(), 'svc-title-'));
    writeFileSync(
      join(project, 'service.py'),
      'from apipod import APIPod\napp = APIPod(title="evil\\x1b]0;pwned\\x07")\n\n@app.endpoint("/x\\x1b[31m")\ndef x() -> int:\n    return 1\n',
    );
    const server = await startSvc([project]);
    await server.stop();
    expect(server.logs()).toContain('evil\\x1b]0;pwned\\x07 is ready');
    expect(server.logs()).toContain('POST /x\\x1b[31m');
    expect(server.logs()).not.toMatch(/[\u0007\u001b]/);
  });

  it("refuses an endpoint on a route svc serves itself, naming both, rather than an internal error", async () => {
    const project = mkdtempSync(join(tmpdir(), 'svc-own-route-'));
    expect(await startRefusal(project, 'from apipod import APIPod\napp = APIPod()\n\n@app.get("/health")\ndef my_health() -> dict:\n    return {"ok": True}\n')).toEqual([
      1,
      'error: endpoint my_health (GET /health): svc serves GET /health itself; choose another path',
    ]);
    // Routes ignore a trailing slash: /health/ is /health, and /x/ is /x.
    expect(await startRefusal(project, 'from apipod import APIPod\napp = APIPod()\n\n@app.get("/health/")\ndef my_health() -> dict:\n    return {}\n')).toEqual([
      1,
      'error: endpoint my_health (GET /health/): svc serves GET /health itself; choose another path',
    ]);
    const twoFunctions = (first: string, second: string) =>
      `from apipod import APIPod\napp = APIPod()\n\n@app.endpoint("${first}")\ndef one() -> int:\n    return 1\n\n@app.endpoint("${second}")\ndef two() -> int:\n    return 2\n`;
    expect(await startRefusal(project, twoFunctions('/x', '/x/'))).toEqual([
      1,
      'error: endpoint two (POST /x/): endpoint one (/x) answers POST /x already; a trailing slash makes no difference',
    ]);
    // Every endpoint is served under /v1 too: /v1/x is /x's.
    expect(await startRefusal(project, twoFunctions('/x', '/v1/x'))).toEqual([
      1,
      'error: endpoint two (POST /v1/x): endpoint one (/x) answers POST /v1/x already; svc serves every endpoint under /v1 too',
    ]);
  });

  it('refuses a method it cannot serve on the line that names it, or from a worker that sets it behind the toolkit, never as an internal error', async () => {
    const project = mkdtempSync(join(tmpdir(), 'svc-methods-'));
    expect(await startRefusal(project, 'from apipod import APIPod\napp = APIPod()\n\n@app.endpoint("/x", methods=["FETCH"])\ndef x() -> int:\n    return 1\n')).toEqual([
      1,
      `error: ${join(project, 'service.py')}:4: importing the service failed: ValueError: methods: 'FETCH' is not an HTTP method svc serves ` +
        '(GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS, TRACE)',
    ]);
    const behindTheToolkit = 'from apipod import APIPod\nfrom apipod.app import Endpoint\napp = APIPod()\napp.endpoints.append(Endpoint("/x", ["FETCH"], lambda: 1))\n';
    expect(await startRefusal(project, behindTheToolkit)).toEqual([
      1,
      'error: endpoint <lambda> (/x): FETCH is not an HTTP method svc serves (GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS, TRACE)',
    ]);
  });

  it("names the endpoint's line and the service's own class when a parameter's type cannot be described", async () => {
    const project = mkdtempSync(join(tmpdir(), 'svc-bad-type-'));
    writeFileSync(
      join(project, 'service.py'),
      'from apipod import APIPod\napp = APIPod()\n\nclass Thing:\n    pass\n\n@app.endpoint("/x")\ndef x(thing: Thing) -> dict:\n    return {}\n',
    );
    const run = await runSvc(['start', project, '--port', '0']);
    expect(run.exitCode).toBe(1);
    expect(run.stderr.trim().split('\n').at(-1)).toMatch(
      new RegExp(`^error: ${project}/service\\.py:7: an endpoint's signature cannot be described: EndpointSchemaError: endpoint /x \\(x\\(\\)\\): parameter 'thing': cannot describe Thing as JSON; `),
    );
  });

  it('names a missing keys file', async () => {
    const run = await runSvc(['start', HELLO, '--api-keys', '/nonexistent/keys.json', '--port', '0']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('/nonexistent/keys.json');
  });

  it('refuses an empty or short key and a keys file without keys, which would serve without authentication', async () => {
    const emptyKeys = join(mkdtempSync(join(tmpdir(), 'svc-keys-')), 'keys.json');
    writeFileSync(emptyKeys, '{"keys": []}');
    const runs = [
      await runSvc(['start', HELLO, '--port', '0', '--api-key', '']),
      await runSvc(['start', HELLO, '--port', '0'], { env: { SERVICE_API_KEY: 'short' } }),
      await runSvc(['start', HELLO, '--port', '0', '--api-keys', emptyKeys]),
    ];
    // The docker orchestrator checks the key before it looks for an engine or an image.
    runs.push(await runSvc(['start', HELLO, '--orchestrator', 'docker', '--api-key', '']));
    expect(runs.map((run) => run.exitCode)).toEqual([2, 2, 2, 2]);
    expect(runs.map((run) => run.stderr.trim().split('\n').at(-1))).toEqual([
      'error: the API key (--api-key or $SERVICE_API_KEY) is empty: a key has at least 8 characters; to serve without keys, unset it',
      'error: the API key (--api-key or $SERVICE_API_KEY) is 5 characters long: a key has at least 8 characters; to serve without keys, unset it',
      `error: ${emptyKeys}: keys: lists no keys, which would leave the server open to everyone; to serve without keys, leave the file out`,
      'error: the API key (--api-key or $SERVICE_API_KEY) is empty: a key has at least 8 characters; to serve without keys, unset it',
    ]);
  });
});

/** A stand-in interpreter: a shell script with `body`, in a directory of its own. */
function interpreterScript(body: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'svc-fake-python-')), 'python');
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

describe('svc start and the Python interpreter its workers run', () => {
  it('refuses a Python older than 3.10, saying which and where from, and serves nothing', async () => {
    // What Python 3.8 tells svc of itself: on the worker's event pipe when it starts as a
    // worker, on stdout when it is asked alone.
    const old = interpreterScript(
      'if [ -n "$APIPOD_EVENT_FD" ]; then echo "3.8.10 /opt/python3.8/bin/python3.8" >&4; else printf "3.8.10\\n/opt/python3.8/bin/python3.8\\n"; fi',
    );
    const run = await runSvc(['start', HELLO, '--port', '0', '--python', old]);
    expect([run.exitCode, run.stderr.trim().split('\n').at(-1)]).toEqual([
      1,
      `error: Python interpreter '${old}' (from --python) is Python 3.8.10; svc needs Python 3.10 or newer (choose another with --python)`,
    ]);
    expect(run.stderr).not.toContain('listening');
  });

  it('names an interpreter that does not exist, and one that fails to run, quoting what it said', async () => {
    const missing = await runSvc(['start', HELLO, '--port', '0', '--python', '/nonexistent/python']);
    expect([missing.exitCode, missing.stderr.trim().split('\n').at(-1)]).toEqual([1, "error: Python interpreter '/nonexistent/python' (from --python) was not found"]);
    const broken = interpreterScript('echo "Fatal Python error: init_fs_encoding" >&2\nexit 1');
    const failed = await runSvc(['start', HELLO, '--port', '0', '--python', broken]);
    expect([failed.exitCode, failed.stderr.trim().split('\n').at(-1)]).toEqual([
      1,
      `error: Python interpreter '${broken}' (from --python) did not run: Fatal Python error: init_fs_encoding`,
    ]);
  });

  it("starts every worker with the Python a version manager's shim chose, running the shim once", async () => {
    const executable = execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();
    const runs = join(mkdtempSync(join(tmpdir(), 'svc-shim-runs-')), 'runs');
    const shim = interpreterScript(`echo run >> ${runs}\nexec ${executable} "$@"`);
    const server = await startSvc([HELLO, '--workers', '2', '--python', shim]);
    const health = await fetch(`${server.url}/health`);
    await server.stop();
    expect(health.status).toBe(200);
    expect(readFileSync(runs, 'utf8')).toBe('run\n');
    expect(server.logs()).toContain(`starting 2 workers of service.py with ${executable} (Python `);
  });
});

describe('svc start --provider runpod on the command line', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-runpod-cli-'));
  const jobFile = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  it('refuses the ways to try a runpod worker without the runpod provider', async () => {
    const run = await runSvc(['start', HELLO, '--provider', 'localhost', '--test-server']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr.trim()).toBe('error: --test-server tries out a runpod worker: use --provider runpod, not localhost');
  });

  it('refuses both ways at once', async () => {
    const run = await runSvc(['start', HELLO, '--provider', 'runpod', '--test-server', '--test-input', jobFile('both.json', '{"input": {}}')]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('--test-server and --test-input are two ways to try the worker: choose one');
  });

  it('names a test input file that is missing, is not JSON, or is not a job', async () => {
    const missing = await runSvc(['start', HELLO, '--provider', 'runpod', '--test-input', join(dir, 'missing.json')]);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain(`${join(dir, 'missing.json')}: --test-input: cannot read it (no such file)`);

    const broken = await runSvc(['start', HELLO, '--provider', 'runpod', '--test-input', jobFile('broken.json', '{"input": ')]);
    expect(broken.exitCode).toBe(2);
    expect(broken.stderr).toContain(`${join(dir, 'broken.json')}: is not valid JSON`);

    const notJob = await runSvc(['start', HELLO, '--provider', 'runpod', '--test-input', jobFile('not-a-job.json', '{"path": "/hello"}')]);
    expect(notJob.exitCode).toBe(2);
    expect(notJob.stderr).toContain('needs "input", an object of the endpoint\'s parameters');
    expect(notJob.stderr).not.toMatch(/\n\s+at /);
  });

  it('keeps --test-input to the local orchestrator', async () => {
    const run = await runSvc(['start', HELLO, '--provider', 'runpod', '--orchestrator', 'docker', '--test-input', jobFile('docker.json', '{"input": {}}')]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('--test-input needs --orchestrator local');
  });

  it("says how to install the provider's library when the interpreter lacks it, before any worker starts", async () => {
    const venv = join(dir, 'venv-without-runpod');
    execFileSync('python3', ['-m', 'venv', '--without-pip', venv]);
    const python = join(venv, 'bin', 'python');
    const run = await runSvc(['start', HELLO, '--provider', 'runpod', '--python', python]);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain(`install it with \`${python} -m pip install 'runpod>=1.7.7'\``);
    expect(run.stderr).not.toContain('starting 1 worker');
  });
});
