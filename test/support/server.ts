import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { SVC_BIN } from './svc.js';

export interface RunningSvc {
  /** Where it listens; empty for a provider's worker, which takes jobs instead (`taking-jobs`). */
  url: string;
  process: ResultPromise;
  /** Everything the server wrote on stderr so far. */
  logs: () => string;
  /** SIGTERM, then wait for the exit; returns the exit code. */
  stop: () => Promise<number>;
}

/**
 * Starts the built `svc start` on a free port and waits until it says it listens (the
 * `--json` listening event; or `starting`, before the workers are ready; or `taking-jobs`,
 * a provider's worker). Fails with the server's own output if it exits first. `bin` is
 * another installation's `svc` (an installed npm package) in place of this checkout's. Each
 * server gets a state directory of its own, where serverless compute keeps its job file by
 * default: servers of one fixture project would otherwise share it (and the jobs of earlier runs).
 */
export async function startSvc(
  args: string[],
  env: Record<string, string> = {},
  { until = 'listening', bin = SVC_BIN }: { until?: 'listening' | 'starting' | 'taking-jobs'; bin?: string } = {},
): Promise<RunningSvc> {
  const child = execa(process.execPath, [bin, 'start', '--port', '0', '--host', '127.0.0.1', '--json', ...args], {
    env: { XDG_STATE_HOME: mkdtempSync(join(tmpdir(), 'svc-test-state-')), ...env },
    reject: false,
    buffer: false,
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const url = await new Promise<string>((resolve, reject) => {
    let stdout = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      for (const line of stdout.split('\n')) {
        if (line.startsWith('{') && line.includes(`"${until}"`)) resolve(JSON.parse(line).url ?? '');
      }
    });
    child.on('exit', (code) => reject(new Error(`svc start exited with ${code} before listening:\n${stderr}${stdout}`)));
  });
  return {
    url,
    process: child,
    logs: () => stderr,
    stop: async () => {
      child.kill('SIGTERM');
      const result = await child;
      return result.exitCode ?? -1;
    },
  };
}

export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: the test sees the text
  }
  return { status: response.status, body: parsed, headers: response.headers };
}
