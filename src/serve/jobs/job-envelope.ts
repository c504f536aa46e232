import type { JsonText } from '../../worker/json-text.js';
import type { Value } from '../../worker/protocol.js';
import type { JobStatus } from './job-status.js';
import type { Job, JobError } from './job.js';

export interface ServiceSpecification {
  service_id: string;
  version: string;
  hardware: string;
}

/** The apipod toolkit's hypermedia links (`JobLinks`), which its client `fastsdk` follows. */
export interface JobLinks {
  status: string;
  cancel: string;
  /** Only for a job that streams (a generator endpoint), as the toolkit gives it. */
  stream?: string;
}

/** The toolkit's `JobMetrics`. */
export interface JobMetrics {
  created_at: string;
  /** svc queues a job as it accepts it. */
  queued_at: string;
  started_at: string | null;
  finished_at: string | null;
  execution_time_s: number | null;
}

/**
 * One envelope that every client of either protocol reads: the hosted inference API's
 * fields (`id`, `refresh_job_url`, `cancel_job_url`, ...), the apipod toolkit's (`job_id`,
 * `links`, `metrics`), and svc's own (`endpoint`, `stream_url`, timestamps). `error` is a
 * string, as both protocols have it (fastsdk's model refuses anything else); svc's
 * structured error, with the exception's type, is `error_detail`.
 */
export interface JobEnvelope {
  id: string;
  job_id: string;
  status: JobStatus;
  progress: number | null;
  message: string | null;
  result: Value | JsonText | null;
  error: string | null;
  error_detail: JobError | null;
  endpoint: string;
  refresh_job_url: string;
  cancel_job_url: string;
  stream_url: string;
  links: JobLinks;
  metrics: JobMetrics;
  service_specification: ServiceSpecification;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  /** How the job's webhook deliveries go, when it was submitted with one (src/serve/webhooks/). */
  webhook?: WebhookStatus;
}

/** What a job's envelope says of its webhook: never its secret. */
export interface WebhookStatus {
  url: string;
  events: string[];
  /** pending, delivering, retrying, delivered, failed (an event given up on), gone (the receiver answered 410). */
  status: string;
  /** Attempts of the delivery under way, or of the last one. */
  attempts: number;
  last_event: string | null;
  last_error: string | null;
}

/** `baseUrl` is the public origin clients reach the server by, without a trailing slash. */
export function toEnvelope(job: Job, baseUrl: string, specification: ServiceSpecification): JobEnvelope {
  const jobUrl = `${baseUrl}/v1/jobs/${job.id}`;
  const createdAt = isoTime(job.createdAt);
  const startedAt = job.startedAt === null ? null : isoTime(job.startedAt);
  const finishedAt = job.finishedAt === null ? null : isoTime(job.finishedAt);
  return {
    id: job.id,
    job_id: job.id,
    status: job.status,
    progress: job.progress,
    message: job.message,
    result: job.result,
    error: job.error === null ? null : job.error.message,
    error_detail: job.error,
    endpoint: job.endpoint,
    refresh_job_url: jobUrl,
    cancel_job_url: `${jobUrl}/cancel`,
    stream_url: `${jobUrl}/stream`,
    links: {
      status: `${baseUrl}/status/${job.id}`,
      cancel: `${baseUrl}/cancel/${job.id}`,
      ...(job.streams ? { stream: `${baseUrl}/stream/${job.id}` } : {}),
    },
    metrics: {
      created_at: createdAt,
      queued_at: createdAt,
      started_at: startedAt,
      finished_at: finishedAt,
      execution_time_s: job.startedAt === null || job.finishedAt === null ? null : (job.finishedAt - job.startedAt) / 1000,
    },
    service_specification: specification,
    created_at: createdAt,
    started_at: startedAt,
    finished_at: finishedAt,
  };
}

function isoTime(milliseconds: number): string {
  return new Date(milliseconds).toISOString();
}
