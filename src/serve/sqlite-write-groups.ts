import type BetterSqlite3 from 'better-sqlite3';

/**
 * Writes to a SQLite file grouped into few commits, as a commit each would cost most of a
 * server's throughput: those a caller waits on (`soon`: a job or a subscription whose submit
 * is answered once it is on disk) commit at the end of this turn of the event loop, and
 * `persisted` resolves then; the others (`later`) within `laterMs`, as losing the last of them
 * to a crash only makes the server do something again.
 */
export class SqliteWriteGroups {
  private pending: Array<() => void> = [];
  private groupTimer: NodeJS.Timeout | null = null;
  private immediate: NodeJS.Immediate | null = null;
  /** Callers waiting for what they wrote to be on disk. */
  private waiting: Array<() => void> = [];

  constructor(
    private readonly db: BetterSqlite3.Database,
    private readonly laterMs: number,
  ) {}

  /** A write committed at the end of this turn of the event loop, with the others of the turn. */
  soon(write: () => void): void {
    this.pending.push(write);
    this.immediate ??= setImmediate(() => this.flush());
  }

  /** A write committed within `laterMs`. */
  later(write: () => void): void {
    this.pending.push(write);
    this.groupTimer ??= setTimeout(() => this.flush(), this.laterMs);
  }

  /** Resolves once every `soon` write so far is committed. */
  persisted(): Promise<void> {
    if (this.immediate === null) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Commits everything pending now (before a read of the file, or closing it). */
  flush(): void {
    if (this.groupTimer !== null) clearTimeout(this.groupTimer);
    if (this.immediate !== null) clearImmediate(this.immediate);
    this.groupTimer = null;
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
