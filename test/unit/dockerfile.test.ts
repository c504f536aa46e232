import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import catalog from '../../src/build/base-images.json' with { type: 'json' };
import { planBuild } from '../../src/build/build-plan.js';
import { renderDockerfile } from '../../src/build/dockerfile.js';
import type { BaseImageCatalog } from '../../src/scan/base-image.js';
import type { Manifest } from '../../src/scan/manifest.js';
import { expectGolden } from '../support/golden.js';
import { REPO_ROOT } from '../support/svc.js';

/**
 * The generated Dockerfile for every reviewed manifest (test/golden/scan: the examples and
 * each framework shape), compared with its reviewed copy under test/golden/dockerfile.
 */
const SCAN_GOLDEN = join(REPO_ROOT, 'test/golden/scan');
const DOCKERFILE_GOLDEN = join(REPO_ROOT, 'test/golden/dockerfile');
const options = { svcVersion: '0.0.0-test', catalog: catalog as BaseImageCatalog };

function manifestOf(name: string): Manifest {
  return JSON.parse(readFileSync(join(SCAN_GOLDEN, `${name}.json`), 'utf8')) as Manifest;
}

describe('generated Dockerfile', () => {
  for (const file of readdirSync(SCAN_GOLDEN).filter((name) => name.endsWith('.json'))) {
    const name = file.replace(/\.json$/, '');
    it(`is the reviewed one for ${name}`, () => {
      expectGolden(renderDockerfile(planBuild(manifestOf(name), options)), join(DOCKERFILE_GOLDEN, `${name}.Dockerfile`));
    });
  }

  it('builds FROM the --base-image reference when one is given, on linux/amd64', () => {
    const text = renderDockerfile(planBuild(manifestOf('hello'), { ...options, baseImage: 'python:3.10-slim' }));
    expect(text).toMatch(/^FROM --platform=linux\/amd64 python:3\.10-slim$/m);
    expect(text).not.toContain('uv python install');
  });
});
