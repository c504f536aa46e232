import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { closedPort } from '../support/ports.js';
import { startSvc } from '../support/server.js';
import { COMPAT_DIR, FILES_DIR, type CompatRequest, type CompatService, type Compute, type FilePart } from './compat-requests.js';
import { ENDED_JOB_STATUSES, type Outcome } from './compare-answers.js';

/** A server of one service in one compute, apipod's or svc's, and how to ask it for an outcome. */
export interface CompatServer {
  url: string;
  outcome: (request: CompatRequest) => Promise<Outcome>;
  /** The first answer to the request, as sent: a job's submit envelope in serverless compute. */
  submit: (request: CompatRequest) => Promise<{ status: number; body: unknown }>;
  stop: () => Promise<void>;
}

const JOB_DEADLINE_MS = 60_000;

/** A free port: from SVC_COMPAT_PORT_BASE upwards when set (machines that share port ranges), else the system's. */
let nextPort = Number(process.env.SVC_COMPAT_PORT_BASE ?? 0);
async function freePort(): Promise<number> {
  return nextPort ? nextPort++ : closedPort();
}

/** Starts the service with the apipod package (test/compat/upstream_serve.py), as `python service.py` would. */
export async function startUpstream(service: CompatService, compute: Compute, python: string): Promise<CompatServer> {
  const port = await freePort();
  const child = execa(python, [join(COMPAT_DIR, 'upstream_serve.py'), join(service.dir, service.file), String(port)], {
    cwd: service.dir,
    env: { APIPOD_COMPUTE: compute, PYTHONUNBUFFERED: '1' },
    reject: false,
    all: true,
  });
  const url = `http://127.0.0.1:${port}`;
  await waitUntilServing(url, child, 'apipod');
  return {
    url,
    outcome: (request) => (compute === 'serverless' ? upstreamJobOutcome(url, request) : responseOutcome(url, request)),
    submit: (request) => send(url, request),
    stop: () => stopChild(child),
  };
}

/** Starts the service with `svc start`, with the same interpreter, so both see the same packages. */
export async function startSvcServer(service: CompatService, compute: Compute, python: string): Promise<CompatServer> {
  const port = await freePort();
  const server = await startSvc([join(service.dir, service.file), '--compute', compute, '--python', python, ...(port ? ['--port', String(port)] : [])]);
  const started = await waitForHealth(server.url, server.logs);
  if (!started.ready) {
    await server.stop();
    throw new Error(`svc did not start the service: ${started.reason}`);
  }
  return {
    url: server.url,
    outcome: (request) => (compute === 'serverless' ? svcJobOutcome(server.url, request) : responseOutcome(server.url, request)),
    submit: (request) => send(server.url, request),
    stop: async () => {
      await server.stop();
    },
  };
}

/** svc listens before its workers import the service; /health says when they did, or that they could not. */
async function waitForHealth(url: string, logs: () => string): Promise<{ ready: boolean; reason: string }> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const health = await fetch(`${url}/health`).then((response) => response.json() as Promise<{ status?: string }>, () => ({ status: 'DOWN' }));
    if (health.status === 'READY' || health.status === 'BUSY') return { ready: true, reason: '' };
    if (health.status === 'SETUP_FAILED' || health.status === 'DEFUNCT') return { ready: false, reason: lastErrorLine(logs()) };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { ready: false, reason: `not ready within 60 s: ${lastErrorLine(logs())}` };
}

function lastErrorLine(log: string): string {
  const lines = log.split('\n').filter((line) => line.trim() !== '');
  return lines.findLast((line) => line.startsWith('error')) ?? lines.at(-1) ?? '(no output)';
}

async function waitUntilServing(url: string, child: ResultPromise, who: string): Promise<void> {
  let exited = false;
  void child.then(() => {
    exited = true;
  });
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (exited) {
      const result = await child;
      throw new Error(`${who} exited before serving:\n${String(result.all ?? '').split('\n').slice(-8).join('\n')}`);
    }
    const answered = await fetch(`${url}/openapi.json`).then((response) => response.ok, () => false);
    if (answered) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await stopChild(child);
  throw new Error(`${who} did not serve within 60 s`);
}

async function stopChild(child: ResultPromise): Promise<void> {
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await child;
  clearTimeout(timer);
}

function filePart(part: FilePart): Blob {
  return new Blob([readFileSync(join(FILES_DIR, part.file))], part.type ? { type: part.type } : {});
}

/** The fetch arguments for a request, its body as the request's table says. */
export function requestInit(url: string, request: CompatRequest, headers: Record<string, string> = {}): [string, RequestInit] {
  const target = new URL(request.path, url);
  for (const [name, value] of Object.entries(request.query ?? {})) target.searchParams.append(name, value);
  const init: RequestInit = { method: request.method ?? 'POST', headers: { ...headers } };
  if (request.form) {
    const form = new URLSearchParams();
    for (const [name, value] of Object.entries(request.form)) {
      for (const item of [value].flat()) form.append(name, typeof item === 'string' ? item : readFileSync(join(FILES_DIR, item.base64Of)).toString('base64'));
    }
    init.body = form;
  } else if (request.multipart) {
    const form = new FormData();
    for (const [name, value] of Object.entries(request.multipart)) {
      for (const item of [value].flat()) {
        if (typeof item === 'string') form.append(name, item);
        else form.append(name, filePart(item), item.file);
      }
    }
    init.body = form;
  } else if (request.json !== undefined) {
    init.body = JSON.stringify(request.json);
    (init.headers as Record<string, string>)['content-type'] = 'application/json';
  }
  return [target.toString(), init];
}

async function send(url: string, request: CompatRequest, headers: Record<string, string> = {}): Promise<{ status: number; body: unknown }> {
  const response = await fetch(...requestInit(url, request, headers));
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) };
  } catch {
    return { status: response.status, body: text };
  }
}

async function responseOutcome(url: string, request: CompatRequest): Promise<Outcome> {
  return { kind: 'response', ...(await send(url, request)) };
}

type Envelope = { job_id?: string; id?: string; status?: string; result?: unknown; error?: unknown; links?: { status?: string }; refresh_job_url?: string };

function isEnvelope(body: unknown): body is Envelope {
  return typeof body === 'object' && body !== null && ('job_id' in body || 'refresh_job_url' in body) && 'status' in body;
}

function ended(envelope: Envelope): boolean {
  return ENDED_JOB_STATUSES.includes(String(envelope.status).toLowerCase());
}

function jobOutcome(envelope: Envelope): Outcome {
  return { kind: 'job', status: String(envelope.status).toLowerCase(), result: envelope.result ?? null, error: envelope.error ?? null };
}

/** The apipod package's way: the submit answers with its envelope; poll `GET /status/{job_id}` until it ends. */
async function upstreamJobOutcome(url: string, request: CompatRequest): Promise<Outcome> {
  const submitted = await send(url, request);
  if (!isEnvelope(submitted.body)) return { kind: 'response', ...submitted };
  let envelope = submitted.body;
  const deadline = Date.now() + JOB_DEADLINE_MS;
  while (!ended(envelope) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    envelope = (await (await fetch(new URL(envelope.links?.status ?? `/status/${envelope.job_id}`, url))).json()) as Envelope;
  }
  return jobOutcome(envelope);
}

/** svc's way: the submit with `Prefer: wait`, then the envelope's `refresh_job_url` with it until the job ends. */
async function svcJobOutcome(url: string, request: CompatRequest): Promise<Outcome> {
  const wait = { prefer: 'wait=30' };
  const submitted = await send(url, request, wait);
  if (!isEnvelope(submitted.body)) return { kind: 'response', ...submitted };
  let envelope = submitted.body;
  const deadline = Date.now() + JOB_DEADLINE_MS;
  while (!ended(envelope) && Date.now() < deadline) {
    envelope = (await (await fetch(envelope.refresh_job_url!, { headers: wait })).json()) as Envelope;
  }
  return jobOutcome(envelope);
}
