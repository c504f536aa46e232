/** When a crashed worker is started again, and when svc stops trying. */
export interface RestartPolicy {
  /**
   * This many crashes outside calls (at start or while idle) within `windowMs` means the
   * service crash-loops: no more restarts. Crashes during calls do not count: they may be
   * one input's doing, and a few such requests must not take the service down for good.
   */
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
  private outsideCallTimes: number[] = [];

  constructor(private readonly policy: RestartPolicy) {}

  recordCrash(duringCall: boolean, now: number = Date.now()): RestartDecision {
    const isRecent = (time: number) => now - time < this.policy.windowMs;
    this.crashTimes = [...this.crashTimes.filter(isRecent), now];
    this.outsideCallTimes = [...this.outsideCallTimes.filter(isRecent), ...(duringCall ? [] : [now])];
    const crashes = this.outsideCallTimes.length;
    if (crashes >= this.policy.maxCrashes) return { restart: false, crashes };
    const delayMs = Math.min(this.policy.firstDelayMs * 2 ** (this.crashTimes.length - 1), this.policy.maxDelayMs);
    return { restart: true, delayMs };
  }
}
