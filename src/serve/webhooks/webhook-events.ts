import { isTerminal } from '../jobs/job-status.js';
import type { Job } from '../jobs/job.js';

/**
 * What a webhook is told of, as Cog names its filter's events (`start`, `output`, `logs`,
 * `completed`) but in svc's words: a worker took the job, its progress or message changed, a
 * generator yielded, and it ended in any terminal status.
 */
export const WEBHOOK_EVENTS = ['started', 'progress', 'streaming', 'completed'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** What of a job a webhook has already been told about, to tell what changed. */
export interface SeenJob {
  started: boolean;
  progressKey: string;
  chunks: number;
}

export function firstSight(job: Job): SeenJob {
  return { started: job.startedAt !== null, progressKey: progressKey(job), chunks: job.chunks.length };
}

/** The events one change of a job makes, in the order they happened; `seen` is updated. */
export function eventsOf(job: Job, seen: SeenJob): WebhookEvent[] {
  const events: WebhookEvent[] = [];
  if (!seen.started && job.startedAt !== null) {
    seen.started = true;
    events.push('started');
  }
  const key = progressKey(job);
  if (key !== seen.progressKey) {
    seen.progressKey = key;
    if (!isTerminal(job.status)) events.push('progress');
  }
  if (job.chunks.length > seen.chunks) {
    seen.chunks = job.chunks.length;
    if (!isTerminal(job.status)) events.push('streaming');
  }
  if (isTerminal(job.status)) events.push('completed');
  return events;
}

function progressKey(job: Job): string {
  return JSON.stringify([job.progress, job.message]);
}
