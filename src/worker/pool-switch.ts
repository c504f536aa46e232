import type { CallOptions, CallOutcome } from './worker-process.js';
import type { AppReport, EndpointReport, Value } from './protocol.js';
import { PoolClosedError, type PoolHealth, type WorkerPool } from './worker-pool.js';

/** What the gateway asks of the pool (the shape of serve/call-backend.ts, which this module may not import). */
interface Backend {
  readonly app: AppReport;
  readonly endpoints: readonly EndpointReport[];
  submit(endpoint: string, args: { [parameter: string]: Value }, options: CallOptions): Promise<CallOutcome>;
  health(): PoolHealth;
}

const NO_POOL_HEALTH: PoolHealth = { state: 'STARTING', workers: 0, busy: 0, queued: 0 };

/**
 * The worker pool that serves now. `svc start --reload` switches it when the new code's
 * workers are ready; calls made from then on, from any gateway and from jobs, run on the
 * new pool while the old one retires with the calls it had already taken.
 */
export class PoolSwitch {
  private pool: WorkerPool | null = null;

  health(): PoolHealth {
    return this.pool?.health() ?? NO_POOL_HEALTH;
  }

  submit(endpoint: string, args: { [parameter: string]: Value }, options: CallOptions = {}): Promise<CallOutcome> {
    if (!this.pool) throw new PoolClosedError('the worker pool takes no calls: it is not started');
    // A request read by the gateway of the old code can arrive after the switch.
    if (!this.pool.endpoints.some((candidate) => candidate.path === endpoint)) {
      throw new PoolClosedError(`the service was reloaded and no longer has the endpoint ${endpoint}`);
    }
    return this.pool.submit(endpoint, args, options);
  }

  /** The endpoint at `path` of the pool that serves now. */
  endpointAt(path: string): EndpointReport | undefined {
    return this.pool?.endpoints.find((candidate) => candidate.path === path);
  }

  /** Serves `next` from now on; returns the pool it replaces. */
  switchTo(next: WorkerPool): WorkerPool | null {
    const previous = this.pool;
    this.pool = next;
    return previous;
  }

  /** `pool`'s service as a gateway describes it (routes, docs), with its calls made on whichever pool serves when they are made. */
  describing(pool: WorkerPool): Backend {
    return {
      app: pool.app,
      endpoints: pool.endpoints,
      submit: (endpoint, args, options) => this.submit(endpoint, args, options),
      health: () => this.health(),
    };
  }
}
