import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServeLog } from '../serve-log.js';
import type { ReadyEvent } from '../worker/protocol.js';
import { checkedInterpreter, choosePythonCandidate, unavailableInterpreter, type PythonCandidate, type PythonInterpreter } from '../worker/python-interpreter.js';
import { NoInterpreterReport } from '../worker/worker-process.js';
import { WorkerPool } from '../worker/worker-pool.js';

/** What a local server's worker pools are made of. */
export interface LocalPoolSettings {
  workers: number;
  python: string;
  /** This server's directory for files in transit (serveLocally). */
  fileDir: string;
  serviceFile: string;
  projectDir: string;
  queueSize: number;
  cancelGraceMs: number;
  log: ServeLog;
}

export function newLocalPool(settings: LocalPoolSettings): WorkerPool {
  return new WorkerPool({
    workers: settings.workers,
    python: settings.python,
    fileDir: settings.fileDir,
    serviceFile: settings.serviceFile,
    projectDir: settings.projectDir,
    maxQueue: settings.queueSize,
    cancelGraceMs: settings.cancelGraceMs,
    onLog: (line) => settings.log.worker(line.worker, line.call, line.stream, line.line),
  });
}

/** Workers started before the gateway's code loads; serveLocally takes them over. */
export interface StartingWorkers {
  pool: WorkerPool;
  /** The pool's start: its first ready report, or a WorkerStartError. */
  started: Promise<ReadyEvent>;
  candidate: PythonCandidate;
  /** Files in transit between the gateway and the workers, readable by this user alone; serveLocally removes it. */
  fileDir: string;
}

/**
 * Starts the workers of `svc start` (local, without --reload) with the interpreter a user
 * would expect (choosePythonCandidate), without asking it first: Python starts and imports
 * the service while Node loads the gateway's code (~70 ms), and the first worker's report
 * (checkedWorkersInterpreter) says whether it may run.
 */
export function startLocalWorkers(settings: Omit<LocalPoolSettings, 'python' | 'fileDir'> & { explicitPython: string | undefined }): StartingWorkers {
  const candidate = choosePythonCandidate({ explicit: settings.explicitPython, projectDir: settings.projectDir, env: process.env });
  const fileDir = mkdtempSync(join(tmpdir(), 'svc-files-'));
  const pool = newLocalPool({ ...settings, python: candidate.path, fileDir });
  const started = pool.start();
  started.catch(() => {}); // awaited by serveLocally, which may first fail on something else
  return { pool, started, candidate, fileDir };
}

/** The workers' interpreter, or the SvcError naming it: not found, not running, or too old. */
export async function checkedWorkersInterpreter(workers: StartingWorkers): Promise<PythonInterpreter> {
  try {
    return checkedInterpreter(workers.candidate, await workers.pool.interpreter);
  } catch (error) {
    if (error instanceof NoInterpreterReport) throw unavailableInterpreter(workers.candidate, error.missing, error.message);
    throw error;
  }
}
