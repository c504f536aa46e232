import type { FastifyInstance } from 'fastify';
import type { CallBackend } from './call-backend.js';
import type { JobStore } from './jobs/job-store.js';

interface HealthRouteOptions {
  runner: CallBackend;
  store: JobStore;
}

/**
 * `GET /health`: always 200 while the process answers, with the pool's state in the body,
 * and the job store's: `jobs.full` when unread results fill it and new jobs get a 503.
 * `status` stays the workers' (READY, BUSY, ...), which health checks count as up: a
 * server marked down for holding unread results would be restarted and lose them.
 */
export async function registerHealthRoute(app: FastifyInstance, { runner, store }: HealthRouteOptions): Promise<void> {
  const mebibytes = (bytes: number) => Math.ceil(bytes / 2 ** 20);
  app.get('/health', { config: { public: true } }, async () => {
    const health = runner.health();
    const usage = store.usage;
    const limits = store.limits;
    return {
      status: health.state,
      workers: health.workers,
      busy: health.busy,
      queued: health.queued,
      jobs: {
        unread: usage.unread,
        max_jobs: limits.maxRetained,
        unread_mib: mebibytes(usage.unreadBytes),
        max_job_memory_mib: mebibytes(limits.maxRetainedBytes),
        full: usage.full,
      },
    };
  });
}
