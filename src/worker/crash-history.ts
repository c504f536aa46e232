/** When a crashed worker is started again, and when svc stops trying. */
export interface RestartPolicy {
  /** This many crashes within `windowMs` means the service crash-loops: no more restarts. */
  maxCrashes: number;
  windowMs: number;
  /** The wait before the first restart, doubled for each recent crash up to `maxDelayMs`. */
  firstDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicy = {
  maxCrashes: 5,
  windowMs: 60_000,
  firstDelayMs: 250,
  maxDelayMs: 10_000,
};

export type RestartDecision = { restart: true; delayMs: number } | { restart: false; crashes: number };

/** The pool's recent worker crashes, deciding whether and when to restart after the next one. */
export class CrashHistory {
  private crashTimes: number[] = [];

  constructor(private readonly policy: RestartPolicy) {}

  recordCrash(now: number = Date.now()): RestartDecision {
    this.crashTimes = [...this.crashTimes.filter((time) => now - time < this.policy.windowMs), now];
    const crashes = this.crashTimes.length;
    if (crashes >= this.policy.maxCrashes) return { restart: false, crashes };
    const delayMs = Math.min(this.policy.firstDelayMs * 2 ** (crashes - 1), this.policy.maxDelayMs);
    return { restart: true, delayMs };
  }
}
