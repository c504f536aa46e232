import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { SvcError } from '../../svc-error.js';
import { SqliteWriteGroups } from '../sqlite-write-groups.js';
import type { JobArguments, JobJournal, JournaledJob } from './job-journal.js';
import type { JobStatus } from './job-status.js';
import type { Job } from './job.js';

/** How long a server's claim on the file lasts without being renewed, and how often it renews it. */
export const LEASE_MS = 15_000;
const RENEW_MS = 5_000;
/** How long a status change may wait to be written with others: losing it to a crash only runs a job again. */
const GROUP_MS = 10;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS jobs (
  id TEXT PRIMARY KEY,
  endpoint TEXT NOT NULL,
  streams INTEGER NOT NULL,
  owner TEXT,
  status TEXT NOT NULL,
  progress REAL,
  message TEXT,
  result TEXT,
  error TEXT,
  chunks TEXT,
  args TEXT,
  created_at INTEGER NOT NULL,
  started_at INTEGER,
  finished_at INTEGER,
  runs INTEGER NOT NULL DEFAULT 0,
  read INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS holder (
  only INTEGER PRIMARY KEY CHECK (only = 1),
  host TEXT NOT NULL,
  pid INTEGER NOT NULL,
  lease_until INTEGER NOT NULL
);`;

interface JobRow {
  id: string;
  endpoint: string;
  streams: number;
  owner: string | null;
  status: JobStatus;
  progress: number | null;
  message: string | null;
  result: string | null;
  error: string | null;
  chunks: string | null;
  args: string | null;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
  runs: number;
  read: number;
}

interface HolderRow {
  host: string;
  pid: number;
  lease_until: number;
}

/**
 * Jobs in a SQLite file (better-sqlite3, WAL, synchronous=NORMAL: a commit survives the
 * process being killed; a power cut may lose the last ones). One server holds the file at a
 * time, by a lease it renews: its jobs live in its memory too, which another server would not
 * see. A holder that is gone (its process no longer runs on this host, or the lease lapsed)
 * leaves the file to the next server, which runs its queued jobs again.
 */
export class SqliteJobJournal implements JobJournal {
  private readonly writes: SqliteWriteGroups;
  private readonly renewal: NodeJS.Timeout;
  private readonly statements;

  private constructor(
    private readonly db: BetterSqlite3.Database,
    private readonly path: string,
  ) {
    this.writes = new SqliteWriteGroups(db, GROUP_MS);
    this.statements = {
      insert: db.prepare(
        'INSERT INTO jobs (id, endpoint, streams, owner, status, args, created_at) VALUES (@id, @endpoint, @streams, @owner, @status, @args, @created_at)',
      ),
      start: db.prepare('UPDATE jobs SET status = @status, started_at = @started_at, runs = runs + 1 WHERE id = @id'),
      end: db.prepare(
        'UPDATE jobs SET status = @status, progress = @progress, message = @message, result = @result, error = @error, chunks = @chunks, args = NULL, started_at = @started_at, finished_at = @finished_at WHERE id = @id',
      ),
      read: db.prepare('UPDATE jobs SET read = 1 WHERE id = ?'),
      forget: db.prepare('DELETE FROM jobs WHERE id = ?'),
      renew: db.prepare('UPDATE holder SET lease_until = ? WHERE host = ? AND pid = ?'),
    };
    this.renewal = setInterval(() => this.statements.renew.run(Date.now() + LEASE_MS, hostname(), process.pid), RENEW_MS);
    this.renewal.unref();
  }

  /** Opens (or creates) the file and takes it; a server still holding it is an error naming it. */
  static open(path: string): SqliteJobJournal {
    const where = `--job-store sqlite:${path}`;
    const Database = loadBetterSqlite3(where);
    let db: BetterSqlite3.Database;
    try {
      // The jobs' results are the callers' data: a directory of this user's alone.
      makeDirectory(dirname(path));
      db = new Database(path);
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      db.pragma('busy_timeout = 5000');
      db.exec(SCHEMA);
    } catch (error) {
      throw new SvcError('io', `${where}: cannot open it (${(error as Error).message})`);
    }
    try {
      takeFile(db, where);
    } catch (error) {
      db.close();
      throw error;
    }
    return new SqliteJobJournal(db, path);
  }

  record(job: Job, args: JobArguments): void {
    const row = {
      id: job.id,
      endpoint: job.endpoint,
      streams: job.streams ? 1 : 0,
      owner: job.owner,
      status: job.status,
      args: JSON.stringify(args),
      created_at: job.createdAt,
    };
    // The jobs accepted in one turn of the event loop are written in one commit, at its end.
    this.writes.soon(() => this.statements.insert.run(row));
  }

  persisted(): Promise<void> {
    return this.writes.persisted();
  }

  started(job: Job): void {
    const row = { id: job.id, status: job.status, started_at: job.startedAt };
    this.writes.later(() => this.statements.start.run(row));
  }

  ended(job: Job): void {
    const row = {
      id: job.id,
      status: job.status,
      progress: job.progress,
      message: job.message,
      result: job.result === null ? null : JSON.stringify(job.result),
      error: job.error === null ? null : JSON.stringify(job.error),
      chunks: job.chunks.length === 0 ? null : JSON.stringify(job.chunks),
      started_at: job.startedAt,
      finished_at: job.finishedAt,
    };
    this.writes.later(() => this.statements.end.run(row));
  }

  read(id: string): void {
    this.writes.later(() => this.statements.read.run(id));
  }

  forget(id: string): void {
    this.writes.later(() => this.statements.forget.run(id));
  }

  load(): JournaledJob[] {
    this.writes.flush();
    const rows = this.db.prepare('SELECT * FROM jobs ORDER BY coalesce(finished_at, created_at), created_at').all() as JobRow[];
    return rows.map((row) => ({
      job: {
        id: row.id,
        endpoint: row.endpoint,
        streams: row.streams === 1,
        owner: row.owner,
        status: row.status,
        progress: row.progress ?? 0,
        message: row.message,
        result: row.result === null ? null : JSON.parse(row.result),
        error: row.error === null ? null : JSON.parse(row.error),
        chunks: row.chunks === null ? [] : JSON.parse(row.chunks),
        createdAt: row.created_at,
        startedAt: row.started_at,
        finishedAt: row.finished_at,
      },
      args: row.args === null ? null : JSON.parse(row.args),
      runs: row.runs,
      read: row.read === 1,
    }));
  }

  close(): void {
    clearInterval(this.renewal);
    this.writes.flush();
    this.db.prepare('DELETE FROM holder WHERE host = ? AND pid = ?').run(hostname(), process.pid);
    this.db.close();
  }

  get location(): string {
    return `sqlite:${this.path}`;
  }

  /** Status changes go in one transaction every few milliseconds: a commit each would cap throughput. */
}

/** Creates the missing directories one by one: Node 20's recursive mkdir loops forever under /proc. */
function makeDirectory(directory: string): void {
  if (existsSync(directory)) return;
  makeDirectory(dirname(directory));
  mkdirSync(directory, { mode: 0o700 });
}

/** Takes the file for this process, unless a server that still runs holds it. */
function takeFile(db: BetterSqlite3.Database, where: string): void {
  const host = hostname();
  const now = Date.now();
  db.transaction(() => {
    const holder = db.prepare('SELECT host, pid, lease_until FROM holder WHERE only = 1').get() as HolderRow | undefined;
    if (holder && holderRuns(holder, host, now)) {
      throw new SvcError(
        'io',
        `${where}: another svc start (pid ${holder.pid} on ${holder.host}) is using it; stop it, or give this server a file of its own`,
      );
    }
    db.prepare('INSERT OR REPLACE INTO holder (only, host, pid, lease_until) VALUES (1, ?, ?, ?)').run(host, process.pid, now + LEASE_MS);
  }).immediate();
}

/**
 * On this host a holder runs while its process does (and is not this one: in a container,
 * every start is pid 1); on another, until its lease lapses.
 */
function holderRuns(holder: HolderRow, host: string, now: number): boolean {
  if (holder.lease_until <= now) return false;
  if (holder.host !== host) return true;
  if (holder.pid === process.pid) return false;
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  // Killed but not yet reaped by its parent (a zombie, on Linux): it holds nothing.
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${holder.pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

/** Whether better-sqlite3 is installed beside svc (an image's runtime has no native modules). */
export function sqliteLoads(): boolean {
  try {
    createRequire(import.meta.url).resolve('better-sqlite3');
    return true;
  } catch {
    return false;
  }
}

/** Loaded on use: a native module, built when svc is installed; the memory store needs none. */
function loadBetterSqlite3(where: string): typeof BetterSqlite3 {
  try {
    return createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
  } catch (error) {
    throw new SvcError('io', `${where}: SQLite (the better-sqlite3 package) cannot be loaded here (${(error as Error).message.split('\n')[0]}); use --job-store memory`);
  }
}
