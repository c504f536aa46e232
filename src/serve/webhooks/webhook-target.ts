import { lookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { BlockList, isIP } from 'node:net';
import { lookup as lookupCallback } from 'node:dns';

/**
 * Where a webhook may go. A server that posts to any URL a client names would let that client
 * reach what only the server can (a cloud's metadata service at 169.254.169.254, an admin
 * port on localhost, the private network): so by default only public unicast addresses, as
 * resolved, not as written (a name may resolve to 127.0.0.1), and checked again when each
 * attempt connects (the name may resolve elsewhere by then). `--webhook-allow-private` lifts it.
 */
const PRIVATE = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], // RFC 1918
  ['100.64.0.0', 10], // carrier-grade NAT (RFC 6598)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12], // RFC 1918
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.168.0.0', 16], // RFC 1918
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv6');
}

/** Why `address` may not be a webhook's target, or null when it may. */
export function privateAddressReason(address: string): string | null {
  const family = isIP(address);
  if (family === 0) return null;
  // An IPv4-mapped IPv6 address (::ffff:127.0.0.1) is the IPv4 address it maps.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return privateAddressReason(mapped[1] as string);
  return PRIVATE.check(address, family === 4 ? 'ipv4' : 'ipv6') ? 'a private, loopback or link-local address' : null;
}

export class WebhookTargetError extends Error {
  override readonly name = 'WebhookTargetError';
}

/** Checks a webhook URL as a client gives it; throws WebhookTargetError saying why it is refused. */
export async function checkWebhookTarget(text: string, allowPrivate: boolean): Promise<URL> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new WebhookTargetError(`${JSON.stringify(text)} is not an absolute URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new WebhookTargetError(`${url.protocol} URLs are not sent to: only http and https`);
  if (allowPrivate) return url;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  try {
    addresses = isIP(host) !== 0 ? [host] : (await lookup(host, { all: true })).map((entry) => entry.address);
  } catch (error) {
    throw new WebhookTargetError(`${host} cannot be resolved (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  for (const address of addresses) {
    const reason = privateAddressReason(address);
    const what = address === host ? `${host} is` : `${host} resolves to ${address},`;
    if (reason !== null) throw new WebhookTargetError(`${what} ${reason}; svc start --webhook-allow-private allows such targets`);
  }
  return url;
}

/** A DNS lookup for each attempt's connection that refuses private addresses, so a name cannot be re-pointed after the check. */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    lookupCallback(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const list = addresses as unknown as Array<{ address: string; family: number }>;
      const refused = allowPrivate ? undefined : list.find((entry) => privateAddressReason(entry.address) !== null);
      if (refused) return callback(new WebhookTargetError(`${hostname} resolves to ${refused.address}, ${privateAddressReason(refused.address)}`), '', 0);
      if (options.all) return (callback as unknown as (error: null, addresses: typeof list) => void)(null, list);
      const first = list[0];
      if (!first) return callback(new WebhookTargetError(`${hostname} has no address`), '', 0);
      callback(null, first.address, first.family);
    });
  };
}
