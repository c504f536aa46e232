import { connect } from 'node:net';
import type { HttpApp } from '../serve/http/http-app.js';
import { pollUntil } from '../poll-until.js';
import { urlHost } from '../listen-url.js';
import type { ServeLog } from '../serve-log.js';
import { SvcError } from '../svc-error.js';
import { isJsonObject, type EndpointReport } from '../worker/protocol.js';
import { bridgeRoutes, startRunpodBridge, type BridgeExit, type BridgeMode, type RunpodBridge } from './runpod-bridge.js';
import type { RunpodMode } from './runpod-mode.js';

export interface RunpodWorkerOptions {
  /** The gateway, not yet listening: it listens on the loopback interface only. */
  gateway: HttpApp;
  /** The only key the gateway accepts; the bridge alone holds it. */
  gatewayKey: string;
  endpoints: readonly EndpointReport[];
  python: string;
  projectDir: string;
  mode: RunpodMode;
  /** Where the test server listens (the port svc held while the workers loaded). */
  host: string;
  port: number;
  /** One job at a time per worker process. */
  concurrency: number;
  gracePeriodMs: number;
  /** svc's --debug: the library logs at DEBUG too. */
  debug: boolean;
  stopSignal: Promise<NodeJS.Signals>;
  log: ServeLog;
}

const PORT_POLL_MS = 100;

/**
 * `svc start --provider runpod`, once the workers are ready: the provider's library takes
 * the jobs (python -m apipod._runtime.runpod_bridge) and hands each to the gateway. Resolves when
 * a stop signal has stopped it (running jobs finish first) or, with a test input, when the
 * job has ended; rejects when the job failed or the library stopped on its own.
 */
export async function runAsRunpodWorker(options: RunpodWorkerOptions): Promise<void> {
  const { log, mode } = options;
  warnOfPathParameters(options.endpoints, log);
  const gatewayUrl = await options.gateway.listen({ host: '127.0.0.1', port: 0 });
  const bridge = startRunpodBridge({
    python: options.python,
    projectDir: options.projectDir,
    gateway: { url: gatewayUrl, key: options.gatewayKey },
    concurrency: options.concurrency,
    routes: bridgeRoutes(options.endpoints),
    mode: bridgeMode(mode, options.host, options.port),
    logLevel: options.debug ? 'DEBUG' : 'INFO',
    onLog: (stream, line) => log.provider('runpod', stream, line),
  });
  try {
    // A stop signal counts while the test server is still coming up, too; the announcement
    // then fails as the bridge stops, which is no news.
    const announced = announce(options, bridge).then(async () => ({ exit: await bridge.exited }));
    announced.catch(() => undefined);
    const outcome = await Promise.race([options.stopSignal.then((signal) => ({ signal })), announced]);
    if ('signal' in outcome) {
      if (mode.kind === 'test-input') {
        // Stopping the bridge leaves the call's stream, which cancels it: there is no result to show.
        throw new SvcError('job-failed', `${outcome.signal}: stopped before the test job ended, so it has no result`);
      }
      log.info(`${outcome.signal}: the provider's library stops taking jobs; running ones finish (up to ${options.gracePeriodMs / 1000} s)`);
      return; // the bridge stops below
    }
    if (mode.kind === 'test-input') return await reportTestResult(bridge, outcome.exit, log);
    throw stoppedOnItsOwn(outcome.exit);
  } finally {
    await bridge.stop(options.gracePeriodMs);
    // Only the bridge called the gateway, and it has stopped: nothing is left to answer.
    options.gateway.server.closeAllConnections();
    await options.gateway.close();
  }
}

/** A job's "path" names its endpoint (python/apipod/_runtime/provider_routes.py), so a parameter of that name can never be given. */
function warnOfPathParameters(endpoints: readonly EndpointReport[], log: ServeLog): void {
  for (const endpoint of endpoints) {
    const parameters = endpoint.input_schema.properties;
    if (isJsonObject(parameters) && Object.hasOwn(parameters, 'path')) {
      log.warn(`${endpoint.path}: its parameter "path" cannot be given in a provider's job, whose "path" names the endpoint; rename the parameter`);
    }
  }
}

function bridgeMode(mode: RunpodMode, host: string, port: number): BridgeMode {
  switch (mode.kind) {
    case 'worker':
      return { kind: 'worker' };
    case 'test-server':
      return { kind: 'test-server', host, port };
    case 'test-input':
      return { kind: 'test-input', job: mode.job };
  }
}

async function announce(options: RunpodWorkerOptions, bridge: RunpodBridge): Promise<void> {
  const { log, mode } = options;
  const paths = options.endpoints.map((endpoint) => endpoint.path);
  switch (mode.kind) {
    case 'worker':
      log.info(`taking jobs from the provider, ${options.concurrency} at a time, for ${paths.join(', ')}`);
      log.event('taking-jobs', { provider: 'runpod', endpoints: paths });
      return;
    case 'test-input':
      log.info(`running the test job from ${mode.file}`);
      return;
    case 'test-server': {
      const reachable = await Promise.race([waitForPort(options.host, options.port, bridge.exited), bridge.exited]);
      if (reachable !== true) throw stoppedOnItsOwn(reachable);
      // On `::` the library's server takes IPv6 alone: `localhost` may well mean 127.0.0.1.
      const url = `http://${options.host === '::' ? '[::1]' : urlHost(options.host)}:${options.port}`;
      log.info(`the provider library's test API is on ${url} (${mode.reason}); docs: ${url}/docs`);
      log.info(`  POST ${url}/runsync {"input": {"path": "${paths[0] ?? '/'}", ...parameters}}; or /run, then /status/{id}`);
      log.event('listening', { url, provider: 'runpod', endpoints: paths });
      return;
    }
  }
}

async function reportTestResult(bridge: RunpodBridge, exit: BridgeExit, log: ServeLog): Promise<void> {
  const result = await bridge.testResult;
  if (result === null) throw stoppedOnItsOwn(exit);
  log.result(result);
  if (result.error !== undefined) {
    throw new SvcError('job-failed', `the test job failed: ${typeof result.error === 'string' ? result.error : JSON.stringify(result.error)}`);
  }
  log.info('the test job finished');
}

function stoppedOnItsOwn(exit: BridgeExit): SvcError {
  const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code ?? 'unknown'}`;
  return new SvcError('provider', `the provider's library ${how} (its output is above, tagged [runpod])`);
}

/** Resolves once something accepts connections on the port; never, if the bridge exits first. */
function waitForPort(host: string, port: number, exited: Promise<BridgeExit>): Promise<true> {
  // The library's server binds `::` for IPv6 alone (asyncio sets IPV6_V6ONLY), so ask it there.
  const target = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  const accepts = () =>
    new Promise<boolean>((resolve) => {
      const socket = connect({ host: target, port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
  return pollUntil(accepts, exited, PORT_POLL_MS);
}
