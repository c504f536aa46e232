import type { HttpApp } from '../serve/http/http-app.js';
import { formatLocated, SvcError } from '../svc-error.js';
import { GatewayFront } from '../serve/gateway-front.js';
import type { JobBackend } from '../serve/jobs/job-backend.js';
import { startingGateway } from '../serve/startup-server.js';
import type { ServeLog } from '../serve-log.js';
import type { PoolSwitch } from '../worker/pool-switch.js';
import type { WorkerPool } from '../worker/worker-pool.js';
import { watchProject } from './project-watch.js';
import { closeWhenJobsRead } from './server-stop.js';

export interface ReloadingServeOptions {
  root: string;
  host: string;
  port: number;
  gracePeriodMs: number;
  log: ServeLog;
  stopSignal: Promise<NodeJS.Signals>;
  /** Where every gateway and the jobs make their calls; switched to each new pool. */
  calls: PoolSwitch;
  jobStore: JobBackend;
  /** A pool of the project's code as it is now, not started. */
  newPool: () => WorkerPool;
  /** The gateway for a started pool, ready; throws an SvcError for a service it cannot serve. */
  newGateway: (pool: WorkerPool) => Promise<{ gateway: HttpApp; ready: (url: string) => void }>;
}

interface Generation {
  pool: WorkerPool;
  gateway: HttpApp;
}

/**
 * `svc start --reload`: serves as `svc start` does, and when the project's Python files or
 * requirements change, starts workers of the new code beside the serving ones. Once they
 * are ready, a gateway with the new routes takes the next requests on the same port and
 * the old workers retire with the calls they had taken (running and queued). A change that
 * does not start (a syntax or import error, an endpoint svc cannot serve) is logged and the
 * last good workers keep serving; with none, requests get a 503 naming the error.
 */
export async function serveReloading(options: ReloadingServeOptions): Promise<void> {
  const { log } = options;
  const front = new GatewayFront(startingGateway());
  const url = await front.listen(options.host, options.port);
  log.info(`listening on ${url.replace('0.0.0.0', 'localhost')}; /health says STARTING until every worker is ready; reloads when Python files or requirements change`);
  log.event('starting', { url });

  const pools = new Set<WorkerPool>();
  const retiring = new Set<Promise<void>>();
  let current: Generation | null = null;
  let isStopping = false;

  const load = async (): Promise<void> => {
    const pool = options.newPool();
    pools.add(pool);
    let served: Awaited<ReturnType<ReloadingServeOptions['newGateway']>>;
    try {
      // A stop while the workers load does not wait for them (the stop shuts every pool down).
      if ((await Promise.race([pool.start().then(() => null), options.stopSignal])) !== null) return;
      served = await options.newGateway(pool);
    } catch (error) {
      pools.delete(pool);
      await pool.shutdown(options.gracePeriodMs);
      if (isStopping) return;
      const message = error instanceof SvcError ? formatLocated(error.location, error.message) : `internal error: ${(error as Error).message}`;
      log.warn(`${message}; ${current ? 'the last good workers keep serving' : 'no workers serve'} until a change fixes it`);
      log.event('reload-failed', { message });
      if (!current) void front.refuse(`no workers serve: ${message}; svc start --reload starts them when the project changes`)?.close();
      return;
    }
    if (isStopping) {
      await served.gateway.close();
      return;
    }
    const replaced = front.serve(served.gateway);
    options.calls.switchTo(pool);
    const previous = current;
    current = { pool, gateway: served.gateway };
    served.ready(url);
    if (previous) {
      const retired = previous.pool.retire(options.gracePeriodMs).then(async () => {
        await previous.gateway.close();
        pools.delete(previous.pool);
        retiring.delete(retired);
      });
      retiring.add(retired);
    } else {
      await replaced?.close();
    }
  };

  let loading = load();
  let changed: string[] | null = null;
  const watch = watchProject(options.root, (paths) => {
    if (changed) {
      changed.push(...paths);
      return;
    }
    changed = paths;
    loading = loading.then(() => {
      const shown = [...new Set(changed)].join(', ');
      changed = null;
      if (isStopping) return;
      log.info(`${shown} changed: starting workers of the new code`);
      return load();
    });
  });

  const signal = await options.stopSignal;
  isStopping = true;
  watch.close();
  log.info(`${signal}: finishing in-flight calls (up to ${options.gracePeriodMs / 1000} s), then stopping`);
  const deadline = Date.now() + options.gracePeriodMs;
  await Promise.all([...pools].map((pool) => pool.shutdown(options.gracePeriodMs)));
  await Promise.all([loading, ...retiring]);
  await closeWhenJobsRead({
    jobStore: options.jobStore,
    deadline,
    log,
    server: front.server,
    close: async () => {
      const closing = new Promise<void>((resolve) => front.server.close(() => resolve()));
      await (current as Generation | null)?.gateway.close();
      await closing;
    },
  });
}
