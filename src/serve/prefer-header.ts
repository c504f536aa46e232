/** What a client asked for in `Prefer` (RFC 7240): wait up to N seconds, or an immediate 202. */
export interface Preferences {
  waitSeconds: number | null;
  respondAsync: boolean;
}

/**
 * Reads every `Prefer` header, ignoring preferences it does not know, as RFC 7240 asks.
 * `wait` is capped so that a client cannot hold a connection open for hours.
 */
export function readPreferences(header: string | string[] | undefined, maxWaitSeconds: number): Preferences {
  const preferences: Preferences = { waitSeconds: null, respondAsync: false };
  const values = Array.isArray(header) ? header : header === undefined ? [] : [header];
  for (const preference of values.flatMap((value) => value.split(','))) {
    const [token = '', rawValue] = preference.split(';')[0]!.split('=').map((part) => part.trim());
    const name = token.toLowerCase();
    if (name === 'respond-async') preferences.respondAsync = true;
    if (name === 'wait' && rawValue !== undefined) {
      const seconds = Number(rawValue.replace(/^"|"$/g, ''));
      if (Number.isFinite(seconds) && seconds >= 0) preferences.waitSeconds = Math.min(seconds, maxWaitSeconds);
    }
  }
  return preferences;
}
