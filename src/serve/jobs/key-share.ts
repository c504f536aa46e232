/**
 * How much of the job store one API key may take. The store keeps a result nobody has read
 * until its TTL, so one key that leaves its results unread would otherwise fill it and
 * lock every other key out. With two or more keys, each gets an equal share of
 * `--max-jobs` and `--max-job-memory`: its jobs queued, running or ended unread count
 * against the first (a queued job's result will be unread too when it ends), its unread
 * results' size against the second. The shares add up to no more than the store, so no key
 * can fill another's. With one key, or none, the store's own limits are the only ones.
 */

/** What one key holds in the store now. */
export interface KeyHolding {
  /** Its jobs queued or running, and its ended jobs nobody has read. */
  jobs: number;
  /** The estimated size of its ended, unread jobs' results. */
  unreadBytes: number;
}

export interface StoreLimits {
  maxRetained: number;
  maxRetainedBytes: number;
}

/** One key's share of the store, when the server has `keys` keys. */
export function keyShare(limits: StoreLimits, keys: number): StoreLimits {
  return {
    maxRetained: Math.max(1, Math.floor(limits.maxRetained / keys)),
    maxRetainedBytes: Math.floor(limits.maxRetainedBytes / keys),
  };
}

/** Why this key may not start another job, naming the limit it reached; null when it may. */
export function keyShareRefusal(holding: KeyHolding, limits: StoreLimits, keys: number): string | null {
  if (keys < 2) return null;
  const share = keyShare(limits, keys);
  const advice = 'read their results, or retry once they expire';
  if (holding.jobs >= share.maxRetained) {
    return (
      `this key has ${holding.jobs} job(s) queued, running or ended unread, its share of the jobs this server keeps ` +
      `(--max-jobs ${limits.maxRetained} among ${keys} API keys: ${share.maxRetained} each): ${advice}`
    );
  }
  if (holding.unreadBytes >= share.maxRetainedBytes) {
    const mebibytes = (bytes: number) => Math.ceil(bytes / 2 ** 20);
    return (
      `this key's unread results hold ${mebibytes(holding.unreadBytes)} MiB, its share of what this server keeps ` +
      `(--max-job-memory ${mebibytes(limits.maxRetainedBytes)} MiB among ${keys} API keys: ${mebibytes(share.maxRetainedBytes)} MiB each): ${advice}`
    );
  }
  return null;
}
