import type { HttpApp } from './http/http-app.js';
import type { CallBackend } from './call-backend.js';
import { HttpError } from './http-error.js';
import type { JobBackend } from './jobs/job-backend.js';

interface HealthRouteOptions {
  runner: CallBackend;
  jobs: JobBackend;
}

/**
 * `GET /health`: always 200 while the process answers, with the pool's state in the body,
 * and the job store's: `jobs.full` when unread results fill it and new jobs get a 503.
 * `status` stays the workers' (READY, BUSY, ...), which health checks count as up: a
 * server marked down for holding unread results would be restarted and lose them.
 */
export function registerHealthRoute(app: HttpApp, { runner, jobs }: HealthRouteOptions): void {
  const mebibytes = (bytes: number) => Math.ceil(bytes / 2 ** 20);
  const answer = async () => {
    const health = runner.health();
    return {
      status: health.state,
      workers: health.workers,
      busy: health.busy,
      queued: health.queued,
      jobs: await jobs.usage().then(
        (usage) => ({
          unread: usage.unread,
          max_jobs: usage.maxRetained,
          unread_mib: mebibytes(usage.unreadBytes),
          max_job_memory_mib: mebibytes(usage.maxRetainedBytes),
          full: usage.full,
        }),
        // A shared store out of reach (Redis restarting) is not this server being down.
        (error: unknown) => {
          if (!(error instanceof HttpError)) throw error;
          return { unavailable: error.message };
        },
      ),
    };
  };
  app.get('/health', answer, { public: true });
}
