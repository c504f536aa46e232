/** A job envelope as svc writes it on the wire (docs/jobs.md), the fields the tests read. */
export interface Envelope {
  id: string;
  job_id: string;
  status: string;
  progress: number | null;
  message: string | null;
  result: unknown;
  error: string | null;
  error_detail: { type: string; message: string } | null;
  refresh_job_url: string;
  cancel_job_url: string;
  stream_url: string;
  links: { status: string; cancel: string; stream?: string };
  created_at: string;
}
