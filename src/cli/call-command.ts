import { readFile } from 'node:fs/promises';
import { Chalk } from 'chalk';
import { Option, type Command } from 'commander';
import {
  ConnectionError,
  HttpStatusError,
  JobEndedError,
  NoAnswerError,
  ServiceClient,
  ServiceError,
  WaitExpiredError,
  hasEnded,
  type EndpointMethod,
  type JobEnvelope,
  type ProgressUpdate,
} from '../client/index.js';
import { SvcError } from '../svc-error.js';
import { createCallProgress } from './call-progress.js';
import { oneOf, seconds } from './option-parsers.js';
import type { Output } from './output.js';
import { runCommand, type CommonOptions } from './run-command.js';

const ENDPOINT_METHODS: readonly EndpointMethod[] = ['GET', 'POST'];

interface CallOptions extends CommonOptions {
  url?: string;
  data?: string;
  async?: boolean;
  wait?: number;
  method: EndpointMethod;
}

/** What `svc call` prints with --json: the result, and the job it came from when there was one. */
interface CallOutcome {
  status: string;
  result: unknown;
  job: JobEnvelope | null;
}

export function registerCallCommand(program: Command): void {
  program
    .command('call')
    .summary('call an endpoint of a running service and print its result')
    .description(
      'Call an endpoint with the job-envelope client: the result is printed on stdout as JSON, whether ' +
        'the service answers at once (dedicated) or with a job to follow (serverless). Progress goes to ' +
        'stderr. The key comes from $SERVICE_API_KEY. Exits 1 when the job ends FAILED, TIMEOUT or ' +
        'CANCELLED (Ctrl-C cancels it), or is still running after --wait.',
    )
    .argument('<path>', 'endpoint path, e.g. /generate (or a whole URL)')
    .option('--url <url>', 'base URL of the service (default: $SERVICE_INFER_BACKEND_URL, else http://localhost:8000)')
    .option('-d, --data <json|@file>', 'input as a JSON object; @file reads it from a file, @- from stdin')
    .addOption(
      new Option('--method <method>', 'GET sends the input as the query string, for endpoints declared methods=["GET"]')
        .argParser((value: string) => oneOf(ENDPOINT_METHODS, ENDPOINT_METHODS)(value.toUpperCase()))
        .default('POST'),
    )
    .option('--async', 'submit and print the job envelope (its result too, if it ended) without following the job')
    .option('--wait <seconds>', 'wait at most this long for the job to end; with --async, hold the submit this long', seconds)
    .action(async (path: string, _options: CallOptions, command: Command) => {
      const options = command.optsWithGlobals<CallOptions>();
      await runCommand(options, (output) => callEndpoint(path, options, output));
    });
}

async function callEndpoint(path: string, options: CallOptions, output: Output): Promise<void> {
  const input = await readInput(options.data);
  const client = new ServiceClient({ baseUrl: readBaseUrl(options.url) });
  const cancel = new AbortController();
  // Ctrl-C, or SIGTERM (a CI job cancelled, `timeout`), cancels the job on the server before
  // svc exits; a second signal exits at once.
  const onInterrupt = () => cancel.abort();
  process.once('SIGINT', onInterrupt);
  process.once('SIGTERM', onInterrupt);
  const progress = createCallProgress(output.mode);
  const started = performance.now();
  try {
    const outcome = options.async
      ? await submitOnly(client, path, input, options, cancel.signal)
      : await follow(client, path, input, options, cancel.signal, progress.update);
    progress.end();
    printOutcome(output, outcome, performance.now() - started, options.async === true);
  } catch (error) {
    progress.end();
    throw asSvcError(error);
  } finally {
    process.off('SIGINT', onInterrupt);
    process.off('SIGTERM', onInterrupt);
  }
}

async function follow(
  client: ServiceClient,
  path: string,
  input: Record<string, unknown>,
  { wait: waitSeconds, method }: Pick<CallOptions, 'wait' | 'method'>,
  signal: AbortSignal,
  onProgress: (update: ProgressUpdate) => void,
): Promise<CallOutcome> {
  let job: JobEnvelope | null = null;
  const result = await client.run(path, input, {
    signal,
    method,
    maxWaitMs: waitSeconds === undefined ? undefined : waitSeconds * 1000,
    onProgress: (update) => {
      job = update.envelope;
      onProgress(update);
    },
  });
  return { status: 'FINISHED', result, job };
}

async function submitOnly(
  client: ServiceClient,
  path: string,
  input: Record<string, unknown>,
  { wait: waitSeconds, method }: Pick<CallOptions, 'wait' | 'method'>,
  signal: AbortSignal,
): Promise<CallOutcome> {
  const submission = await client.submit(path, input, { respondAsync: true, waitSeconds: waitSeconds ?? 0, signal, method });
  // A server that does not do jobs answers with the result even when asked not to wait.
  if (submission.kind === 'result') return { status: 'FINISHED', result: submission.value, job: null };
  const { envelope } = submission;
  // An envelope that already shows the end is judged like a followed job: FAILED and co. exit 1.
  if (hasEnded(envelope.status) && envelope.status !== 'FINISHED') await client.follow(envelope);
  return { status: envelope.status, result: envelope.result, job: envelope };
}

/**
 * The result on stdout as JSON, so `svc call ... | jq` works; with --async, the job's
 * envelope, ended or not, so a script reads one shape. A line on stderr says how it ended.
 */
function printOutcome(output: Output, outcome: CallOutcome, elapsedMs: number, asynchronous: boolean): void {
  if (output.mode.json) {
    output.result({ headline: '', rows: [], warnings: [] }, outcome);
    return;
  }
  const { job } = outcome;
  const running = job !== null && !hasEnded(job.status);
  process.stdout.write(`${JSON.stringify(job !== null && asynchronous ? job : outcome.result, null, 2)}\n`);
  const paint = new Chalk({ level: output.mode.stderrColor ? 1 : 0 });
  const took = `in ${(elapsedMs / 1000).toFixed(2)} s`;
  if (running) {
    process.stderr.write(`job ${job.id} is ${job.status}; follow it at ${job.refresh_job_url}\n`);
  } else if (process.stderr.isTTY) {
    process.stderr.write(`${paint.green('✔')} ${paint.bold(outcome.status)} ${took}${job ? paint.dim(` (job ${job.id})`) : ''}\n`);
  } else {
    process.stderr.write(`${outcome.status} ${took}${job ? ` job ${job.id}` : ''}\n`);
  }
}

/** `--data`: a JSON object inline, `@file`, or `@-` for stdin; anything else is a usage error naming the problem. */
async function readInput(data: string | undefined): Promise<Record<string, unknown>> {
  if (data === undefined) return {};
  let text = data;
  let location = {};
  if (data.startsWith('@')) {
    const file = data.slice(1);
    if (file === '') throw new SvcError('usage', '--data @ needs a file name: @input.json, or @- for stdin');
    location = file === '-' ? {} : { file };
    try {
      text = file === '-' ? await readStream(process.stdin) : await readFile(file, 'utf8');
    } catch (error) {
      const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      throw new SvcError('usage', `--data @${file}: cannot read it (${reason})`);
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new SvcError('usage', `--data is not valid JSON: ${(error as Error).message}`, location);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    const kind = Array.isArray(value) ? 'an array' : value === null ? 'null' : `a ${typeof value}`;
    throw new SvcError('usage', `--data must be a JSON object of the endpoint's parameters, not ${kind}`, location);
  }
  return value as Record<string, unknown>;
}

function readBaseUrl(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
    throw new SvcError('usage', `--url must be an http:// or https:// URL, not "${url}"`);
  }
  return url;
}

async function readStream(stream: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += chunk.toString();
  return text;
}

/** The client's errors as svc errors, which the CLI prints as one line with exit code 1. */
function asSvcError(error: unknown): unknown {
  if (error instanceof JobEndedError) return new SvcError('job-failed', error.message, {}, { status: error.status, job: error.envelope });
  if (error instanceof WaitExpiredError) return new SvcError('wait-expired', error.message, {}, { status: error.envelope.status, job: error.envelope });
  if (error instanceof NoAnswerError) return new SvcError('wait-expired', error.message, {}, { url: error.url });
  if (error instanceof HttpStatusError) {
    return new SvcError('request-failed', error.message, {}, { status: error.status, url: error.url, type: error.type, body: error.body });
  }
  if (error instanceof ConnectionError) return new SvcError('request-failed', error.message, {}, { url: error.url });
  if (error instanceof ServiceError) return new SvcError('request-failed', error.message);
  return error;
}
