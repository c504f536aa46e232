import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
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
  type WebhookOptions,
} from '../client/index.js';
import { SvcError } from '../svc-error.js';
import { readInputSpec, typeInputs, type InputSpec } from './call-inputs.js';
import { saveMediaResults, type WrittenFile } from './call-output.js';
import { createCallProgress, describeRetry } from './call-progress.js';
import { findEndpointParameters } from './endpoint-parameters.js';
import { integerBetween, oneOf, seconds } from './option-parsers.js';
import { listenForWebhooks, WEBHOOK_SECRET_ENV, type WebhookListener } from './webhook-listener.js';
import type { Output } from './output.js';
import { runCommand, type CommonOptions } from './run-command.js';

const ENDPOINT_METHODS: readonly EndpointMethod[] = ['GET', 'POST'];

/**
 * What `-o` asks for: a media result's bytes (any type but JSON), else JSON. A bare `*\/*`
 * would not do: svc answers it with JSON, as a client that names no type wants.
 */
const MEDIA_ACCEPT = 'image/*, audio/*, video/*, application/*;q=0.9, text/*;q=0.9, application/json;q=0.5';

interface CallOptions extends CommonOptions {
  url?: string;
  data?: string;
  input: InputSpec[];
  output?: string;
  async?: boolean;
  wait?: number;
  method: EndpointMethod;
  webhookListen?: number;
  webhookUrl?: string;
  webhookEvents?: string;
}

/** How long `--webhook-listen` waits, after the job ended, for its completed delivery. */
const COMPLETED_DELIVERY_WAIT_MS = 15_000;

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
        'the service answers at once (dedicated) or with a job to follow (serverless). -i name=value inputs are ' +
        'typed by the endpoint\'s schema (name=@path uploads a file); -o PATH writes the media result to disk. Progress goes to ' +
        'stderr. The key comes from $SERVICE_API_KEY. Exits 1 when the job ends FAILED, TIMEOUT or ' +
        'CANCELLED (Ctrl-C cancels it), or is still running after --wait.',
    )
    .argument('<path>', 'endpoint path, e.g. /generate (or a whole URL)')
    .option('--url <url>', 'base URL of the service (default: $SERVICE_INFER_BACKEND_URL, else http://localhost:8000)')
    .option('-d, --data <json|@file>', 'input as a JSON object; @file reads it from a file, @- from stdin')
    .addOption(
      new Option('-i, --input <name=value>', 'one input, typed by the endpoint\'s schema; name=@path uploads a file (repeatable)')
        .argParser(readInputSpec)
        .default([], 'none'),
    )
    .option('-o, --output <path>', 'write the media file(s) of the result to disk: one file to path, several into path as a directory')
    .addOption(
      new Option('--method <method>', 'GET sends the input as the query string, for endpoints declared methods=["GET"]')
        .argParser((value: string) => oneOf(ENDPOINT_METHODS, ENDPOINT_METHODS)(value.toUpperCase()))
        .default('POST'),
    )
    .option('--async', 'submit and print the job envelope (its result too, if it ended) without following the job')
    .option('--webhook-listen <port>', 'receive the job\'s webhooks on this port of 127.0.0.1 and print them, checking signatures with $SVC_WEBHOOK_SECRET', integerBetween(0, 65535))
    .option('--webhook-url <url>', 'with --webhook-listen: the URL the server posts to (default: http://127.0.0.1:PORT/), e.g. a tunnel\'s')
    .option('--webhook-events <list>', 'with --webhook-listen: the events to receive, of started,progress,streaming,completed (default: all)')
    .option('--wait <seconds>', 'wait at most this long for the job to end; with --async, hold the submit this long', seconds)
    .action(async (path: string, _options: CallOptions, command: Command) => {
      const options = command.optsWithGlobals<CallOptions>();
      await runCommand(options, (output) => callEndpoint(path, options, output));
    });
}

async function callEndpoint(path: string, options: CallOptions, output: Output): Promise<void> {
  if (options.output !== undefined && options.async) throw new SvcError('usage', '-o writes the result, which --async does not wait for; leave one out');
  const data = await readInput(options.data);
  const progress = createCallProgress(output.mode);
  const client = new ServiceClient({ baseUrl: readBaseUrl(options.url), onRetry: (notice) => progress.notice(describeRetry(notice)) });
  const input = options.input.length === 0 ? data : await withInputs(client, path, options, data);
  const cancel = new AbortController();
  // Ctrl-C, or SIGTERM (a CI job cancelled, `timeout`), cancels the job on the server before
  // svc exits; a second signal exits at once.
  const onInterrupt = () => cancel.abort();
  process.once('SIGINT', onInterrupt);
  process.once('SIGTERM', onInterrupt);
  const listener = await startWebhookListener(options);
  const webhook = listener === null ? undefined : { url: options.webhookUrl ?? `http://127.0.0.1:${listener.port}/`, ...(options.webhookEvents ? { events: options.webhookEvents.split(',') } : {}) };
  const started = performance.now();
  /** Whether a job ran to its end, whose completed delivery is worth waiting for. */
  let jobEnded = false;
  try {
    const outcome = options.async
      ? await submitOnly(client, path, input, options, cancel.signal)
      : await follow(client, path, input, { ...options, webhook }, cancel.signal, progress.update);
    progress.end();
    jobEnded = true;
    const elapsedMs = performance.now() - started;
    if (options.output === undefined) {
      printOutcome(output, outcome, elapsedMs, options.async === true);
    } else {
      const saved = await saveMediaResults(outcome.result, options.output);
      printOutcome(output, { ...outcome, result: saved.printed }, elapsedMs, false, saved.written);
    }
  } catch (error) {
    progress.end();
    jobEnded = error instanceof JobEndedError && !cancel.signal.aborted;
    throw asSvcError(error);
  } finally {
    process.off('SIGINT', onInterrupt);
    process.off('SIGTERM', onInterrupt);
    if (listener !== null) await awaitCompletedDelivery(listener, jobEnded);
  }
}

async function startWebhookListener(options: CallOptions): Promise<WebhookListener | null> {
  if (options.webhookListen === undefined) {
    if (options.webhookUrl !== undefined || options.webhookEvents !== undefined) throw new SvcError('usage', '--webhook-url and --webhook-events go with --webhook-listen PORT');
    return null;
  }
  if (options.async) throw new SvcError('usage', '--webhook-listen prints the job\'s webhooks until it ends, which --async does not wait for; leave one out');
  if (options.webhookUrl !== undefined && !/^https?:\/\//.test(options.webhookUrl)) throw new SvcError('usage', `--webhook-url must be an http:// or https:// URL, not "${options.webhookUrl}"`);
  return listenForWebhooks('127.0.0.1', options.webhookListen, process.env[WEBHOOK_SECRET_ENV] || undefined, (line) => process.stderr.write(`${line}\n`));
}

/** The job has ended; its `completed` delivery may still be on its way (or retried). */
async function awaitCompletedDelivery(listener: WebhookListener, jobEnded: boolean): Promise<void> {
  if (jobEnded && !(await listener.completed(COMPLETED_DELIVERY_WAIT_MS))) {
    process.stderr.write(`no completed webhook came within ${COMPLETED_DELIVERY_WAIT_MS / 1000} s of the job's end (its status and last_error are on the job's envelope)\n`);
  }
  await listener.close();
}

async function follow(
  client: ServiceClient,
  path: string,
  input: Record<string, unknown> | FormData,
  { wait: waitSeconds, method, output, webhook }: Pick<CallOptions, 'wait' | 'method' | 'output'> & { webhook: WebhookOptions | undefined },
  signal: AbortSignal,
  onProgress: (update: ProgressUpdate) => void,
): Promise<CallOutcome> {
  let job: JobEnvelope | null = null;
  const result = await client.run(path, input, {
    signal,
    method,
    ...(webhook === undefined ? {} : { webhook }),
    // With -o, a server that can sends a media result as its bytes, not as base64 in JSON.
    ...(output === undefined ? {} : { accept: MEDIA_ACCEPT }),
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
  input: Record<string, unknown> | FormData,
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
function printOutcome(output: Output, outcome: CallOutcome, elapsedMs: number, asynchronous: boolean, written: WrittenFile[] = []): void {
  if (output.mode.json) {
    output.result({ headline: '', rows: [], warnings: [] }, written.length > 0 ? { ...outcome, files: written } : outcome);
    return;
  }
  for (const file of written) process.stderr.write(`wrote ${file.path} (${file.bytes} bytes${file.contentType ? `, ${file.contentType}` : ''})\n`);
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

/**
 * The `-i` inputs typed by the endpoint's schema in the service's /openapi.json, beside
 * `--data`'s: a JSON object, or a multipart form when a file is uploaded and the endpoint
 * takes one (else its files go as base64 in the JSON).
 */
async function withInputs(client: ServiceClient, path: string, options: CallOptions, data: Record<string, unknown>): Promise<Record<string, unknown> | FormData> {
  let document: unknown;
  try {
    document = await client.openApi(path);
  } catch (error) {
    if (!(error instanceof HttpStatusError)) throw error;
    throw new SvcError('request-failed', `-i types each input by the service's /openapi.json, which it does not give (${error.message}); send the input with -d JSON`);
  }
  const endpoint = findEndpointParameters(document, path, options.method);
  const typed = typeInputs(options.input, endpoint);
  const twice = Object.keys(data).find((name) => name in typed.values || typed.files.has(name));
  if (twice !== undefined) throw new SvcError('usage', `${twice} is given both by --data and by -i; give it once`);
  const values = { ...data, ...typed.values };
  if (typed.files.size === 0) return values;
  const files = new Map<string, Array<{ name: string; bytes: Buffer }>>();
  for (const [name, paths] of typed.files) {
    const read: Array<{ name: string; bytes: Buffer }> = [];
    for (const file of paths) {
      const bytes = await readFile(file).catch((error: NodeJS.ErrnoException) => {
        throw new SvcError('usage', `-i ${name}=@${file}: cannot read it (${error.code ?? error.message})`);
      });
      read.push({ name: basename(file), bytes });
    }
    files.set(name, read);
  }
  const repeated = (name: string) => endpoint.parameters.get(name)?.repeatedFile === true;
  if (endpoint.encoding === 'json') {
    for (const [name, read] of files) {
      const encoded = read.map((file) => file.bytes.toString('base64'));
      values[name] = repeated(name) ? encoded : encoded[0];
    }
    return values;
  }
  const form = new FormData();
  // Form fields are text; the server reads JSON in them for parameters that take no string.
  for (const [name, value] of Object.entries(values)) form.append(name, typeof value === 'string' ? value : JSON.stringify(value));
  for (const [name, read] of files) for (const file of read) form.append(name, new Blob([file.bytes]), file.name);
  return form;
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
