import { resolve } from 'node:path';
import { SvcError } from '../svc-error.js';
import type { ErrorInfo, SetupStage } from './protocol.js';

/** Where starting a worker failed: a stage the worker reported, or `process` when it died or broke the protocol first. */
export type StartStage = SetupStage | 'process';

const STAGE_DESCRIPTIONS: Record<StartStage, string> = {
  import: 'importing the service failed',
  lifespan: 'the lifespan startup failed',
  schema: "an endpoint's signature cannot be described",
  process: 'the worker stopped before it was ready',
};

/** A worker that could not get ready; carries the Python error and, when known, the service file's line. */
export class WorkerStartError extends SvcError {
  constructor(
    readonly stage: StartStage,
    readonly error: ErrorInfo,
    serviceFile: string,
  ) {
    // A process failure is described by svc, not by a Python exception: no type to name.
    const cause = stage === 'process' ? error.message : `${error.type}: ${error.message}`;
    super('invalid-project', `${STAGE_DESCRIPTIONS[stage]}: ${cause}`, {
      file: serviceFile,
      line: lastLineInFile(error.traceback, serviceFile),
    });
  }
}

/**
 * The innermost traceback frame in `file`, where the user's own code went wrong. Python puts
 * a file it could not decode at line 0 (a SyntaxError's "encoding problem"): no line at all.
 */
function lastLineInFile(traceback: string, file: string): number | undefined {
  const target = resolve(file);
  let line: number | undefined;
  for (const frame of traceback.matchAll(/^\s*File "(.+)", line (\d+)/gm)) {
    if (resolve(frame[1] ?? '') === target) line = Number(frame[2]) || undefined;
  }
  return line;
}
