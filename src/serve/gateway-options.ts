import type { Compute } from '../deployment-target.js';
import type { ApiKeys } from './api-keys.js';
import type { CallBackend } from './call-backend.js';
import type { JobBackend } from './jobs/job-backend.js';
import type { MediaUrlSettings } from './media-urls.js';
import type { ServeLog } from '../serve-log.js';
import type { WebhookDispatcher } from './webhooks/webhook-dispatcher.js';
import type { WebhookSecrets } from './webhooks/webhook-secrets.js';

/**
 * What the gateway is made with. Its own module, below every plugin: each plugin takes the
 * part it needs without importing the gateway that registers it.
 */
export interface GatewayOptions {
  runner: CallBackend;
  /** The service's title: APIPod(title=...), else the project directory's name. */
  title: string;
  /** svc's version, shown in the OpenAPI document. */
  version: string;
  /** Largest accepted request body, bytes. */
  maxBodyBytes: number;
  /** Seconds a client is told to wait (Retry-After) when a queue is full. */
  retryAfterSeconds: number;
  /** How long a client may take none of a large answer before it is disconnected (--send-timeout). */
  sendTimeoutMs: number;
  /** Include Python tracebacks in 500 bodies and job errors. */
  debug: boolean;
  /** The server's own directory for files in transit (the workers' APIPOD_FILE_DIR), where uploads are staged. */
  fileDir: string;
  /** How the URLs clients give for media parameters are fetched; null: they are refused (--no-media-urls). */
  mediaUrls: MediaUrlSettings | null;
  /** dedicated: the result in the response; serverless: a job envelope to poll. */
  compute: Compute;
  keys: ApiKeys;
  jobs: JobSettings;
  /**
   * Where jobs live and run: made once per server, so that a job outlives the gateway that took
   * it (svc start --reload); the server that owns the gateway reads it when stopping.
   */
  jobBackend: JobBackend;
  /** Job notifications (src/serve/webhooks/); null where jobs get none (a provider's worker, jobs in Redis). */
  webhooks?: Webhooks | null;
  onRequestLog?: (line: string) => void;
  /** Where the gateway tells what it notices as it starts (an endpoint's alias, one left out). */
  log?: Pick<ServeLog, 'info' | 'warn'>;
  /** Web origins whose pages may call the service (CORS), `*` for any; none when empty. */
  corsOrigins?: readonly string[];
}

export interface JobSettings {
  /** How long an ended job stays readable (the job store's retention). */
  ttlMs: number;
  maxRetained: number;
  maxRetainedBytes: number;
  defaultTimeoutMs: number;
  /** Per endpoint path, overriding the default. */
  timeoutsMs: ReadonlyMap<string, number>;
  /** The longest `Prefer: wait=N` honoured. */
  maxWaitSeconds: number;
  /** The origin in job URLs; the request's Host when null. */
  publicUrl: string | null;
}

/** What the gateway needs of webhooks: the dispatcher jobs subscribe to, and what a submit is checked against. */
export interface Webhooks {
  dispatcher: WebhookDispatcher;
  secrets: WebhookSecrets;
  allowPrivate: boolean;
}
