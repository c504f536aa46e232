import { mkdirSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import type { Delivery, DeliveryLog, DeliveryState, Subscription } from './delivery-log.js';
import type { WebhookEvent } from './webhook-events.js';
import { SqliteWriteGroups } from '../sqlite-write-groups.js';
import { APART_BYTES, MissingValueFile, readWhole, removeQuietly } from '../jobs/job-value-files.js';

/** The message ids svc makes (webhook-dispatcher.ts): nothing else names a file. */
const MESSAGE_ID = /^msg_[0-9a-f]{32}$/;
/** A payload file being written, renamed into place once whole. */
const PART = '.part';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS webhook_subscriptions (
  job_id TEXT PRIMARY KEY,
  owner TEXT,
  url TEXT NOT NULL,
  events TEXT NOT NULL,
  base_url TEXT NOT NULL,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL,
  last_event TEXT,
  last_error TEXT,
  updated_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS webhook_deliveries (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  message_id TEXT NOT NULL UNIQUE,
  job_id TEXT NOT NULL,
  event TEXT NOT NULL,
  payload TEXT NOT NULL,
  attempts INTEGER NOT NULL,
  next_at INTEGER NOT NULL
);`;

interface SubscriptionRow {
  job_id: string;
  owner: string | null;
  url: string;
  events: string;
  base_url: string;
  status: DeliveryState['status'];
  attempts: number;
  last_event: WebhookEvent | null;
  last_error: string | null;
  updated_at: number;
}

interface DeliveryRow {
  message_id: string;
  job_id: string;
  event: WebhookEvent;
  /** Text, or a BLOB of UTF-8 when it was written as bytes; '' when it is in its file. */
  payload: string | Buffer;
  /** The payload's size when it is the file `PATH.deliveries/MESSAGE_ID`; 0 when the row holds it. */
  apart: number;
  attempts: number;
  next_at: number;
}

/**
 * Deliveries in the job file (`--job-store sqlite:`), on a connection of their own (WAL lets
 * two in one process). The writes of one turn of the event loop share a commit (a commit each
 * cost two thirds of the jobs/s): a submit is answered once its subscription's is done
 * (`persisted`), like its job's; a delivery's write lost to a crash comes with its job's end
 * lost too (the job journal groups those over 10 ms), so the job runs again and says it again.
 *
 * A payload of APART_BYTES or more (a large result's `completed`) is a file of its own,
 * `PATH.deliveries/MESSAGE_ID`, as a job's large values are (job-value-files.ts): written
 * into the row, SQLite's log took it in and out again, half the gateway's work on a job with
 * a 2 MB result and a webhook (bench/RESULTS.md run 17). The file is written before its row's
 * commit (whole: written aside, then renamed into place) and removed after the commit that
 * drops the row; one no row names is removed at the next start, and a row whose file is gone
 * or shorter than the row says (a power cut) loses that delivery, which the start says.
 */
export class SqliteDeliveryLog implements DeliveryLog {
  private readonly statements;
  private readonly writes: SqliteWriteGroups;
  private readonly directory: string;
  /** Payload files of rows dropped by the writes not yet committed: removed once they are. */
  private dropped: string[] = [];

  constructor(
    private readonly db: BetterSqlite3.Database,
    path: string,
    private readonly now: () => number = Date.now,
    private readonly warn: (message: string) => void = () => {},
  ) {
    this.directory = `${path}.deliveries`;
    // Every write is `soon` (committed at the end of its turn), so there is no later group.
    this.writes = new SqliteWriteGroups(db, {
      where: `--job-store sqlite:${path}`,
      consequence: "the job's webhook was not recorded",
      laterMs: 0,
      // A failed commit kept its rows, and so their files.
      afterCommit: (error) => {
        const dropped = this.dropped;
        this.dropped = [];
        if (error === null) for (const messageId of dropped) this.removeFile(messageId);
      },
    });
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('busy_timeout = 5000');
    db.exec(SCHEMA);
    addApartColumn(db);
    this.statements = {
      subscribe: db.prepare(
        "INSERT OR REPLACE INTO webhook_subscriptions (job_id, owner, url, events, base_url, status, attempts, updated_at) VALUES (?, ?, ?, ?, ?, 'pending', 0, ?)",
      ),
      enqueue: db.prepare('INSERT INTO webhook_deliveries (message_id, job_id, event, payload, apart, attempts, next_at) VALUES (?, ?, ?, ?, ?, ?, ?)'),
      replace: db.prepare('UPDATE webhook_deliveries SET payload = ?, apart = ? WHERE message_id = ?'),
      apartOfJob: db.prepare('SELECT message_id FROM webhook_deliveries WHERE job_id = ? AND apart > 0').pluck(),
      attempted: db.prepare('UPDATE webhook_deliveries SET attempts = ?, next_at = ? WHERE message_id = ?'),
      done: db.prepare('DELETE FROM webhook_deliveries WHERE message_id = ?'),
      state: db.prepare('UPDATE webhook_subscriptions SET status = ?, attempts = ?, last_event = ?, last_error = ?, updated_at = ? WHERE job_id = ?'),
      forgetDeliveries: db.prepare('DELETE FROM webhook_deliveries WHERE job_id = ?'),
      forget: db.prepare('DELETE FROM webhook_subscriptions WHERE job_id = ?'),
    };
  }

  /** Opens the job file's path; the job journal has already made and checked it. */
  static open(path: string, warn?: (message: string) => void): SqliteDeliveryLog {
    const Database = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
    return new SqliteDeliveryLog(new Database(path), path, Date.now, warn);
  }

  subscribe(subscription: Subscription): void {
    const { jobId, owner, url, events, baseUrl } = subscription;
    const at = this.now();
    this.writes.soon(() => this.statements.subscribe.run(jobId, owner, url, events.join(','), baseUrl, at));
  }

  persisted(): Promise<void> {
    return this.writes.persisted();
  }

  enqueue(delivery: Delivery): void {
    const { messageId, jobId, event, payload, attempts, nextAt } = delivery;
    const apart = this.writeFile(messageId, payload);
    this.writes.soon(() => this.statements.enqueue.run(messageId, jobId, event, apart > 0 ? '' : payload, apart, attempts, nextAt));
  }

  replace(messageId: string, payload: string | Buffer): void {
    const apart = this.writeFile(messageId, payload);
    this.writes.soon(() => {
      // A large payload it replaces has its file overwritten; a small one leaves the file to go.
      if (apart === 0) this.dropped.push(messageId);
      this.statements.replace.run(apart > 0 ? '' : payload, apart, messageId);
    });
  }

  attempted(messageId: string, attempts: number, nextAt: number): void {
    this.writes.soon(() => this.statements.attempted.run(attempts, nextAt, messageId));
  }

  done(messageId: string): void {
    this.writes.soon(() => {
      this.dropped.push(messageId);
      this.statements.done.run(messageId);
    });
  }

  state(jobId: string, state: DeliveryState): void {
    const { status, attempts, lastEvent, lastError } = state;
    const at = this.now();
    this.writes.soon(() => this.statements.state.run(status, attempts, lastEvent, lastError, at, jobId));
  }

  forget(jobId: string): void {
    this.writes.soon(() => {
      this.dropped.push(...(this.statements.apartOfJob.all(jobId) as string[]));
      this.statements.forgetDeliveries.run(jobId);
      this.statements.forget.run(jobId);
    });
  }

  load(): ReturnType<DeliveryLog['load']> {
    this.writes.flush();
    const subscriptions = (this.db.prepare('SELECT * FROM webhook_subscriptions ORDER BY updated_at').all() as SubscriptionRow[]).map((row) => ({
      subscription: { jobId: row.job_id, owner: row.owner, url: row.url, events: row.events.split(',') as WebhookEvent[], baseUrl: row.base_url },
      state: { status: row.status, attempts: row.attempts, lastEvent: row.last_event, lastError: row.last_error },
      updatedAt: row.updated_at,
    }));
    const rows = this.db.prepare('SELECT * FROM webhook_deliveries ORDER BY seq').all() as DeliveryRow[];
    this.removeUnnamedFiles(new Set(rows.filter((row) => row.apart > 0).map((row) => row.message_id)));
    const deliveries = rows.flatMap((row) => {
      const payload = row.apart > 0 ? this.readFile(row) : row.payload;
      if (payload === null) return [];
      return [{ messageId: row.message_id, jobId: row.job_id, event: row.event, payload, attempts: row.attempts, nextAt: row.next_at }];
    });
    return { subscriptions, deliveries };
  }

  close(): void {
    this.writes.flush();
    this.db.close();
  }

  /** The size of `payload` when it went to its file (large, and written); 0 when the row holds it. */
  private writeFile(messageId: string, payload: string | Buffer): number {
    const bytes = Buffer.byteLength(payload);
    if (bytes < APART_BYTES || !MESSAGE_ID.test(messageId)) return 0;
    const file = join(this.directory, messageId);
    try {
      mkdirSync(this.directory, { recursive: true, mode: 0o700 });
      // Whole or not at all, even over the file of the payload it replaces.
      writeFileSync(file + PART, payload, { mode: 0o600 });
      renameSync(file + PART, file);
      return bytes;
    } catch {
      // A full disk: the row holds it, as it did before files (a failed write leaves no part behind).
      this.removeFile(messageId + PART);
      return 0;
    }
  }

  private readFile(row: DeliveryRow): Buffer | null {
    try {
      return readWhole(join(this.directory, row.message_id), row.apart);
    } catch (error) {
      if (!(error instanceof MissingValueFile)) throw error;
      this.warn(`${error.message}: the ${row.event} event of job ${row.job_id} is not delivered`);
    }
    this.writes.soon(() => {
      this.dropped.push(row.message_id);
      this.statements.done.run(row.message_id);
    });
    return null;
  }

  /** Files of deliveries the process was killed between writing and committing (or dropping and removing). */
  private removeUnnamedFiles(named: ReadonlySet<string>): void {
    let names: string[];
    try {
      names = readdirSync(this.directory);
    } catch {
      return; // none made yet
    }
    for (const name of names) {
      const messageId = name.endsWith(PART) ? name.slice(0, -PART.length) : name;
      if (MESSAGE_ID.test(messageId) && (name !== messageId || !named.has(name))) this.removeFile(name);
    }
  }

  /** Never written (a small payload) or already gone is no error. */
  private removeFile(name: string): void {
    removeQuietly(join(this.directory, name));
  }
}

/** A job file made before payloads had files of their own gets the column. */
function addApartColumn(db: BetterSqlite3.Database): void {
  const columns = db.prepare('PRAGMA table_info(webhook_deliveries)').all() as Array<{ name: string }>;
  if (!columns.some((column) => column.name === 'apart')) db.exec('ALTER TABLE webhook_deliveries ADD COLUMN apart INTEGER NOT NULL DEFAULT 0');
}
