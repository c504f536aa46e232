import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import type { Delivery, DeliveryLog, DeliveryState, Subscription } from './delivery-log.js';
import type { WebhookEvent } from './webhook-events.js';
import { SqliteWriteGroups } from '../sqlite-write-groups.js';

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
  /** Text, or a BLOB of UTF-8 when it was written as bytes. */
  payload: string | Buffer;
  attempts: number;
  next_at: number;
}

/**
 * Deliveries in the job file (`--job-store sqlite:`), on a connection of their own (WAL lets
 * two in one process). The writes of one turn of the event loop share a commit (a commit each
 * cost two thirds of the jobs/s): a submit is answered once its subscription's is done
 * (`persisted`), like its job's; a delivery's write lost to a crash comes with its job's end
 * lost too (the job journal groups those over 10 ms), so the job runs again and says it again.
 */
export class SqliteDeliveryLog implements DeliveryLog {
  private readonly statements;
  private readonly writes: SqliteWriteGroups;

  constructor(
    private readonly db: BetterSqlite3.Database,
    path: string,
    private readonly now: () => number = Date.now,
  ) {
    // Every write is `soon` (committed at the end of its turn), so there is no later group.
    this.writes = new SqliteWriteGroups(db, { where: `--job-store sqlite:${path}`, consequence: "the job's webhook was not recorded", laterMs: 0 });
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('busy_timeout = 5000');
    db.exec(SCHEMA);
    this.statements = {
      subscribe: db.prepare(
        "INSERT OR REPLACE INTO webhook_subscriptions (job_id, owner, url, events, base_url, status, attempts, updated_at) VALUES (?, ?, ?, ?, ?, 'pending', 0, ?)",
      ),
      enqueue: db.prepare('INSERT INTO webhook_deliveries (message_id, job_id, event, payload, attempts, next_at) VALUES (?, ?, ?, ?, ?, ?)'),
      replace: db.prepare('UPDATE webhook_deliveries SET payload = ? WHERE message_id = ?'),
      attempted: db.prepare('UPDATE webhook_deliveries SET attempts = ?, next_at = ? WHERE message_id = ?'),
      done: db.prepare('DELETE FROM webhook_deliveries WHERE message_id = ?'),
      state: db.prepare('UPDATE webhook_subscriptions SET status = ?, attempts = ?, last_event = ?, last_error = ?, updated_at = ? WHERE job_id = ?'),
      forgetDeliveries: db.prepare('DELETE FROM webhook_deliveries WHERE job_id = ?'),
      forget: db.prepare('DELETE FROM webhook_subscriptions WHERE job_id = ?'),
    };
  }

  /** Opens the job file's path; the job journal has already made and checked it. */
  static open(path: string): SqliteDeliveryLog {
    const Database = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
    return new SqliteDeliveryLog(new Database(path), path);
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
    this.writes.soon(() => this.statements.enqueue.run(messageId, jobId, event, payload, attempts, nextAt));
  }

  replace(messageId: string, payload: string | Buffer): void {
    this.writes.soon(() => this.statements.replace.run(payload, messageId));
  }

  attempted(messageId: string, attempts: number, nextAt: number): void {
    this.writes.soon(() => this.statements.attempted.run(attempts, nextAt, messageId));
  }

  done(messageId: string): void {
    this.writes.soon(() => this.statements.done.run(messageId));
  }

  state(jobId: string, state: DeliveryState): void {
    const { status, attempts, lastEvent, lastError } = state;
    const at = this.now();
    this.writes.soon(() => this.statements.state.run(status, attempts, lastEvent, lastError, at, jobId));
  }

  forget(jobId: string): void {
    this.writes.soon(() => {
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
    const deliveries = (this.db.prepare('SELECT * FROM webhook_deliveries ORDER BY seq').all() as DeliveryRow[]).map((row) => ({
      messageId: row.message_id,
      jobId: row.job_id,
      event: row.event,
      payload: row.payload,
      attempts: row.attempts,
      nextAt: row.next_at,
    }));
    return { subscriptions, deliveries };
  }

  close(): void {
    this.writes.flush();
    this.db.close();
  }
}
