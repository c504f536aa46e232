import { SvcError } from '../svc-error.js';

/**
 * How the runpod worker takes its jobs:
 * - `worker`: from the provider's job endpoints, which the provider names in the
 *   RUNPOD_WEBHOOK_* variables of its workers (production);
 * - `test-server`: from the provider library's local test API (POST /run, /runsync, ...);
 * - `test-input`: one job from a JSON file, then svc exits 0 or 1 with its result.
 */
export type RunpodMode =
  | { kind: 'worker' }
  | { kind: 'test-server'; reason: string }
  | { kind: 'test-input'; job: TestJob; file: string };

/** A job as the provider hands it out: `{"input": {"path": "/generate", ...parameters}}`. */
export interface TestJob {
  input: { [name: string]: unknown };
  id?: string;
}

export interface RunpodModeInputs {
  testServer: boolean;
  /** `--test-input FILE`, with the file's text read by the caller. */
  testInput: { file: string; text: string } | undefined;
  env: NodeJS.ProcessEnv;
}

/** The variable the provider sets on its workers, and its library reads to take jobs. */
export const JOB_TAKE_VARIABLE = 'RUNPOD_WEBHOOK_GET_JOB';

/**
 * The flags decide; without them, a process the provider started (it sets
 * RUNPOD_WEBHOOK_GET_JOB) is a worker, and anywhere else the local test API is served,
 * so `svc start` on a runpod service works on a laptop as it is.
 */
export function chooseRunpodMode(inputs: RunpodModeInputs): RunpodMode {
  if (inputs.testServer && inputs.testInput) {
    throw new SvcError('usage', '--test-server and --test-input are two ways to try the worker: choose one');
  }
  if (inputs.testInput) return { kind: 'test-input', job: parseTestJob(inputs.testInput.text, inputs.testInput.file), file: inputs.testInput.file };
  if (inputs.testServer) return { kind: 'test-server', reason: '--test-server' };
  if (inputs.env[JOB_TAKE_VARIABLE]) return { kind: 'worker' };
  return { kind: 'test-server', reason: `${JOB_TAKE_VARIABLE} is not set, so this is not one of the provider's workers` };
}

/** A test input file's job, checked for the shape the provider's library needs. */
export function parseTestJob(text: string, file: string): TestJob {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new SvcError('usage', `is not valid JSON: ${(error as Error).message}`, { file });
  }
  const example = '{"input": {"path": "/generate", ...parameters}}';
  if (!isObject(value)) throw new SvcError('usage', `must hold a job object such as ${example}`, { file });
  if (!isObject(value.input)) throw new SvcError('usage', `needs "input", an object of the endpoint's parameters, such as ${example}`, { file, field: 'input' });
  if (value.id !== undefined && typeof value.id !== 'string') throw new SvcError('usage', 'must be a string', { file, field: 'id' });
  return value as unknown as TestJob;
}

function isObject(value: unknown): value is { [key: string]: unknown } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
