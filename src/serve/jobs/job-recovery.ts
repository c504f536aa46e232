import type { JobArguments, JournaledJob } from './job-journal.js';
import { isTerminal } from './job-status.js';
import type { Job } from './job.js';

/** How often a job that was running when its server stopped is started in all. */
export const MOST_RUNS = 2;

/** What a restarted server does with the jobs its journal kept. */
export interface RecoveryPlan {
  /** Ended jobs still within their retention, readable as before. */
  kept: Array<{ job: Job; read: boolean }>;
  /** Jobs to queue again: never started, or started once when the server stopped. */
  toRun: Array<{ job: Job; args: JobArguments }>;
  /** Jobs that were running when the server stopped for the second time: they end FAILED now. */
  failed: Job[];
  /** Ended jobs whose retention ran out while no server ran. */
  expired: string[];
}

/**
 * At-least-once: a job the server accepted runs, even across a crash. One that was running
 * when the server died is run again, once; a second death while it runs fails it with an
 * error naming the crash, as a job that kills its server each time must not do so forever.
 */
export function planRecovery(journaled: readonly JournaledJob[], now: number, ttlMs: number): RecoveryPlan {
  const plan: RecoveryPlan = { kept: [], toRun: [], failed: [], expired: [] };
  for (const { job, args, runs, read } of journaled) {
    if (isTerminal(job.status)) {
      if ((job.finishedAt ?? 0) + ttlMs <= now) plan.expired.push(job.id);
      else plan.kept.push({ job, read });
    } else if (runs < MOST_RUNS && args !== null) {
      const again = runs > 0;
      plan.toRun.push({
        job: {
          ...job,
          status: 'QUEUED',
          progress: 0,
          message: again ? 'queued again: the server stopped while this job ran' : null,
          chunks: [],
          startedAt: null,
        },
        args,
      });
    } else {
      plan.failed.push({
        ...job,
        status: 'FAILED',
        finishedAt: now,
        error: {
          type: 'ServerCrashed',
          message: `the server stopped (a crash, kill -9 or the machine going down) while this job ran, ${MOST_RUNS} times: it is not run again; submit it again`,
        },
      });
    }
  }
  return plan;
}
