import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROTATION_OVERLAP_MS, WebhookSecrets } from '../../src/serve/webhooks/webhook-secrets.js';

function secretsAt(clock: { now: number }, fixed?: string) {
  return new WebhookSecrets(join(mkdtempSync(join(tmpdir(), 'svc-secrets-')), 'state', 'webhook-secrets.json'), () => clock.now, fixed);
}

describe('webhook secrets', () => {
  it('keeps each key its own whsec_ secret, in a file only its user can read', () => {
    const secrets = secretsAt({ now: 1_000 });
    const a = secrets.rotate('a:1234');
    const keyless = secrets.rotate(null);
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(secrets.signingSecrets('a:1234')).toEqual([a]);
    expect(secrets.signingSecrets(null)).toEqual([keyless]);
    expect(secrets.signingSecrets('b:5678')).toEqual([]);
    expect(statSync(secrets.file).mode & 0o777).toBe(0o600);
    expect(statSync(join(secrets.file, '..')).mode & 0o777).toBe(0o700);
  });

  it('signs with the old secret beside the new one for 24 hours after a rotation, then with the new one alone', () => {
    const clock = { now: 1_000 };
    const secrets = secretsAt(clock);
    const old = secrets.rotate(null);
    const rotated = secrets.rotate(null);
    expect(secrets.signingSecrets(null)).toEqual([rotated, old]);
    clock.now += ROTATION_OVERLAP_MS + 1;
    expect(secrets.signingSecrets(null)).toEqual([rotated]);
  });

  it('takes the secrets from $SVC_WEBHOOK_SECRETS in a container, which cannot be rotated there', () => {
    const secrets = secretsAt({ now: 1_000 }, JSON.stringify({ secrets: { server: { current: 'whsec_AAAA', previous: null, previous_until: null, created_at: 1 } } }));
    expect(secrets.signingSecrets(null)).toEqual(['whsec_AAAA']);
    expect(() => secrets.rotate(null)).toThrow(/\$SVC_WEBHOOK_SECRETS is set/);
    expect(() => secretsAt({ now: 1 }, '{').signingSecrets(null)).toThrow(/the webhook secrets are not JSON/);
  });
});
