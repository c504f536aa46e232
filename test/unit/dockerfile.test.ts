import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { planBuild } from '../../src/image/build-plan.js';
import { renderDockerfile } from '../../src/image/dockerfile.js';
import { BASE_IMAGE_CATALOG } from '../../src/image/base-image-catalog.js';
import type { Manifest } from '../../src/scan/manifest.js';
import { expectGolden } from '../support/golden.js';
import { REPO_ROOT } from '../support/svc.js';

/**
 * The generated Dockerfile for every reviewed manifest (test/golden/scan: the examples and
 * each framework shape), compared with its reviewed copy under test/golden/dockerfile.
 */
const SCAN_GOLDEN = join(REPO_ROOT, 'test/golden/scan');
const DOCKERFILE_GOLDEN = join(REPO_ROOT, 'test/golden/dockerfile');
const options = { svcVersion: '0.0.0-test', catalog: BASE_IMAGE_CATALOG };

function manifestOf(name: string): Manifest {
  return JSON.parse(readFileSync(join(SCAN_GOLDEN, `${name}.json`), 'utf8')) as Manifest;
}

describe('generated Dockerfile', () => {
  for (const file of readdirSync(SCAN_GOLDEN).filter((name) => name.endsWith('.json'))) {
    const name = file.replace(/\.json$/, '');
    if (manifestOf(name).dependencies.unreadable.length > 0) {
      it(`is refused for ${name}, whose requirements hold a line pip cannot read`, () => {
        expect(() => planBuild(manifestOf(name), options)).toThrow(/^requirements\.txt:2: .*pip cannot read it either/);
      });
      continue;
    }
    it(`is the reviewed one for ${name}`, () => {
      expectGolden(renderDockerfile(planBuild(manifestOf(name), options)), join(DOCKERFILE_GOLDEN, `${name}.Dockerfile`));
    });
  }

  it('installs numpy and Pillow after the requirements in place of apipod, unless the project lists them', () => {
    const hello = manifestOf('hello');
    const requirement = (name: string, line: number) => ({
      name, specifier: '', extras: [], marker: null, url: null, editable: false, hashes: [], source: `requirements.txt:${line}`,
    });
    const withApipod = (...names: string[]): Manifest => ({
      ...hello,
      dependencies: {
        ...hello.dependencies,
        requirements: [requirement('apipod', 1), ...names.map((name, index) => requirement(name, index + 2))],
        apipod_requirement: 'requirements.txt:1',
      },
    });
    const alone = planBuild(withApipod(), options);
    expect(alone.toolkitPackages).toEqual(['numpy', 'Pillow']);
    expect(renderDockerfile(alone)).toMatch(/^RUN python -m pip install numpy Pillow$/m);
    expect(alone.notes[0]).toContain('the image gets numpy and Pillow in its place');
    const listingNumpy = planBuild(withApipod('torch', 'NumPy'), options);
    expect(listingNumpy.toolkitPackages).toEqual(['Pillow']);
    expect(renderDockerfile(listingNumpy)).toMatch(/^RUN python -m pip install -r \/opt\/svc\/requirements\.txt \\\n && python -m pip install Pillow$/m);
    expect(planBuild(hello, options).toolkitPackages).toEqual([]);
  });

  it("leaves compute or provider to the app when each arm of an `if` makes the app with its own, with every arm's provider library", () => {
    const manifest = manifestOf('hello');
    const branching = (branch_arguments: Record<string, string[]>): Manifest => ({ ...manifest, app: { ...manifest.app!, branch_arguments } });
    const compute = renderDockerfile(planBuild(branching({ compute: ['serverless', 'dedicated'] }), options));
    expect(compute).not.toContain('APIPOD_COMPUTE');
    expect(compute).toMatch(/^ENV HOME=\/home\/svc \\\n {4}APIPOD_PROVIDER="localhost"$/m);
    const both = planBuild(branching({ compute: ['serverless', 'dedicated'], provider: ['runpod', 'localhost'] }), options);
    expect([both.compute, both.provider, both.providerPackages]).toEqual([null, null, ['runpod>=1.7.7']]);
    const text = renderDockerfile(both);
    expect(text).toMatch(/^ENV HOME=\/home\/svc\nEXPOSE 8000$/m);
    expect(text).toContain("python -m pip install 'runpod>=1.7.7'");
    expect(both.notes).toContain("APIPod's provider depends on which branch of service.py runs: the image sets no default for it and leaves it to the app");
  });

  it('keeps gcc and g++ in the image only where code compiles while the service runs, and in a build stage where pip alone needs them', () => {
    const finalStage = (text: string) => text.slice(text.lastIndexOf('\nFROM '));
    const compilersIn = (text: string) => /^ {6}g\+\+ \\\n {6}gcc \\$/m.test(text);
    // torch (CPU or CUDA) and CUDA extensions built against it: one stage, compilers in it.
    for (const name of ['torch-cpu', 'torch-gpu', 'flash-attn']) {
      const plan = planBuild(manifestOf(name), options);
      expect([name, plan.compilers.where, plan.buildStage]).toEqual([name, 'image', null]);
      const text = renderDockerfile(plan);
      expect(text).not.toContain(' AS build');
      expect(compilersIn(text)).toBe(true);
    }
    // Requirements without run-time compiling, on a CPU or a CUDA base: pip compiles in a build stage.
    for (const name of ['image', 'onnx-gpu', 'tensorflow-gpu']) {
      const plan = planBuild(manifestOf(name), options);
      expect([name, plan.compilers.where]).toEqual([name, 'build-stage']);
      const text = renderDockerfile(plan);
      expect(text).toContain(`FROM --platform=linux/amd64 ${plan.base.image} AS build\n`);
      expect(compilersIn(text.slice(0, text.lastIndexOf('\nFROM ')))).toBe(true);
      expect(compilersIn(finalStage(text))).toBe(false);
      expect(finalStage(text)).toMatch(/^COPY --from=build \/opt\/venv \/opt\/venv$/m);
      expect(finalStage(text)).not.toContain('pip install');
    }
    // Nothing to install: no compilers anywhere, and --compilers puts them back.
    const hello = planBuild(manifestOf('hello'), options);
    expect([hello.compilers.where, hello.systemPackages]).toEqual(['none', ['ca-certificates', 'tini']]);
    expect(renderDockerfile(hello)).not.toMatch(/\bgcc\b|\bg\+\+/);
    const asked = planBuild(manifestOf('hello'), { ...options, compilers: true });
    expect([asked.compilers, asked.systemPackages]).toEqual([{ where: 'image', reason: '--compilers' }, ['ca-certificates', 'g++', 'gcc', 'tini']]);
    // A requirement that is a path into the project installs after the code, in the image, with them.
    const image = manifestOf('image');
    const localLib = { name: '', specifier: '', extras: [], marker: null, url: './lib', editable: true, hashes: [], source: 'requirements.txt:9' };
    const local = planBuild({ ...image, dependencies: { ...image.dependencies, requirements: [...image.dependencies.requirements, localLib] } }, options);
    expect([local.requirementFiles.local !== null, local.compilers.where, local.buildStage]).toEqual([true, 'image', null]);
  });

  it('puts ffmpeg in the image when the service handles audio or video, or with --ffmpeg, and nowhere else', () => {
    const hello = manifestOf('hello');
    expect(planBuild(hello, options).ffmpeg.included).toBe(false);
    expect(renderDockerfile(planBuild(hello, options))).not.toContain('ffmpeg');
    const asked = planBuild(hello, { ...options, ffmpeg: true });
    expect([asked.ffmpeg, asked.systemPackages]).toEqual([{ included: true, reason: '--ffmpeg' }, ['ca-certificates', 'ffmpeg', 'tini']]);
    expect(renderDockerfile(asked)).toMatch(/^# ffmpeg: --ffmpeg\.\nRUN apt-get update[^]*^ {6}ffmpeg \\$/m);
    const media = planBuild({ ...hello, system_packages: ['ffmpeg'] }, options);
    expect(media.ffmpeg).toEqual({ included: true, reason: 'the service handles audio or video' });
  });

  it('builds FROM the --base-image reference when one is given, on linux/amd64', () => {
    const text = renderDockerfile(planBuild(manifestOf('hello'), { ...options, baseImage: 'python:3.10-slim' }));
    expect(text).toMatch(/^FROM --platform=linux\/amd64 python:3\.10-slim$/m);
    expect(text).not.toContain('uv python install');
  });

  it('has a HEALTHCHECK that passes while /health says READY or BUSY, and fails while STARTING, DEFUNCT, or down', async () => {
    let status = 'STARTING';
    const server = createServer((_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status })));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const text = renderDockerfile({ ...planBuild(manifestOf('hello'), options), port });
    const command = JSON.parse(/^ {2}CMD (\[.*\])$/m.exec(text.slice(text.indexOf('HEALTHCHECK')))![1]!) as string[];
    const exitCodeWhen = (state: string) => {
      status = state;
      // spawn, not spawnSync: the server answering the check runs in this process.
      const child = spawn(command[0]!, command.slice(1), { stdio: 'ignore' });
      return new Promise<number | null>((resolve) => child.on('exit', resolve));
    };
    try {
      expect(await exitCodeWhen('READY')).toBe(0);
      expect(await exitCodeWhen('BUSY')).toBe(0);
      expect(await exitCodeWhen('STARTING')).toBe(1);
      expect(await exitCodeWhen('DEFUNCT')).toBe(1);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    expect(spawnSync(command[0]!, command.slice(1)).status).toBe(1); // nothing listening
  });
});
