import { describe, expect, it } from 'vitest';
import { privateAddressReason } from '../../src/serve/webhooks/webhook-target.js';

describe('webhook targets', () => {
  it('refuses loopback, private, link-local (cloud metadata) and IPv4-mapped ones, and lets public addresses through', () => {
    for (const address of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1']) {
      expect(privateAddressReason(address), address).toBe('a private, loopback or link-local address');
    }
    for (const address of ['93.184.215.14', '8.8.8.8', '2606:4700:4700::1111', '172.32.0.1']) expect(privateAddressReason(address), address).toBeNull();
  });
});
