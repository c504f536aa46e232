import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { expectGolden } from '../support/golden.js';

describe('golden files', () => {
  let directory: string;
  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'svc-golden-'));
  });
  afterEach(() => {
    vi.unstubAllEnvs();
    rmSync(directory, { recursive: true, force: true });
  });

  it('fails on a missing golden, naming UPDATE_GOLDEN=1, and writes nothing', () => {
    vi.stubEnv('UPDATE_GOLDEN', undefined);
    vi.stubEnv('CI', undefined);
    const missing = join(directory, 'deleted.Dockerfile');
    expect(() => expectGolden('FROM scratch\n', missing)).toThrow(`golden file ${missing} is missing: run the test with UPDATE_GOLDEN=1 to write it, then review and commit it`);
    expect(existsSync(missing)).toBe(false);
  });

  it('writes the golden with UPDATE_GOLDEN=1, then holds the text to it', () => {
    vi.stubEnv('UPDATE_GOLDEN', '1');
    const path = join(directory, 'new/hello.Dockerfile');
    expectGolden('FROM scratch\n', path);
    expect(readFileSync(path, 'utf8')).toBe('FROM scratch\n');
    vi.stubEnv('UPDATE_GOLDEN', undefined);
    expect(() => expectGolden('FROM busybox\n', path)).toThrow(/differs from .*hello\.Dockerfile; if the change is intended, rerun with UPDATE_GOLDEN=1/);
  });
});
