import { describe, expect, it } from 'vitest';
import { privateAddressReason } from '../../src/serve/webhooks/webhook-target.js';
import { signWebhook, verifyWebhook } from '../../src/client/index.js';

describe('webhook targets', () => {
  it('refuses loopback, private, link-local (cloud metadata) and IPv4-mapped ones, and lets public addresses through', () => {
    for (const address of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1']) {
      expect(privateAddressReason(address), address).toBe('a private, loopback or link-local address');
    }
    for (const address of ['93.184.215.14', '8.8.8.8', '2606:4700:4700::1111', '172.32.0.1']) expect(privateAddressReason(address), address).toBeNull();
  });
});

describe('the client webhook helper', () => {
  // The example of the Standard Webhooks specification.
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const headers = { 'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek', 'webhook-timestamp': '1614265330', 'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=' };
  const body = '{"test": 2432232314}';
  const at = (seconds: number) => ({ now: new Date(seconds * 1000) });

  it('accepts the specification example, and signs it as the specification does', () => {
    expect(verifyWebhook(secret, new Headers(headers), body, at(1614265330))).toEqual({ test: 2432232314 });
    expect(signWebhook([secret], headers['webhook-id'], 1614265330, body)).toBe(headers['webhook-signature']);
  });

  it('refuses a timestamp more than five minutes off, a changed body and a missing header', () => {
    expect(verifyWebhook(secret, headers, body, at(1614265330 + 300))).toBeTruthy();
    expect(() => verifyWebhook(secret, headers, body, at(1614265330 + 301))).toThrow(/beyond the 300 s tolerance/);
    expect(() => verifyWebhook(secret, headers, '{"test": 1}', at(1614265330))).toThrow(/no webhook-signature matches/);
    expect(() => verifyWebhook(secret, { ...headers, 'webhook-id': undefined }, body, at(1614265330))).toThrow(/no webhook-id header/);
  });
});
