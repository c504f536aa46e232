/** A listening address as a URL's host: the wildcard addresses as `localhost`, IPv6 in brackets. */
export function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '::') return 'localhost';
  return host.includes(':') ? `[${host}]` : host;
}
