import { cpSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { execa } from 'execa';

export const REPO_ROOT = resolve(import.meta.dirname, '../..');
export const SVC_BIN = join(REPO_ROOT, 'bin/svc.js');

export interface SvcRun {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI the way CI does: no TTY, no colour unless a test asks for it. */
export async function runSvc(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<SvcRun> {
  // The test runner's own colour settings must not leak into the CLI under test.
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => name !== 'FORCE_COLOR' && name !== 'NO_COLOR'),
  );
  const result = await execa(process.execPath, [SVC_BIN, ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    env: { ...inherited, ...options.env },
    extendEnv: false,
    reject: false,
  });
  return { exitCode: result.exitCode ?? -1, stdout: result.stdout, stderr: result.stderr };
}

/**
 * A copy of a project in a fresh temporary directory with the same name, so scans never write
 * into the repo. The copy is the project as a clone has it: without the apipod-deploy/ and
 * .dockerignore that `svc scan` and `svc build` write into a project (someone who followed
 * docs/build.md on an example has them). No fixture tracks either; a test that needs one
 * writes it into its copy.
 */
export function copyProject(source: string): string {
  const parent = mkdtempSync(join(tmpdir(), 'svc-test-'));
  const copy = join(parent, basename(source));
  const written = new Set([join(source, 'apipod-deploy'), join(source, '.dockerignore')]);
  cpSync(source, copy, { recursive: true, filter: (path) => !written.has(path) });
  return copy;
}
