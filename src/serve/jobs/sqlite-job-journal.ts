import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { SvcError } from '../../svc-error.js';
import { JsonText } from '../../worker/json-text.js';
import { storedJson } from '../json-chunks.js';
import { SqliteWriteGroups } from '../sqlite-write-groups.js';
import { SqliteCheckpointer } from './sqlite-checkpointer.js';
import { APART_FIELDS, JobValueFiles, MissingValueFile, type ApartField } from './job-value-files.js';
import type { JobArguments, JobJournal, JournaledJob } from './job-journal.js';
import type { JobStatus } from './job-status.js';
import type { Job } from './job.js';

/** How long a server's claim on the file lasts without being renewed, and how often it renews it. */
export const LEASE_MS = 15_000;
const RENEW_MS = 5_000;
/** How long a status change may wait to be written with others: losing it to a crash only runs a job again. */
const GROUP_MS = 10;
/**
 * How long an answered job's write may wait for those of others answered meanwhile: a gateway
 * answering thousands of quick jobs a second commits a few at a time rather than one by one
 * (bench/RESULTS.md: with one write per job already, it took SQLite from ~0.55x to 0.78x of memory's jobs/s).
 */
const GATHER_MS = 1;
/** How long gathering stays off after a commit that waited gathered no other answer (jobs end too slowly for it to pay). */
const GATHER_PAUSE_MS = 20;
/** Once commits' results, arguments and chunks come to this many characters, the checkpointer's thread copies the log back. */
const CHECKPOINT_AFTER_CHARS = 256 * 1024;

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
  read INTEGER NOT NULL DEFAULT 0,
  -- Values kept in files of their own, and their sizes (job-value-files.ts).
  apart TEXT
);
-- A job read after its end was written: its own row here, as setting jobs.read would write
-- the job's whole row again, a large result with it.
CREATE TABLE IF NOT EXISTS job_reads (
  id TEXT PRIMARY KEY
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
  /** Text, or a BLOB of UTF-8 when it was written as bytes; once read, its file's (job-value-files.ts). */
  result: string | Buffer | JsonText | null;
  error: string | null;
  chunks: string | null;
  args: string | Buffer | null;
  apart: string | null;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
  runs: number;
  /** Read by the time its end was written; `read_later`, in job_reads, after. */
  read: number;
  read_later: number;
}

interface HolderRow {
  host: string;
  pid: number;
  lease_until: number;
}

/** What the next commit writes of one job: its changes since the last, merged into one statement. */
interface PendingJob {
  /** Null for a job this server only reads or forgets (one kept from the last server). */
  job: Job | null;
  /** Its arguments while its row is still to be inserted; null once it exists in the file. */
  insertWith: JobArguments | null;
  starts: number;
  ended: boolean;
  read: boolean;
  forgotten: boolean;
}

/**
 * Jobs in a SQLite file (better-sqlite3, WAL, synchronous=NORMAL: a commit survives the
 * process being killed; a power cut may lose the last ones). One server holds the file at a
 * time, by a lease it renews: its jobs live in its memory too, which another server would not
 * see. A holder that is gone (its process no longer runs on this host, or the lease lapsed)
 * leaves the file to the next server, which runs its queued jobs again.
 *
 * A job's changes between two commits are written as one statement built from the job as it
 * is at the commit: a quick job accepted, started, ended and read within a few milliseconds
 * costs one insert, not four statements (most of a server's time in SQLite went to those).
 */
export class SqliteJobJournal implements JobJournal {
  private readonly writes: SqliteWriteGroups;
  private readonly renewal: NodeJS.Timeout;
  private readonly statements;
  /** Jobs with changes for the next commit. */
  private pending = new Map<string, PendingJob>();
  /** The changes a commit is writing, kept until it succeeds: a failed one writes them again. */
  private uncommitted: Map<string, PendingJob> | null = null;
  /** Whether this commit has had its changes written (writePending is scheduled once per change). */
  private written = false;
  /** Jobs recorded to be written only when their submit is answered (`recordWhenAnswered`). */
  private readonly unanswered = new Map<string, PendingJob>();
  private readonly writePending = () => this.writeChanges();
  private readonly checkpointer: SqliteCheckpointer;
  /** How much of results, arguments and chunks (characters, or bytes) the commit under way writes. */
  private charsThisCommit = 0;
  private charsSinceCheckpoint = 0;
  /** When the last job recorded to be written when answered was (performance.now()). */
  private lastAnswerAt = -Infinity;
  /** Jobs answered since the last commit, and whether one of them waited to gather others. */
  private answersSinceCommit = 0;
  private gathering = false;
  /** Gathering is off until then (performance.now()). */
  private gatherOffUntil = -Infinity;
  private readonly values: JobValueFiles;
  /** The values each job's committed row keeps in files (only jobs with some). */
  private apartById = new Map<string, ApartField[]>();
  /** What the commit under way makes of them: its files are removed once it succeeds. */
  private apartThisCommit = new Map<string, ApartField[]>();
  /** The jobs whose results the commit under way writes to files, which then hold them instead of memory. */
  private resultsThisCommit: Array<{ job: Job; size: number }> = [];

  private constructor(
    private readonly db: BetterSqlite3.Database,
    private readonly path: string,
    private readonly warn: (message: string) => void,
    sqliteModule: string,
  ) {
    const where = `--job-store sqlite:${path}`;
    this.checkpointer = new SqliteCheckpointer(path, sqliteModule, warn);
    this.values = JobValueFiles.beside(path);
    let failing = false;
    this.writes = new SqliteWriteGroups(db, {
      where,
      consequence: 'the job was not accepted',
      laterMs: GROUP_MS,
      gatherMs: GATHER_MS,
      afterCommit: (error) => {
        this.written = false;
        if (error === null) this.uncommitted = null;
        if (error === null) this.settleApartValues();
        if (error === null) this.charsSinceCheckpoint += this.charsThisCommit;
        this.charsThisCommit = 0;
        if (this.charsSinceCheckpoint >= CHECKPOINT_AFTER_CHARS) {
          this.checkpointer.request();
          this.charsSinceCheckpoint = 0;
        }
        if (error !== null && !failing) {
          warn(`${where} cannot be written (${error.message}): new jobs get 503 until it can; the changes of the jobs already accepted are kept and written then`);
        } else if (error === null && failing) warn(`${where} is written again`);
        failing = error !== null;
      },
    });
    this.statements = {
      insert: db.prepare(
        'INSERT INTO jobs (id, endpoint, streams, owner, status, progress, message, result, error, chunks, args, apart, created_at, started_at, finished_at, runs, read) ' +
          'VALUES (@id, @endpoint, @streams, @owner, @status, @progress, @message, @result, @error, @chunks, @args, @apart, @created_at, @started_at, @finished_at, @runs, @read)',
      ),
      start: db.prepare('UPDATE jobs SET status = @status, started_at = @started_at, runs = runs + @runs, read = max(read, @read) WHERE id = @id'),
      end: db.prepare(
        'UPDATE jobs SET status = @status, progress = @progress, message = @message, result = @result, error = @error, chunks = @chunks, args = NULL, apart = @apart, ' +
          'started_at = @started_at, finished_at = @finished_at, runs = runs + @runs, read = max(read, @read) WHERE id = @id',
      ),
      read: db.prepare('INSERT OR IGNORE INTO job_reads (id) VALUES (?)'),
      forget: db.prepare('DELETE FROM jobs WHERE id = ?'),
      forgetRead: db.prepare('DELETE FROM job_reads WHERE id = ?'),
      renew: db.prepare('UPDATE holder SET lease_until = ? WHERE host = ? AND pid = ?'),
    };
    this.renewal = setInterval(() => {
      try {
        this.statements.renew.run(Date.now() + LEASE_MS, hostname(), process.pid);
      } catch {
        // A full disk: the jobs' writes say so; on this host the lease is not needed while
        // this process runs, and the next renewal tries again.
      }
    }, RENEW_MS);
    this.renewal.unref();
  }

  /** Opens (or creates) the file and takes it; a server still holding it is an error naming it. */
  static open(path: string, warn: (message: string) => void = () => {}): SqliteJobJournal {
    const where = `--job-store sqlite:${path}`;
    const loaded = loadBetterSqlite3();
    if (typeof loaded === 'string') throw new SvcError('io', `${where}: ${loaded}; or use --job-store memory`);
    const { Database, sqliteModule } = loaded;
    let db: BetterSqlite3.Database;
    try {
      // The jobs' results are the callers' data: a directory of this user's alone.
      makeDirectory(dirname(path));
      db = new Database(path);
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      db.pragma('busy_timeout = 5000');
      db.exec(SCHEMA);
      addApartColumn(db);
    } catch (error) {
      throw new SvcError('io', `${where}: cannot open it (${(error as Error).message})`);
    }
    try {
      takeFile(db, where);
    } catch (error) {
      db.close();
      throw error;
    }
    return new SqliteJobJournal(db, path, warn, sqliteModule);
  }

  record(job: Job, args: JobArguments): void {
    this.pending.set(job.id, newPending(job, args));
    // The jobs accepted in one turn of the event loop are written in one commit, at its end.
    this.writes.soon(this.writePending);
  }

  recordWhenAnswered(job: Job, args: JobArguments): void {
    this.unanswered.set(job.id, newPending(job, args));
  }

  answering(id: string): Promise<void> {
    const entry = this.unanswered.get(id);
    if (entry !== undefined) {
      this.unanswered.delete(id);
      this.pending.set(id, entry);
      this.answersSinceCommit += 1;
      const now = performance.now();
      const recentAnswer = now - this.lastAnswerAt < GATHER_MS;
      this.lastAnswerAt = now;
      if (this.unanswered.size === 0) {
        // No other job waits to be answered: committed now, without a turn of the event loop.
        return this.writes.now(this.writePending);
      }
      // Others wait, and answers come quickly: the next ones are likely to end within
      // GATHER_MS and share this commit (the last of them to be answered commits it at once).
      const gather = recentAnswer && now >= this.gatherOffUntil;
      this.gathering ||= gather;
      this.writes.soon(this.writePending, gather);
    }
    return this.writes.persisted();
  }

  persisted(): Promise<void> {
    return this.writes.persisted();
  }

  started(job: Job): void {
    this.changeOf(job).starts += 1;
  }

  ended(job: Job): void {
    this.changeOf(job).ended = true;
  }

  read(id: string): void {
    const entry = this.unanswered.get(id) ?? this.pending.get(id);
    if (entry !== undefined) entry.read = true;
    else this.schedule({ ...newPending(null, null), read: true }, id);
  }

  forget(id: string): void {
    if (this.unanswered.delete(id)) return;
    const entry = this.pending.get(id);
    if (entry !== undefined) entry.forgotten = true;
    else this.schedule({ ...newPending(null, null), forgotten: true }, id);
  }

  load(): JournaledJob[] {
    this.writes.flush();
    const rows = this.db
      .prepare('SELECT jobs.*, job_reads.id IS NOT NULL AS read_later FROM jobs LEFT JOIN job_reads ON job_reads.id = jobs.id ORDER BY coalesce(finished_at, created_at), created_at')
      .all() as JobRow[];
    const jobs: JournaledJob[] = [];
    this.apartById = new Map();
    for (const row of rows) {
      const loaded = this.withApartValues(row);
      if (loaded !== null) jobs.push(journaledJob(loaded));
    }
    try {
      const removed = this.values.removeUnnamed(this.apartById);
      if (removed > 0) this.warn(`--job-store sqlite:${this.path}: removed ${removed} file(s) of ${this.values.directory} that no job named (left by a server that stopped while writing them)`);
    } catch (error) {
      this.warn(`--job-store sqlite:${this.path}: cannot look through ${this.values.directory} for files no job names (${(error as Error).message})`);
    }
    return jobs;
  }

  /** The row with the values it keeps in files read back; null for a job whose file is gone, which is dropped, saying so. */
  private withApartValues(row: JobRow): JobRow | null {
    if (row.apart === null) return row;
    try {
      const values = this.values.read(row.id, row.apart);
      this.apartById.set(row.id, Object.keys(this.values.sizesOf(row.apart)) as ApartField[]);
      return { ...row, ...values, chunks: values.chunks === undefined ? row.chunks : values.chunks.toString('utf8') };
    } catch (error) {
      if (!(error instanceof MissingValueFile)) throw error;
      this.warn(`--job-store sqlite:${this.path}: job ${row.id} (${row.endpoint}, ${row.status}) is dropped: ${error.message}`);
      this.forget(row.id);
      return null;
    }
  }

  close(): void {
    clearInterval(this.renewal);
    const refusal = this.writes.flush();
    if (refusal !== null) this.warn(`the last changes of ${this.uncommitted?.size ?? 0} job(s) are not in ${this.location}: the next start runs again those it had not seen end`);
    try {
      this.db.prepare('DELETE FROM holder WHERE host = ? AND pid = ?').run(hostname(), process.pid);
    } catch {
      // Left held by a process that is gone: the next server on this host takes it all the same.
    }
    this.checkpointer.close();
    this.db.close();
  }

  get location(): string {
    return `sqlite:${this.path}`;
  }

  /** The job's entry for the next commit: a status change may wait a few milliseconds to be written with others. */
  private changeOf(job: Job): PendingJob {
    const entry = this.unanswered.get(job.id) ?? this.pending.get(job.id);
    if (entry !== undefined) {
      entry.job ??= job;
      return entry;
    }
    return this.schedule(newPending(job, null), job.id);
  }

  private schedule(entry: PendingJob, id: string): PendingJob {
    this.pending.set(id, entry);
    this.writes.later(this.writePending);
    return entry;
  }

  /** Runs inside a commit of the write groups: one statement per job changed since the last. */
  private writeChanges(): void {
    // Scheduled once per change: the first call of a commit writes them all.
    if (this.written) return;
    this.written = true;
    if (this.gathering && this.answersSinceCommit < 2) this.gatherOffUntil = performance.now() + GATHER_PAUSE_MS;
    this.gathering = false;
    this.answersSinceCommit = 0;
    this.apartThisCommit.clear();
    this.resultsThisCommit = [];
    const afterFailedCommit = this.uncommitted !== null;
    const changes = this.uncommitted === null ? this.pending : merged(this.uncommitted, this.pending);
    this.uncommitted = changes;
    this.pending = new Map();
    const { statements } = this;
    for (const [id, change] of changes) {
      const { job } = change;
      const counts = { runs: change.starts, read: change.read ? 1 : 0 };
      // One never written (accepted and dropped between two commits) has nothing to delete.
      if (change.forgotten) {
        if (change.insertWith === null) {
          statements.forget.run(id);
          statements.forgetRead.run(id);
          if (this.apartById.has(id)) this.apartThisCommit.set(id, []);
        } else if (afterFailedCommit) {
          // Refused when its commit failed (a full disk): the files written for that commit go.
          this.values.removeQuietly(id, APART_FIELDS);
        }
      } else if (job === null) statements.read.run(id);
      else if (change.insertWith !== null) this.writeRow(statements.insert, job, insertRow(job, change.insertWith, change.ended, counts));
      else if (change.ended) this.writeRow(statements.end, job, { ...endedFields(job), ...counts });
      else statements.start.run({ id, status: job.status, started_at: job.startedAt, ...counts });
    }
  }

  /**
   * A row with its result, arguments or chunks, the large ones written to their files first;
   * those it keeps in the row counted for the checkpointer.
   */
  private writeRow(statement: BetterSqlite3.Statement, job: Job, row: { result: string | Buffer | null; args?: string | Buffer | null; chunks: string | null }): void {
    const { id } = job;
    const stored = this.values.writeLarge(id, row);
    statement.run(stored);
    const sizes = this.values.sizesOf(stored.apart);
    if (stored.apart !== null || this.apartById.has(id)) this.apartThisCommit.set(id, Object.keys(sizes) as ApartField[]);
    if (sizes.result !== undefined) this.resultsThisCommit.push({ job, size: sizes.result });
    this.charsThisCommit += (stored.result?.length ?? 0) + (stored.args?.length ?? 0) + (stored.chunks?.length ?? 0);
  }

  /**
   * After a commit: the results it wrote to files are read from there from now on, and the
   * files of values its rows no longer keep (an ended job's arguments, a forgotten job's all) go.
   */
  private settleApartValues(): void {
    for (const { job, size } of this.resultsThisCommit) {
      // The text the worker sent, whoever holds it, is read from the file from now on.
      const reread = this.values.resultReader(job.id, size);
      if (job.result instanceof JsonText) job.result.keepElsewhere(reread);
      else job.result = JsonText.keptElsewhere(size, reread);
    }
    this.resultsThisCommit = [];
    for (const [id, fields] of this.apartThisCommit) {
      const dropped = (this.apartById.get(id) ?? []).filter((field) => !fields.includes(field));
      if (fields.length > 0) this.apartById.set(id, fields);
      else this.apartById.delete(id);
      try {
        this.values.remove(id, dropped);
      } catch (error) {
        this.warn(`--job-store sqlite:${this.path}: cannot remove the files of job ${id} in ${this.values.directory} (${(error as Error).message}); the next start removes them`);
      }
    }
    this.apartThisCommit.clear();
  }
}

/** A job as its row (its values kept apart read back) has it. */
function journaledJob(row: JobRow): JournaledJob {
  return {
    job: {
      id: row.id,
      endpoint: row.endpoint,
      streams: row.streams === 1,
      owner: row.owner,
      status: row.status,
      progress: row.progress ?? 0,
      message: row.message,
      // Bytes stay bytes: an unread large result goes out as it was written, and a server
      // restarted with many of them does not parse them all before it serves.
      result: row.result === null || row.result instanceof JsonText ? row.result : typeof row.result === 'string' ? JSON.parse(row.result) : new JsonText([row.result]),
      error: row.error === null ? null : JSON.parse(row.error),
      chunks: row.chunks === null ? [] : JSON.parse(row.chunks),
      createdAt: row.created_at,
      startedAt: row.started_at,
      finishedAt: row.finished_at,
    },
    args: row.args === null ? null : JSON.parse(String(row.args)),
    runs: row.runs,
    read: row.read === 1 || row.read_later === 1,
  };
}

/** A job's changes over two commits, the first of which failed, as one. */
function merged(older: Map<string, PendingJob>, newer: Map<string, PendingJob>): Map<string, PendingJob> {
  const all = new Map(older);
  for (const [id, change] of newer) {
    const before = all.get(id);
    all.set(
      id,
      before === undefined
        ? change
        : {
            job: change.job ?? before.job,
            insertWith: before.insertWith ?? change.insertWith,
            starts: before.starts + change.starts,
            ended: before.ended || change.ended,
            read: before.read || change.read,
            forgotten: before.forgotten || change.forgotten,
          },
    );
  }
  return all;
}

function newPending(job: Job | null, args: JobArguments | null): PendingJob {
  return { job, insertWith: args, starts: 0, ended: false, read: false, forgotten: false };
}

/** The fields a job's end writes (and its insert, when it ended before its first commit). */
function endedFields(job: Job) {
  return {
    id: job.id,
    status: job.status,
    progress: job.progress,
    message: job.message,
    result: job.result === null ? null : storedJson(job.result),
    error: job.error === null ? null : JSON.stringify(job.error),
    chunks: job.chunks.length === 0 ? null : JSON.stringify(job.chunks),
    started_at: job.startedAt,
    finished_at: job.finishedAt,
  };
}

function insertRow(job: Job, args: JobArguments, ended: boolean, counts: { runs: number; read: number }) {
  return {
    ...(ended ? endedFields(job) : { id: job.id, status: job.status, progress: null, message: null, result: null, error: null, chunks: null, started_at: job.startedAt, finished_at: null }),
    endpoint: job.endpoint,
    streams: job.streams ? 1 : 0,
    owner: job.owner,
    // Kept until the job ends, so that a restart can run it again.
    args: ended ? null : storedJson(args),
    created_at: job.createdAt,
    ...counts,
  };
}

/** Creates the missing directories one by one: Node 20's recursive mkdir loops forever under /proc. */
function makeDirectory(directory: string): void {
  if (existsSync(directory)) return;
  makeDirectory(dirname(directory));
  mkdirSync(directory, { mode: 0o700 });
}

/** A file made by a server before values were kept apart gets the column that names them. */
function addApartColumn(db: BetterSqlite3.Database): void {
  const columns = db.prepare('PRAGMA table_info(jobs)').all() as Array<{ name: string }>;
  if (!columns.some((column) => column.name === 'apart')) db.exec('ALTER TABLE jobs ADD COLUMN apart TEXT');
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

type BetterSqlite3Module = { Database: typeof BetterSqlite3; sqliteModule: string };

let betterSqlite3: BetterSqlite3Module | string | undefined;

/**
 * better-sqlite3, loaded on first use (the memory store needs no native module), or why it
 * cannot be: an image's runtime carries no native modules, and npm 12 installs the package
 * without building its native part unless told to allow its install script.
 */
function loadBetterSqlite3(): BetterSqlite3Module | string {
  betterSqlite3 ??= tryLoadBetterSqlite3();
  return betterSqlite3;
}

function tryLoadBetterSqlite3(): BetterSqlite3Module | string {
  const require = createRequire(import.meta.url);
  let sqliteModule: string;
  try {
    sqliteModule = require.resolve('better-sqlite3');
  } catch {
    return 'SQLite (better-sqlite3) is not installed with this svc';
  }
  try {
    const Database = require(sqliteModule) as typeof BetterSqlite3;
    // The native part loads with the first database, not with the package.
    new Database(':memory:').close();
    return { Database, sqliteModule };
  } catch (error) {
    const reason = (error as Error).message.split('\n')[0]!;
    if (reason.startsWith('Could not locate the bindings file')) {
      return 'SQLite (better-sqlite3) is installed without its native module, whose install script npm 12 runs only when allowed: reinstall with `npm install -g svc-ml --allow-scripts=better-sqlite3` (docs/install.md)';
    }
    return `SQLite (better-sqlite3) cannot be loaded here (${reason}); \`npm rebuild better-sqlite3\` in svc's directory builds it for this Node`;
  }
}

/** Why the SQLite job store cannot be used here, or null when it can. */
export function sqliteUnavailable(): string | null {
  const loaded = loadBetterSqlite3();
  return typeof loaded === 'string' ? loaded : null;
}
