import { basename, join } from 'node:path';
import { locateProject } from '../project-location.js';
import { findPythonInterpreter } from '../worker/python-interpreter.js';
import { WorkerPool } from '../worker/worker-pool.js';
import { COMPUTE_VALUES, DEFAULT_TARGET, type Compute } from '../deployment-target.js';
import { ApiKeys } from './api-keys.js';
import { createGateway, type JobSettings } from './gateway.js';
import type { ServeLog } from './serve-log.js';
import { listenWhileStarting } from './startup-server.js';

export interface LocalServeOptions {
  target: string;
  entrypoint: string | undefined;
  host: string;
  port: number;
  workers: number;
  python: string | undefined;
  maxBodyBytes: number;
  queueSize: number;
  gracePeriodMs: number;
  cancelGraceMs: number;
  debug: boolean;
  version: string;
  /** From the command line; else APIPod(compute=...) in the service; else dedicated. */
  compute: Compute | undefined;
  apiKey: string | undefined;
  apiKeysFile: string | undefined;
  jobs: JobSettings;
  log: ServeLog;
}

const RETRY_AFTER_SECONDS = 5;

/**
 * `svc start` with the local orchestrator: Python workers on this machine behind the
 * gateway. Resolves once the server has stopped after SIGTERM or SIGINT, having let
 * in-flight calls finish within the grace period and run the lifespan shutdown.
 */
export async function serveLocally(options: LocalServeOptions): Promise<void> {
  const { root, entrypoint } = locateProject(options.target, options.entrypoint);
  const { log } = options;
  const keys = ApiKeys.from({ key: options.apiKey, keysFile: options.apiKeysFile });
  const python = await findPythonInterpreter({ explicit: options.python, projectDir: root, env: process.env });
  log.info(`starting ${options.workers} worker${options.workers === 1 ? '' : 's'} with ${python.path} (Python ${python.version}, from ${python.source})`);

  const pool = new WorkerPool({
    workers: options.workers,
    python: python.path,
    serviceFile: join(root, entrypoint),
    projectDir: root,
    maxQueue: options.queueSize,
    cancelGraceMs: options.cancelGraceMs,
    onLog: (line) => log.worker(line.worker, line.call, line.stream, line.line),
  });
  const stopSignal = waitForStopSignal();
  const starting = await listenWhileStarting(options.host, options.port);
  log.info(`listening on port ${starting.port}; /health says STARTING until every worker is ready`);
  log.event('starting', { url: `http://${urlHost(options.host)}:${starting.port}` });
  try {
    const first = await Promise.race([pool.start().then(() => null), stopSignal]);
    if (first !== null) {
      log.info(`${first} while starting: stopping the workers`);
      await pool.shutdown(options.gracePeriodMs);
      return;
    }
  } finally {
    await starting.close();
  }

  const title = pool.app.title ?? basename(root);
  const compute = options.compute ?? serviceCompute(pool.app.compute);
  const gateway = await createGateway({
    runner: pool,
    title,
    compute,
    keys,
    jobs: options.jobs,
    version: options.version,
    maxBodyBytes: options.maxBodyBytes,
    retryAfterSeconds: RETRY_AFTER_SECONDS,
    debug: options.debug,
    onRequestLog: (line) => log.request(line),
  });
  const address = await gateway.listen({ host: options.host, port: starting.port });
  const shown = address.replace('0.0.0.0', 'localhost');
  log.info(`${title} is ready on ${shown} (docs: ${shown}/docs; ${compute} compute${keys.enabled ? ', API key required' : ''})`);
  for (const endpoint of pool.endpoints) log.info(`  ${endpoint.methods.join(',')} ${endpoint.path}`);
  log.event('listening', { url: address, endpoints: pool.endpoints.map((endpoint) => endpoint.path) });

  const signal = await stopSignal;
  log.info(`${signal}: finishing in-flight calls (up to ${options.gracePeriodMs / 1000} s), then stopping`);
  const closing = gateway.close();
  await pool.shutdown(options.gracePeriodMs);
  // Every call has ended and its answer is written: keep-alive connections that clients
  // hold open would otherwise keep the server up.
  gateway.server.closeIdleConnections();
  await Promise.race([closing, new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
  gateway.server.closeAllConnections();
  await closing;
  log.info('stopped');
}

function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '::') return 'localhost';
  return host.includes(':') ? `[${host}]` : host;
}

function serviceCompute(declared: string): Compute {
  return (COMPUTE_VALUES as readonly string[]).includes(declared) ? (declared as Compute) : DEFAULT_TARGET.compute;
}

/** The first SIGTERM or SIGINT; a second one of either ends the process at once. */
function waitForStopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.removeListener('SIGTERM', stop);
      process.removeListener('SIGINT', stop);
      process.once('SIGTERM', () => process.exit(130));
      process.once('SIGINT', () => process.exit(130));
      resolve(signal);
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
}
