import { describe, expect, it } from 'vitest';
import { signWebhook, verifyWebhook } from '../../src/client/index.js';

describe('the client webhook helper', () => {
  // The example of the Standard Webhooks specification.
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const headers = { 'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek', 'webhook-timestamp': '1614265330', 'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=' };
  const body = '{"test": 2432232314}';
  const at = (seconds: number) => ({ now: new Date(seconds * 1000) });

  it('accepts the specification example, and signs it as the specification does', () => {
    expect(verifyWebhook(secret, new Headers(headers), body, at(1614265330))).toEqual({ test: 2432232314 });
    const titleCase = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.replace(/(^|-)\w/g, (start) => start.toUpperCase()), value]));
    expect(verifyWebhook(secret, titleCase, new TextEncoder().encode(body), at(1614265330))).toEqual({ test: 2432232314 });
    expect(signWebhook([secret], headers['webhook-id'], 1614265330, body)).toBe(headers['webhook-signature']);
  });

  it('refuses a timestamp more than five minutes off, a changed body and a missing header', () => {
    expect(verifyWebhook(secret, headers, body, at(1614265330 + 300))).toBeTruthy();
    expect(() => verifyWebhook(secret, headers, body, at(1614265330 + 301))).toThrow(/beyond the 300 s tolerance/);
    expect(() => verifyWebhook(secret, headers, '{"test": 1}', at(1614265330))).toThrow(/no webhook-signature matches/);
    expect(() => verifyWebhook(secret, { ...headers, 'webhook-id': undefined }, body, at(1614265330))).toThrow(/no webhook-id header/);
  });
});
