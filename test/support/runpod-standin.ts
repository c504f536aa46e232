import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for the serverless GPU provider's job endpoints, which cannot be reached
 * from here: it hands out the jobs a test queues to the provider's real library, as the
 * provider does (job-take, job-take-batch, the job-stop long poll), and records what the
 * library sends back (results, stream parts, progress, pings), as it sent them.
 */
export interface ProviderJob {
  id: string;
  input: unknown;
}

/** One POST to job-done or job-stream: the library's form-encoded JSON, decoded. */
export interface Posted {
  jobId: string;
  /** The query's isStream: "true" when the handler streamed the job. */
  isStream: string | null;
  body: Record<string, any>;
}

export interface RunpodStandin {
  /** The RUNPOD_* variables the provider sets on a worker it starts. */
  env: Record<string, string>;
  /** Queues a job for the next take. */
  queue(job: ProviderJob): void;
  /** Tells the worker, over its stop channel, to stop a job (cancelled or timed out). */
  stop(jobId: string): void;
  /** The final result of a job, once the library has posted it. */
  result(jobId: string, timeoutMs?: number): Promise<Posted>;
  /** The job's posts to job-done before its result: progress updates. */
  progress(jobId: string): Posted[];
  /** The stream parts the library posted for a job, in order. */
  streamed(jobId: string): Posted[];
  /** The largest number of jobs the worker held at once (taken, not yet finished). */
  readonly mostJobsAtOnce: number;
  readonly pings: number;
  close(): Promise<void>;
}

const POD_ID = 'standin-pod';
/** The provider holds a take request open while it has no job; a short hold keeps tests quick. */
const LONG_POLL_MS = 300;

export interface StandinAddress {
  /** Where the stand-in listens (default 127.0.0.1). */
  listen?: string;
  /** The host name the worker reaches it by, e.g. from inside a container (default: `listen`). */
  advertise?: string;
}

export async function startRunpodStandin(address: StandinAddress = {}): Promise<RunpodStandin> {
  const listen = address.listen ?? '127.0.0.1';
  const waiting: ProviderJob[] = [];
  const toStop: string[] = [];
  const done: Posted[] = [];
  const streams: Posted[] = [];
  const running = new Set<string>();
  const resultWaiters = new Map<string, (posted: Posted) => void>();
  let mostJobsAtOnce = 0;
  let pings = 0;

  const take = (count: number): ProviderJob[] => {
    const jobs = waiting.splice(0, count);
    for (const job of jobs) running.add(job.id);
    mostJobsAtOnce = Math.max(mostJobsAtOnce, running.size);
    return jobs;
  };

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const url = new URL(request.url ?? '/', 'http://standin');
    const [, kind = '', , jobId = ''] = url.pathname.split('/');
    if (request.method === 'GET' && (kind === 'job-take' || kind === 'job-take-batch')) {
      const count = kind === 'job-take' ? 1 : Number(url.searchParams.get('batch_size') ?? '1');
      const jobs = await after(LONG_POLL_MS, () => waiting.length > 0, () => take(count));
      if (jobs.length === 0) return void response.writeHead(204).end();
      return json(response, kind === 'job-take' ? jobs[0] : jobs);
    }
    if (request.method === 'GET' && kind === 'job-stop') {
      const ids = await after(LONG_POLL_MS, () => toStop.length > 0, () => toStop.splice(0));
      if (ids.length === 0) return void response.writeHead(204).end();
      return json(response, { jobsToStop: ids });
    }
    if (request.method === 'GET' && kind === 'ping') {
      pings += 1;
      return void response.writeHead(200).end();
    }
    if (request.method === 'POST' && (kind === 'job-done' || kind === 'job-stream')) {
      const posted: Posted = { jobId, isStream: url.searchParams.get('isStream'), body: JSON.parse(await bodyOf(request)) };
      if (kind === 'job-stream') streams.push(posted);
      else {
        done.push(posted);
        if (posted.body.status !== 'IN_PROGRESS') {
          running.delete(jobId);
          resultWaiters.get(jobId)?.(posted);
        }
      }
      return void response.writeHead(200).end();
    }
    response.writeHead(404).end();
  };

  const server: Server = createServer((request, response) => {
    handle(request, response).catch((error: Error) => response.writeHead(500).end(error.message));
  });
  await new Promise<void>((resolve) => server.listen(0, listen, resolve));
  const base = `http://${address.advertise ?? listen}:${(server.address() as AddressInfo).port}`;
  const finalOf = (jobId: string) => done.find((posted) => posted.jobId === jobId && posted.body.status !== 'IN_PROGRESS');

  return {
    env: {
      RUNPOD_POD_ID: POD_ID,
      RUNPOD_AI_API_KEY: 'standin-key',
      RUNPOD_WEBHOOK_GET_JOB: `${base}/job-take/$ID?gpu=standin`,
      RUNPOD_WEBHOOK_POST_OUTPUT: `${base}/job-done/$RUNPOD_POD_ID/$ID?gpu=standin`,
      RUNPOD_WEBHOOK_POST_STREAM: `${base}/job-stream/$RUNPOD_POD_ID/$ID?gpu=standin`,
      RUNPOD_WEBHOOK_PING: `${base}/ping/$RUNPOD_POD_ID?gpu=standin`,
      RUNPOD_PING_INTERVAL: '1000',
    },
    queue: (job) => void waiting.push(job),
    stop: (jobId) => void toStop.push(jobId),
    result: (jobId, timeoutMs = 30_000) =>
      new Promise((resolve, reject) => {
        const posted = finalOf(jobId);
        if (posted) return resolve(posted);
        const timer = setTimeout(() => reject(new Error(`no result for job ${jobId} within ${timeoutMs} ms`)), timeoutMs);
        resultWaiters.set(jobId, (value) => {
          clearTimeout(timer);
          resolve(value);
        });
      }),
    progress: (jobId) => done.filter((posted) => posted.jobId === jobId && posted.body.status === 'IN_PROGRESS'),
    streamed: (jobId) => streams.filter((posted) => posted.jobId === jobId),
    get mostJobsAtOnce() {
      return mostJobsAtOnce;
    },
    get pings() {
      return pings;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Waits up to `ms` for `ready`, checking every 20 ms, then returns `take()` (or an empty list). */
async function after<T>(ms: number, ready: () => boolean, take: () => T[]): Promise<T[]> {
  const deadline = Date.now() + ms;
  while (!ready() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  return ready() ? take() : [];
}

function json(response: ServerResponse, value: unknown): void {
  response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value));
}

async function bodyOf(request: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of request) text += String(chunk);
  return text;
}
