import type { Value } from '../../worker/protocol.js';
import type { JobStatus } from './job-status.js';
import type { Job, JobError } from './job.js';

export interface ServiceSpecification {
  service_id: string;
  version: string;
  hardware: string;
}

/** The job as the hosted inference API shows it; `job_id` repeats `id` for the existing toolkit's clients. */
export interface JobEnvelope {
  id: string;
  job_id: string;
  status: JobStatus;
  progress: number | null;
  message: string | null;
  result: Value | null;
  error: JobError | null;
  endpoint: string;
  refresh_job_url: string;
  cancel_job_url: string;
  stream_url: string;
  service_specification: ServiceSpecification;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

/** `baseUrl` is the public origin clients reach the server by, without a trailing slash. */
export function toEnvelope(job: Job, baseUrl: string, specification: ServiceSpecification): JobEnvelope {
  const jobUrl = `${baseUrl}/v1/jobs/${job.id}`;
  return {
    id: job.id,
    job_id: job.id,
    status: job.status,
    progress: job.progress,
    message: job.message,
    result: job.result,
    error: job.error,
    endpoint: job.endpoint,
    refresh_job_url: jobUrl,
    cancel_job_url: `${jobUrl}/cancel`,
    stream_url: `${jobUrl}/stream`,
    service_specification: specification,
    created_at: new Date(job.createdAt).toISOString(),
    started_at: job.startedAt === null ? null : new Date(job.startedAt).toISOString(),
    finished_at: job.finishedAt === null ? null : new Date(job.finishedAt).toISOString(),
  };
}
