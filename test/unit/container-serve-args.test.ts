import { describe, expect, it } from 'vitest';
import { containerServeArgs, type ServeSettings } from '../../src/cli/container-serve-args.js';

const defaults: ServeSettings = {
  workers: 1, maxBodySize: 100, mediaUrlTimeout: 60, mediaUrls: true, queueSize: 100, sendTimeout: 60, gracePeriod: 30, cancelGrace: 5, jobTimeout: 3600, jobTtl: 1800, maxJobs: 10_000, maxJobMemory: 1024, maxWait: 60, corsOrigin: [],
};

describe('the options svc start hands to the container it runs', () => {
  it('forwards every serving option given on the command line, and none left at its default', () => {
    const given = new Set<keyof ServeSettings>(['workers', 'maxBodySize', 'jobTimeout', 'publicUrl']);
    const settings = { ...defaults, workers: 2, maxBodySize: 1, jobTimeout: 90, publicUrl: 'https://api.example.com', endpointTimeout: new Map([['/slow', 600]]), corsOrigin: ['https://app.example.com', 'http://localhost:3000'], debug: true };
    expect(containerServeArgs(settings, (option) => given.has(option))).toEqual([
      '--workers', '2', '--max-body-size', '1', '--job-timeout', '90', '--public-url', 'https://api.example.com',
      '--endpoint-timeout', '/slow=600', '--cors-origin', 'https://app.example.com', '--cors-origin', 'http://localhost:3000', '--debug',
    ]);
    expect(containerServeArgs(defaults, () => false)).toEqual([]);
  });

  it('forwards --no-media-urls and a media URL time-out, so the container fetches as the command says', () => {
    const settings = { ...defaults, mediaUrls: false, mediaUrlTimeout: 5 };
    expect(containerServeArgs(settings, (option) => option === 'mediaUrlTimeout')).toEqual(['--media-url-timeout', '5', '--no-media-urls']);
  });

  it('forwards the webhook flags, so the container delivers as the command says', () => {
    const settings = { ...defaults, webhookAllowPrivate: true, webhookRetryDelays: [0.5, 2], webhookTimeout: 3, webhookThrottle: 0.5 };
    const given = new Set<keyof ServeSettings>(['webhookRetryDelays', 'webhookTimeout']);
    expect(containerServeArgs(settings, (option) => given.has(option))).toEqual(['--webhook-timeout', '3', '--webhook-allow-private', '--webhook-retry-delays', '0.5,2']);
  });

  it('refuses --python, which an image cannot honour, instead of dropping it', () => {
    expect(() => containerServeArgs({ ...defaults, python: '/usr/bin/python3' }, () => true)).toThrow(/--python has no effect with --orchestrator docker/);
  });
});
