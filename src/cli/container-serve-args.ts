import { SvcError } from '../svc-error.js';

/** The serving options `svc start` takes, as parsed; the container's own `svc start` applies them. */
export interface ServeSettings {
  workers: number;
  maxBodySize: number;
  mediaUrlTimeout: number;
  /** false with --no-media-urls. */
  mediaUrls: boolean;
  queueSize: number;
  sendTimeout: number;
  gracePeriod: number;
  cancelGrace: number;
  jobTimeout: number;
  endpointTimeout?: Map<string, number>;
  jobTtl: number;
  maxJobs: number;
  maxJobMemory: number;
  maxWait: number;
  publicUrl?: string;
  corsOrigin: string[];
  testServer?: boolean;
  python?: string;
  debug?: boolean;
  webhookAllowPrivate?: boolean;
  webhookRetryDelays?: number[];
  webhookTimeout?: number;
  webhookThrottle?: number;
}

const FORWARDED_VALUES = {
  workers: '--workers',
  maxBodySize: '--max-body-size',
  mediaUrlTimeout: '--media-url-timeout',
  queueSize: '--queue-size',
  sendTimeout: '--send-timeout',
  gracePeriod: '--grace-period',
  cancelGrace: '--cancel-grace',
  jobTimeout: '--job-timeout',
  jobTtl: '--job-ttl',
  maxJobs: '--max-jobs',
  maxJobMemory: '--max-job-memory',
  maxWait: '--max-wait',
  publicUrl: '--public-url',
  webhookTimeout: '--webhook-timeout',
  webhookThrottle: '--webhook-throttle',
} as const;

/**
 * The arguments appended to the image's `svc start` so that `--orchestrator docker` serves
 * as the same command would locally: every serving option given on the command line (a
 * default is the image's default already). Options that cannot apply inside an image are
 * refused rather than dropped.
 */
export function containerServeArgs(settings: ServeSettings, given: (option: keyof ServeSettings) => boolean): string[] {
  if (settings.python !== undefined) {
    throw new SvcError('usage', "--python has no effect with --orchestrator docker: the image's own Python runs the workers");
  }
  const args: string[] = [];
  for (const [option, flag] of Object.entries(FORWARDED_VALUES) as Array<[keyof typeof FORWARDED_VALUES, string]>) {
    const value = settings[option];
    if (given(option) && value !== undefined) args.push(flag, String(value));
  }
  for (const [path, limit] of settings.endpointTimeout ?? []) args.push('--endpoint-timeout', `${path}=${limit}`);
  for (const origin of settings.corsOrigin) args.push('--cors-origin', origin);
  if (!settings.mediaUrls) args.push('--no-media-urls');
  if (settings.testServer) args.push('--test-server');
  if (settings.debug) args.push('--debug');
  if (settings.webhookAllowPrivate) args.push('--webhook-allow-private');
  if (given('webhookRetryDelays') && settings.webhookRetryDelays !== undefined) args.push('--webhook-retry-delays', settings.webhookRetryDelays.join(','));
  return args;
}
