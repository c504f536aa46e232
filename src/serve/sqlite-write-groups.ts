import type BetterSqlite3 from 'better-sqlite3';
import { HttpError } from './http-error.js';

/** How soon writes a failed commit kept are tried again (a full disk may get room). */
const RETRY_MS = 1000;

export interface WriteGroupsOptions {
  /** The file as a user named it, for errors: `--job-store sqlite:PATH`. */
  where: string;
  /** What a caller refused for a failed commit is told it means: `the job was not accepted`. */
  consequence: string;
  /** How long a `later` write may wait. */
  laterMs: number;
  /** How long a `soon` write told to gather may wait for others. */
  gatherMs?: number;
  /** After each commit: null when it succeeded, else why it failed. */
  afterCommit?: (error: Error | null) => void;
}

/**
 * Writes to a SQLite file grouped into few commits, as a commit each would cost most of a
 * server's throughput (a commit of one small row costs ~70 µs of a busy gateway's CPU, the
 * same as its whole answer). Those a caller waits on (`soon`: a job or a subscription whose
 * submit is answered once it is on disk) commit at the end of this turn of the event loop, or,
 * when the caller knows more are about to follow (`gather`), within `gatherMs` with them;
 * `persisted` resolves then. The others (`later`) commit within `laterMs`, as losing the last
 * of them to a crash only makes the server do something again.
 *
 * A commit that fails (a full disk) loses nothing: its writes are kept, in order, and tried
 * again with the next commit or within RETRY_MS; those waiting on it are refused with a 503
 * naming the file, so a submit is not answered as accepted while its job is not on disk.
 */
export class SqliteWriteGroups {
  private pending: Array<() => void> = [];
  private laterTimer: NodeJS.Timeout | null = null;
  private gatherTimer: NodeJS.Timeout | null = null;
  private immediate: NodeJS.Immediate | null = null;
  /** Callers waiting for what they wrote to be on disk. */
  private waiting: Array<{ resolve: () => void; reject: (error: HttpError) => void }> = [];

  constructor(
    private readonly db: BetterSqlite3.Database,
    private readonly options: WriteGroupsOptions,
  ) {}

  /**
   * A write committed at the end of this turn of the event loop, with the others of the turn;
   * with `gather`, up to `gatherMs` later, with the writes that come meanwhile.
   */
  soon(write: () => void, gather = false): void {
    this.pending.push(write);
    if (this.immediate !== null) return;
    const { gatherMs = 0 } = this.options;
    if (gather && gatherMs > 0) this.gatherTimer ??= setTimeout(() => this.flush(), gatherMs);
    else this.immediate = setImmediate(() => this.flush());
  }

  /** A write committed at once, with every one pending: resolves then, or is refused as `persisted` is. */
  now(write: () => void): Promise<void> {
    this.pending.push(write);
    const refusal = this.flush();
    return refusal === null ? Promise.resolve() : Promise.reject(refusal);
  }

  /** A write committed within `laterMs`. */
  later(write: () => void): void {
    this.pending.push(write);
    this.laterTimer ??= setTimeout(() => this.flush(), this.options.laterMs);
  }

  /**
   * Resolves once every `soon` write so far is committed; rejects with a 503 when that commit
   * fails (its writes are kept for the next).
   */
  persisted(): Promise<void> {
    if (this.immediate === null && this.gatherTimer === null) return Promise.resolve();
    return new Promise((resolve, reject) => this.waiting.push({ resolve, reject }));
  }

  /** Commits everything pending now (before a read of the file, or closing it); the refusal when it cannot. */
  flush(): HttpError | null {
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
      try {
        this.db.transaction(() => {
          for (const write of writes) write();
        })();
      } catch (error) {
        // Rolled back: kept, in order, for the next commit.
        this.pending = writes;
        this.laterTimer = setTimeout(() => this.flush(), RETRY_MS);
        this.laterTimer.unref();
        this.options.afterCommit?.(error as Error);
        const refusal = unwritable(this.options, error as Error);
        for (const { reject } of waiting) reject(refusal);
        return refusal;
      }
      this.options.afterCommit?.(null);
    }
    for (const { resolve } of waiting) resolve();
    return null;
  }
}

function unwritable({ where, consequence }: WriteGroupsOptions, error: Error): HttpError {
  return new HttpError(503, 'unavailable', 'job_store_unwritable', `${where} cannot be written (${error.message}): ${consequence}; retry once it can`, {
    headers: { 'retry-after': String(RETRY_MS / 1000) },
  });
}
