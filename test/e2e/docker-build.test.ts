import { execFileSync, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { appendFileSync, chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { planBuild } from '../../src/image/build-plan.js';
import { renderDockerfile } from '../../src/image/dockerfile.js';
import { BASE_IMAGE_CATALOG } from '../../src/image/base-image-catalog.js';
import type { Manifest } from '../../src/scan/manifest.js';
import { startRedis } from '../support/redis-server.js';
import { startRunpodStandin } from '../support/runpod-standin.js';
import { postJson, startSvc } from '../support/server.js';
import { copyProject, REPO_ROOT, runSvc, SVC_BIN, type SvcRun } from '../support/svc.js';

/**
 * svc build and svc start --orchestrator docker against a real Docker engine. No registry
 * is reachable in CI, so the base images the Dockerfile names are local stand-ins made by
 * scripts/ci/base-image-standins.sh (a debootstrapped Debian with python3 and node); the
 * generated Dockerfile is built unchanged. The stand-in's Python is Debian's 3.11, so the
 * hello example is built with `.python-version` 3.11 (the Dockerfile checks the version).
 *
 * Without an engine the suite is skipped locally and fails in CI.
 */
const engineAnswers = spawnSync('docker', ['version', '--format', '{{.Server.Version}}'], { encoding: 'utf8' }).status === 0;
const mustRun = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';
const IMAGE = 'svc-e2e-hello:test';
const FAILING_IMAGE = 'svc-e2e-failing:test';
const RUNPOD_IMAGE = 'svc-e2e-runpod:test';

interface BuildEvent {
  event: string;
  [field: string]: unknown;
}
interface StepRecord {
  step: number;
  instruction: string;
  cached: boolean;
  layer: string | null;
}

function events(run: SvcRun): BuildEvent[] {
  return run.stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as BuildEvent);
}

function buildResult(run: SvcRun): { image_id: string; step_records: StepRecord[] } {
  const result = events(run).find((event) => event.event === 'build.result');
  if (!result) throw new Error(`no build.result event (exit ${run.exitCode}):\n${run.stderr}\n${run.stdout.slice(-4000)}`);
  return result.build as { image_id: string; step_records: StepRecord[] };
}

function docker(...args: string[]): string {
  return execFileSync('docker', args, { encoding: 'utf8' }).trim();
}

/**
 * The address containers reach this machine at on Docker's default bridge. Docker 20.10
 * (Debian 12's docker.io) leaves the network's IPAM gateway empty when it chose it itself:
 * then it is the bridge interface's own address.
 */
function bridgeGateway(): string {
  const configured = docker('network', 'inspect', 'bridge', '--format', '{{(index .IPAM.Config 0).Gateway}}');
  if (configured !== '') return configured;
  const name = docker('network', 'inspect', 'bridge', '--format', '{{index .Options "com.docker.network.bridge.name"}}').replace('<no value>', '') || 'docker0';
  // Not os.networkInterfaces(): it leaves out an interface that is down, as the bridge is with no container on it.
  const address = /\binet (\d+\.\d+\.\d+\.\d+)\//.exec(execFileSync('ip', ['-4', '-o', 'address', 'show', 'dev', name], { encoding: 'utf8' }))?.[1];
  if (address === undefined) throw new Error(`Docker's bridge network names no gateway, and ${name} has no IPv4 address`);
  return address;
}

describe.skipIf(!engineAnswers && !mustRun)('svc build --image and svc start --orchestrator docker on a real engine', () => {
  let project: string;
  let first: SvcRun;

  beforeAll(async () => {
    if (!engineAnswers) throw new Error('CI needs a Docker engine: .ci/run starts one (scripts/ci/docker-engine.sh)');
    execFileSync('bash', [join(REPO_ROOT, 'scripts/ci/base-image-standins.sh')], { stdio: 'inherit' });
    project = copyProject(join(REPO_ROOT, 'examples/hello'));
    writeFileSync(join(project, '.python-version'), '3.11\n');
    // Secrets a .dockerignore of the project's own lets through: svc keeps them out anyway.
    writeFileSync(join(project, '.dockerignore'), '.git\n');
    mkdirSync(join(project, 'config'));
    for (const secret of ['.env', '.env.production', 'config/.env']) writeFileSync(join(project, secret), 'TOKEN=never-in-the-image\n');
    writeFileSync(join(project, '.env.example'), 'TOKEN=\n');
    first = await runSvc(['build', project, '--image', IMAGE, '--json'], { env: { SERVICE_API_KEY: 'never-baked-in' } });
  }, 900_000);

  // Removing an image's layers takes the engine well past vitest's 10 s on a busy machine.
  afterAll(() => {
    spawnSync('docker', ['image', 'rm', '--force', FAILING_IMAGE, RUNPOD_IMAGE]);
  }, 120_000);

  it('names only base images the stand-ins provide, and builds the generated Dockerfile unchanged', () => {
    const manifest = JSON.parse(readFileSync(join(project, 'apipod-deploy/apipod.json'), 'utf8')) as Manifest;
    const expected = renderDockerfile(planBuild(manifest, { svcVersion: readVersion(), catalog: BASE_IMAGE_CATALOG }));
    expect(readFileSync(join(project, 'apipod-deploy/Dockerfile'), 'utf8')).toBe(expected);
    const bases = [...expected.matchAll(/^FROM --platform=linux\/amd64 (\S+)/gm)].map((match) => match[1] as string);
    expect(bases).toEqual(['node:22-bookworm-slim', 'python:3.11-slim-bookworm']);
    expect(first.exitCode, first.stderr).toBe(0);
    expect(buildResult(first).image_id).toMatch(/^sha256:/);
  });

  it('labels the image with its manifest and bakes no secret into it', () => {
    const config = JSON.parse(docker('image', 'inspect', IMAGE, '--format', '{{json .Config}}')) as {
      Labels: Record<string, string>;
      Env: string[];
      User: string;
      ExposedPorts: Record<string, unknown>;
    };
    const manifest = JSON.parse(readFileSync(join(project, 'apipod-deploy/apipod.json'), 'utf8')) as Manifest;
    expect(JSON.parse(config.Labels['svc.manifest'] as string)).toEqual(manifest);
    expect(config.Labels['org.opencontainers.image.title']).toBe('Hello');
    expect(config.Labels['org.opencontainers.image.created']).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(config.Env.join('\n')).not.toContain('never-baked-in');
    expect(docker('run', '--rm', '--entrypoint', 'find', IMAGE, '/app', '-name', '.env*')).toBe('/app/.env.example');
    for (const secret of ['.env', '.env.production', 'config/.env']) expect(first.stdout).toContain(`warning: ${secret} left out of the build context`);
    expect(config.Env).toContain('APIPOD_COMPUTE=dedicated');
    expect(config.User).toBe('10001:10001');
    expect(Object.keys(config.ExposedPorts)).toEqual(['8000/tcp']);
  });

  it('leaves ffmpeg, the compilers and apt\'s caches out of an image with nothing to convert or compile', () => {
    const found = docker('run', '--rm', '--user', '0', '--entrypoint', 'sh', IMAGE, '-c',
      'command -v gcc g++ cc ffmpeg ffprobe; ls /var/cache/apt/archives/*.deb /var/cache/apt/*.bin 2>/dev/null; ls -A /var/lib/apt/lists; true');
    expect(found).toBe('');
    expect(Number(docker('image', 'inspect', IMAGE, '--format', '{{.Size}}'))).toBeLessThan(450e6);
  });

  it("holds the toolkit's bytecode for the image's Python, which a container could not write back and would compile at every start", () => {
    const uncompiled = docker('run', '--rm', '--entrypoint', 'python', IMAGE, '-c',
      "import importlib.util, pathlib; root = pathlib.Path('/opt/svc/python'); print([str(p) for p in root.rglob('*.py') if not pathlib.Path(importlib.util.cache_from_source(str(p))).is_file()])");
    expect(uncompiled).toBe('[]');
  });

  it('runs the image with svc start --orchestrator docker: /health and /hello answer over HTTP, the key comes from the environment', async () => {
    const server = await startSvc(['--orchestrator', 'docker', '--image', IMAGE, project], { SERVICE_API_KEY: 'e2e-key-123' });
    const health = await fetch(`${server.url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'READY' });
    const anonymous = await fetch(`${server.url}/hello`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(anonymous.status).toBe(401);
    const hello = await fetch(`${server.url}/hello`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer e2e-key-123' },
      body: JSON.stringify({ name: 'Ada' }),
    });
    expect(await hello.json()).toEqual({ greeting: 'Hello, Ada.' });
    // The container's gateway takes svc's default body limit (100 MiB), not Fastify's 1 MiB.
    const large = await fetch(`${server.url}/hello`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer e2e-key-123' },
      body: JSON.stringify({ name: 'x'.repeat(3 * 1024 * 1024) }),
    });
    expect(large.status).toBe(200);

    expect(await server.stop()).toBe(0);
    expect(server.logs()).toContain('stopped');
    expect(docker('ps', '--all', '--quiet', '--filter', `ancestor=${IMAGE}`)).toBe(''); // stopped and removed
    // The container's own ready line gives no advice that would shut the published port out.
    expect(server.logs()).toContain('in a container, reached through its published port');
    // Lines in the order things happened: the container's ready line (its inner port) first, then svc's published one.
    const logs = server.logs();
    expect(logs.indexOf('in a container, reached through its published port')).toBeLessThan(logs.indexOf(`is ready on ${server.url}`));
    expect(server.logs()).not.toContain('--host 127.0.0.1 keeps it to this machine');
  }, 120_000);

  it('applies the serving options and the keys file inside the container, as svc start does locally', async () => {
    const keysFile = join(mkdtempSync(join(tmpdir(), 'svc-keys-')), 'keys.json');
    writeFileSync(keysFile, JSON.stringify({ keys: [{ name: 'ci', key: 'hello-only-key', endpoints: ['/hello'] }] }));
    const server = await startSvc(['--orchestrator', 'docker', '--image', IMAGE, '--api-keys', keysFile, '--max-body-size', '2', project]);
    const call = (path: string, key: string, body: string) =>
      fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body });
    expect((await call('/hello', 'hello-only-key', '{"name":"Ada"}')).status).toBe(200);
    expect((await call('/add', 'hello-only-key', '{"a":1,"b":2}')).status).toBe(403);
    expect((await call('/hello', 'some-other-key', '{}')).status).toBe(401);
    // 2 MiB: above Fastify's own 1 MiB and below svc's default 100, so only the option passed through gives these.
    expect((await call('/hello', 'hello-only-key', JSON.stringify({ name: 'x'.repeat(1.5 * 1024 * 1024) }))).status).toBe(200);
    expect((await call('/hello', 'hello-only-key', JSON.stringify({ name: 'x'.repeat(3 * 1024 * 1024) }))).status).toBe(413);
    expect(await server.stop()).toBe(0);

    const refused = await runSvc(['start', '--orchestrator', 'docker', '--image', IMAGE, '--python', '/usr/bin/python3', project]);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain("--python has no effect with --orchestrator docker");
  }, 120_000);

  it('shares one Redis job queue between the container and a local replica: --job-store redis:// reaches the container by its environment', async () => {
    const bridge = bridgeGateway();
    const redis = await startRedis({ bind: ['127.0.0.1', bridge], password: 'e2e-redis-secret' });
    const stops: Array<() => Promise<unknown>> = [() => redis.stop()];
    try {
      const container = await startSvc(['--orchestrator', 'docker', '--image', IMAGE, '--compute', 'serverless', '--job-store', redis.url.replace('127.0.0.1', bridge), project]);
      stops.unshift(() => container.stop());
      const local = await startSvc([project, '--compute', 'serverless', '--job-store', redis.url]);
      stops.unshift(() => local.stop());
      const read = async (url: string, id: string) => (await fetch(`${url}/v1/jobs/${id}`, { headers: { prefer: 'wait=30' } })).json();
      const intoContainer = await postJson(`${container.url}/hello`, { name: 'Redis' });
      expect(intoContainer.status).toBe(200);
      expect(await read(local.url, intoContainer.body.id)).toMatchObject({ status: 'FINISHED', result: { greeting: 'Hello, Redis.' } });
      const intoLocal = await postJson(`${local.url}/hello`, { name: 'again' });
      expect(await read(container.url, intoLocal.body.id)).toMatchObject({ status: 'FINISHED', result: { greeting: 'Hello, again.' } });
      // The password travels in the container's environment, not its command, which `docker ps` and logs show.
      const id = docker('ps', '--quiet', '--filter', `ancestor=${IMAGE}`);
      expect(docker('inspect', id, '--format', '{{json .Config.Cmd}}')).not.toContain('e2e-redis-secret');
      expect(container.logs()).not.toContain('e2e-redis-secret');
    } finally {
      for (const stop of stops) await stop();
    }
  }, 180_000);

  it('says in one line when the port is taken, in the words of the local orchestrator', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      const run = await runSvc(['start', '--orchestrator', 'docker', '--image', IMAGE, '--host', '127.0.0.1', '--port', String(port), project]);
      expect(run.exitCode).toBe(1);
      expect(run.stderr.trim().split('\n').at(-1)).toBe(`error: port ${port} is in use on 127.0.0.1: stop what listens there, or choose another with --port`);
    } finally {
      taken.close();
    }
  }, 120_000);

  it('rebuilds after a change to service.py alone from the cache, up to the code layer', async () => {
    appendFileSync(join(project, 'service.py'), `\n# a code-only change, new in this run: ${randomUUID()}\n`);
    const stale = await startSvc(['--orchestrator', 'docker', project]); // the image svc build recorded
    expect(stale.logs()).toContain(`service.py changed since ${IMAGE} was built: the image runs the code as it was`);
    expect(await stale.stop()).toBe(0);
    // Weights kept out of git but not out of the build context: the scan skips them, Docker does not.
    mkdirSync(join(project, 'weights'));
    writeFileSync(join(project, 'weights/model.safetensors'), Buffer.alloc(2_000_000));
    writeFileSync(join(project, '.gitignore'), 'weights/\n');
    const second = await runSvc(['build', project, '--image', IMAGE, '--json']);
    expect(second.exitCode, second.stderr).toBe(0);
    expect(second.stdout).toContain(
      'warning: weights/model.safetensors (2.0 MB) goes into the image although svc scan, following .gitignore, left it out of its model files',
    );
    const before = buildResult(first).step_records;
    const after = buildResult(second).step_records;
    const codeStep = after.findIndex((step) => /^COPY --chown=\S+ \. \/app\/$/.test(step.instruction));
    expect(codeStep).toBeGreaterThan(0);
    for (const [index, step] of after.slice(0, codeStep).entries()) {
      if (step.instruction.startsWith('FROM ')) continue; // a base image is looked up, not cached
      expect(step.cached, `step ${step.step} (${step.instruction}) should come from the cache`).toBe(true);
      expect(step.layer).toBe(before[index]?.layer);
    }
    expect(after[codeStep]?.cached).toBe(false);
    expect(after[codeStep]?.layer).not.toBe(before[codeStep]?.layer);

    // Nothing changed since: every step comes from the cache but the label of the build's
    // time. (The record of the last build, apipod-deploy/image.json, changes with each build,
    // so it stays out of the context.)
    const third = await runSvc(['build', project, '--image', IMAGE, '--json']);
    expect(third.exitCode, third.stderr).toBe(0);
    const rerun = buildResult(third).step_records.filter((step) => !step.cached && !step.instruction.startsWith('FROM '));
    expect(rerun.map((step) => step.instruction.slice(0, 40))).toEqual(['LABEL org.opencontainers.image.created="']);
  }, 600_000);

  it("builds a runpod worker image that takes the provider's jobs as it is, and serves the library's test API under svc start", async () => {
    const worker = copyProject(join(REPO_ROOT, 'examples/hello'));
    writeFileSync(join(worker, '.python-version'), '3.11\n');
    const service = readFileSync(join(worker, 'service.py'), 'utf8');
    writeFileSync(join(worker, 'service.py'), service.replace('APIPod(title="Hello")', 'APIPod(title="Hello", provider="runpod")'));
    const build = await runSvc(['build', worker, '--image', RUNPOD_IMAGE, '--json']);
    expect(build.exitCode, build.stderr).toBe(0);

    // As the provider runs it: its RUNPOD_* variables, no port, no command of ours.
    const provider = await startRunpodStandin({ listen: '0.0.0.0', advertise: 'provider.internal' });
    const variables = Object.entries(provider.env).flatMap(([name, value]) => ['--env', `${name}=${value}`]);
    const container = docker('run', '--detach', '--add-host', 'provider.internal:host-gateway', ...variables, RUNPOD_IMAGE);
    try {
      provider.queue({ id: 'e2e-job', input: { path: '/hello', name: 'Ada' } });
      expect((await provider.result('e2e-job', 120_000)).body).toEqual({ output: { greeting: 'Hello, Ada.' } });
    } finally {
      spawnSync('docker', ['rm', '--force', container]);
      await provider.close();
    }

    const server = await startSvc(['--orchestrator', 'docker', '--image', RUNPOD_IMAGE, worker]);
    const answer = await postJson(`${server.url}/runsync`, { input: { path: '/add', a: 1, b: 2 } });
    expect(answer.body).toMatchObject({ status: 'COMPLETED', output: { sum: 3 } });
    expect(await server.stop()).toBe(0);
  }, 900_000);

  it('builds a Dockerfile at the project root instead, and a failing step shows itself and the tail of its log, exit 1', async () => {
    const custom = copyProject(join(REPO_ROOT, 'examples/hello'));
    writeFileSync(
      join(custom, 'Dockerfile'),
      'FROM python:3.11-slim-bookworm\nRUN echo "getting ready" && echo "about to fail" >&2 && exit 3\n',
    );
    const run = await runSvc(['build', custom, '--image', FAILING_IMAGE]);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain('the project has its own Dockerfile: building that one instead of apipod-deploy/Dockerfile');
    expect(run.stderr).toMatch(/^step 2\/2 failed: RUN echo "getting ready"/m);
    expect(run.stderr).toMatch(/^ {2}getting ready$/m);
    expect(run.stderr).toMatch(/^ {2}about to fail$/m);
    expect(run.stderr.trim().split('\n').at(-1)).toMatch(/^error: step 2\/2 \(RUN .*\) failed: The command .* returned a non-zero code: 3$/);
  }, 300_000);

  it("fails the build at the code, in the image's Python's words, when it refuses a service file the scan let through", async () => {
    const mixed = copyProject(join(REPO_ROOT, 'examples/hello'));
    writeFileSync(join(mixed, '.python-version'), '3.11\n');
    // Tabs and spaces mixed: Python refuses the file, the scan does not look at indentation.
    writeFileSync(
      join(mixed, 'service.py'),
      'from apipod import APIPod\n\napp = APIPod(title="Mixed")\n\n\n@app.endpoint("/hello")\ndef hello(name: str) -> dict:\n' +
        '\tif name:\n        return {"greeting": name}\n\treturn {}\n',
    );
    const run = await runSvc(['build', mixed, '--image', FAILING_IMAGE]);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toMatch(/^ {2}service\.py:9: TabError: inconsistent use of tabs and spaces in indentation$/m);
    expect(run.stderr.trim().split('\n').at(-1)).toMatch(/^error: step \d+\/\d+ \(RUN PYTHONPATH=\/opt\/svc\/python python -m apipod\._runtime\.compile_check service\.py\) failed: /);
  }, 600_000);

  it('names a file or directory of the build context that the user may not read, before building', async () => {
    const project = copyProject(join(REPO_ROOT, 'examples/hello'));
    writeFileSync(join(project, 'data.txt'), 'x\n');
    mkdirSync(join(project, 'private'));
    execFileSync('chmod', ['-R', 'a+rwX', dirname(project)]);
    // As root every file is readable: run svc as nobody, in the engine's group.
    const dockerGroup = execFileSync('stat', ['--format', '%g', '/var/run/docker.sock'], { encoding: 'utf8' }).trim();
    const buildAsUser = () => {
      const args = [SVC_BIN, 'build', project, '--image', FAILING_IMAGE];
      const run = process.getuid?.() === 0
        ? spawnSync('setpriv', ['--reuid=65534', '--regid=65534', `--groups=${dockerGroup}`, process.execPath, ...args], { encoding: 'utf8' })
        : spawnSync(process.execPath, args, { encoding: 'utf8' });
      return [run.status, run.stderr.trim().split('\n').at(-1)];
    };
    chmodSync(join(project, 'data.txt'), 0o000);
    expect(buildAsUser()).toEqual([1, 'error: data.txt: cannot be read (EACCES), and the build context sends it: fix its permissions, or add it to .dockerignore']);
    chmodSync(join(project, 'data.txt'), 0o644);
    chmodSync(join(project, 'private'), 0o000);
    expect(buildAsUser()).toEqual([1, 'error: private: cannot be read (EACCES), and the build context sends it: fix its permissions, or add it to .dockerignore']);
    // Excluded, it is not read, even with an exception in .dockerignore that makes excluded directories walked.
    writeFileSync(join(project, '.dockerignore'), '.env\nprivate\n!apipod-deploy/\n');
    chmodSync(join(project, '.dockerignore'), 0o644);
    expect(buildAsUser()[1]).not.toContain('private');
  }, 120_000);

  it('refuses, before building, a .dockerignore that leaves out part of the staged runtime, naming the file', async () => {
    const project = copyProject(join(REPO_ROOT, 'examples/hello'));
    writeFileSync(join(project, '.dockerignore'), '.env\napipod-deploy/svc/dist/chunks/\n');
    const run = await runSvc(['build', project, '--image', FAILING_IMAGE]);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toMatch(/\.dockerignore: leaves out apipod-deploy\/svc\/dist\/chunks\/[\w-]+\.js, which the generated Dockerfile copies/);
    expect(run.stderr).not.toMatch(/^step /m);
    // The staged requirements too, which a rule for the project's own files can catch.
    writeFileSync(join(project, 'requirements.txt'), 'six==1.16.0\n');
    writeFileSync(join(project, '.dockerignore'), '.env\n**/*.txt\n');
    const requirements = await runSvc(['build', project, '--image', FAILING_IMAGE]);
    expect([requirements.exitCode, requirements.stderr.trim().split('\n').at(-1)]).toEqual([
      1,
      'error: .dockerignore: leaves out apipod-deploy/requirements.txt, which the generated Dockerfile copies; add `!apipod-deploy/` to it',
    ]);
  }, 120_000);
});

function readVersion(): string {
  return (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
}
