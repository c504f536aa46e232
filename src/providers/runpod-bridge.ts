import { spawn } from 'node:child_process';
import { delimiter } from 'node:path';
import type { Readable } from 'node:stream';
import type { EndpointReport } from '../worker/protocol.js';
import { readLogLines } from '../worker/line-reader.js';
import { toolkitPythonDir } from '../worker/svc-package.js';
import type { TestJob } from './runpod-mode.js';

/** An endpoint as the bridge routes jobs to it (python/apipod/_runtime/provider_routes.py: Route). */
export interface BridgeRoute {
  path: string;
  methods: string[];
  streaming: boolean;
  chat: boolean;
}

export type BridgeMode =
  | { kind: 'worker' }
  | { kind: 'test-server'; host: string; port: number }
  | { kind: 'test-input'; job: TestJob };

/** A test job's result as the provider's library reports it. */
/** The job's result as the provider's library reports it: an `error` fails it, beside any `output`. */
export type TestJobResult = {
  output?: unknown;
  error?: unknown;
};

export interface RunpodBridgeOptions {
  python: string;
  projectDir: string;
  /** svc's gateway on the loopback interface, and the key only the bridge holds. */
  gateway: { url: string; key: string };
  /** Jobs taken at once: one per worker process. */
  concurrency: number;
  routes: BridgeRoute[];
  mode: BridgeMode;
  /** The library's log level unless RUNPOD_LOG_LEVEL says otherwise: its DEBUG logs every poll. */
  logLevel: 'INFO' | 'DEBUG';
  env?: NodeJS.ProcessEnv;
  onLog: (stream: 'stdout' | 'stderr', line: string) => void;
}

export interface BridgeExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface RunpodBridge {
  readonly exited: Promise<BridgeExit>;
  /** With a test input: its result, once the bridge has written it (null if it exits first). */
  readonly testResult: Promise<TestJobResult | null>;
  /** SIGTERM (the library lets running jobs finish), then SIGKILL after the grace period. */
  stop(graceMs: number): Promise<BridgeExit>;
}

const RESULT_FD = 3;

export function bridgeRoutes(endpoints: readonly EndpointReport[]): BridgeRoute[] {
  return endpoints.map((endpoint) => ({ path: endpoint.path, methods: endpoint.methods, streaming: endpoint.is_generator, chat: endpoint.is_chat }));
}

/**
 * Starts `python -m apipod._runtime.runpod_bridge`: the provider's library taking jobs, with svc's
 * handler sending them to the gateway. The process gets its own group, like the workers,
 * so that svc stops it in order; it exits by itself when svc's end of its stdin closes,
 * so it never outlives svc and takes jobs nobody can run.
 */
export function startRunpodBridge(options: RunpodBridgeOptions): RunpodBridge {
  const baseEnv = options.env ?? process.env;
  const settings = {
    gateway: options.gateway.url,
    key: options.gateway.key,
    concurrency: options.concurrency,
    routes: options.routes,
    mode: options.mode,
    result_fd: RESULT_FD,
  };
  const child = spawn(options.python, ['-m', 'apipod._runtime.runpod_bridge'], {
    cwd: options.projectDir,
    env: {
      ...baseEnv,
      PYTHONPATH: [toolkitPythonDir(), baseEnv.PYTHONPATH].filter(Boolean).join(delimiter),
      PYTHONUNBUFFERED: '1',
      RUNPOD_LOG_LEVEL: baseEnv.RUNPOD_LOG_LEVEL ?? baseEnv.RUNPOD_DEBUG_LEVEL ?? options.logLevel,
      APIPOD_RUNPOD_SETTINGS: JSON.stringify(settings),
    },
    stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
    detached: true,
  });
  forwardLines(child.stdout, (line) => options.onLog('stdout', line));
  forwardLines(child.stderr, (line) => options.onLog('stderr', line));

  const exited = new Promise<BridgeExit>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', (error) => {
      options.onLog('stderr', `could not start ${options.python}: ${error.message}`);
      resolve({ code: null, signal: null });
    });
  });
  const testResult = readResult(child.stdio[RESULT_FD] as Readable);

  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, signal);
    } catch {
      // already gone
    }
  };
  let stopping: Promise<BridgeExit> | null = null;
  return {
    exited,
    testResult,
    stop: (graceMs) => {
      stopping ??= (async () => {
        if (child.exitCode !== null || child.signalCode !== null) return exited;
        signalGroup('SIGTERM');
        const timer = setTimeout(() => signalGroup('SIGKILL'), graceMs);
        const exit = await exited;
        clearTimeout(timer);
        return exit;
      })();
      return stopping;
    },
  };
}

function forwardLines(stream: Readable | null, onLine: (line: string) => void): void {
  if (stream) readLogLines(stream, onLine);
}

async function readResult(stream: Readable): Promise<TestJobResult | null> {
  let text = '';
  for await (const chunk of stream) text += String(chunk);
  if (text.trim() === '') return null;
  return JSON.parse(text) as TestJobResult;
}
