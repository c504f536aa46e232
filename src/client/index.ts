/**
 * The client for the hosted inference API (job envelopes), as the package exports it:
 *
 *   import { run } from 'svc-ml';
 *   const image = await run('/generate', { prompt: 'a cat' }, { onProgress: (u) => console.log(u.progress) });
 */
export { DEFAULT_BASE_URL, MediaResult, ServiceClient, run } from './service-client.js';
export type { ClientOptions, EndpointMethod, ProgressUpdate, RetryNotice, RunOptions, SubmitOptions, Submission, WebhookOptions } from './service-client.js';
export { JOB_STATUSES, hasEnded, readEnvelope } from './job-envelope.js';
export type { EndedStatus, JobEnvelope, JobErrorInfo, JobStatus } from './job-envelope.js';
export {
  AuthenticationError,
  ConnectionError,
  HttpStatusError,
  JobCancelledError,
  JobEndedError,
  JobFailedError,
  JobTimeoutError,
  NoAnswerError,
  NotFoundError,
  PermissionError,
  ServiceError,
  WaitExpiredError,
} from './client-errors.js';
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry-policy.js';
export { WEBHOOK_TOLERANCE_SECONDS, WebhookVerificationError, signWebhook, verifyWebhook, type VerifyOptions } from './webhook-signature.js';
