import type BetterSqlite3 from 'better-sqlite3';

/**
 * Writes to a SQLite file grouped into few commits, as a commit each would cost most of a
 * server's throughput (a commit of one small row costs ~70 µs of a busy gateway's CPU, the
 * same as its whole answer). Those a caller waits on (`soon`: a job or a subscription whose
 * submit is answered once it is on disk) commit at the end of this turn of the event loop, or,
 * when the caller knows more are about to follow (`gather`), within `gatherMs` with them;
 * `persisted` resolves then. The others (`later`) commit within `laterMs`, as losing the last
 * of them to a crash only makes the server do something again.
 */
export class SqliteWriteGroups {
  private pending: Array<() => void> = [];
  private laterTimer: NodeJS.Timeout | null = null;
  private gatherTimer: NodeJS.Timeout | null = null;
  private immediate: NodeJS.Immediate | null = null;
  /** Callers waiting for what they wrote to be on disk. */
  private waiting: Array<() => void> = [];

  constructor(
    private readonly db: BetterSqlite3.Database,
    private readonly laterMs: number,
    private readonly gatherMs = 0,
  ) {}

  /**
   * A write committed at the end of this turn of the event loop, with the others of the turn;
   * with `gather`, up to `gatherMs` later, with the writes that come meanwhile.
   */
  soon(write: () => void, gather = false): void {
    this.pending.push(write);
    if (this.immediate !== null) return;
    if (gather && this.gatherMs > 0) this.gatherTimer ??= setTimeout(() => this.flush(), this.gatherMs);
    else this.immediate = setImmediate(() => this.flush());
  }

  /** A write committed at once, with every one pending. */
  now(write: () => void): void {
    this.pending.push(write);
    this.flush();
  }

  /** A write committed within `laterMs`. */
  later(write: () => void): void {
    this.pending.push(write);
    this.laterTimer ??= setTimeout(() => this.flush(), this.laterMs);
  }

  /** Resolves once every `soon` write so far is committed. */
  persisted(): Promise<void> {
    if (this.immediate === null && this.gatherTimer === null) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Commits everything pending now (before a read of the file, or closing it). */
  flush(): void {
    for (const timer of [this.laterTimer, this.gatherTimer]) if (timer !== null) clearTimeout(timer);
    if (this.immediate !== null) clearImmediate(this.immediate);
    this.laterTimer = null;
    this.gatherTimer = null;
    this.immediate = null;
    const writes = this.pending;
    const waiting = this.waiting;
    this.pending = [];
    this.waiting = [];
    if (writes.length > 0) {
      this.db.transaction(() => {
        for (const write of writes) write();
      })();
    }
    for (const resolve of waiting) resolve();
  }
}
