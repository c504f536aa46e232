import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { Delivery } from '../../src/serve/webhooks/delivery-log.js';
import { SqliteDeliveryLog } from '../../src/serve/webhooks/sqlite-delivery-log.js';

const LARGE = Buffer.from(`{"event":"completed","result":"${'x'.repeat(300_000)}"}`);
const messageId = (n: number) => `msg_${String(n).padStart(32, '0')}`;
const delivery = (n: number, payload: string | Buffer): Delivery => ({ messageId: messageId(n), jobId: `job-${n}`, event: 'completed', payload, attempts: 0, nextAt: 0 });

/** The log at `path` after these deliveries were queued in it, and it was closed. */
function written(path: string, ...deliveries: Delivery[]): void {
  const log = SqliteDeliveryLog.open(path);
  for (const queued of deliveries) log.enqueue(queued);
  log.close();
}

/** What the next start finds in the log at `path` (which it then closes). */
function loaded(path: string, warn?: (message: string) => void): Delivery[] {
  const log = SqliteDeliveryLog.open(path, warn);
  const { deliveries } = log.load();
  log.close();
  return deliveries;
}

describe('webhook deliveries in the job file: a large payload in a file of its own', () => {
  const dirs: string[] = [];
  const jobFile = () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-deliveries-'));
    dirs.push(dir);
    return join(dir, 'jobs.sqlite');
  };
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('keeps a large payload in its file, gives it back at the next start, and removes the file once the delivery is done', () => {
    const path = jobFile();
    written(path, delivery(1, LARGE), delivery(2, '{"event":"started"}'));
    expect(readdirSync(`${path}.deliveries`)).toEqual([messageId(1)]);
    const db = new Database(path);
    expect(db.prepare('SELECT payload, apart FROM webhook_deliveries WHERE message_id = ?').get(messageId(1))).toEqual({ payload: '', apart: LARGE.length });
    db.close();

    const again = SqliteDeliveryLog.open(path);
    const payloads = new Map(again.load().deliveries.map((kept) => [kept.messageId, Buffer.from(kept.payload)]));
    expect([...payloads.keys()]).toEqual([messageId(1), messageId(2)]);
    expect(payloads.get(messageId(1))?.equals(LARGE)).toBe(true);
    expect(payloads.get(messageId(2))?.toString()).toBe('{"event":"started"}');
    again.done(messageId(1));
    again.close();
    expect(readdirSync(`${path}.deliveries`)).toEqual([]);
  });

  it('removes the file of a job it forgets, and of a payload replaced by a small one', () => {
    const path = jobFile();
    written(path, delivery(1, LARGE), delivery(2, LARGE));
    const again = SqliteDeliveryLog.open(path);
    again.forget('job-1');
    again.replace(messageId(2), '{"event":"completed","result":"small"}');
    again.close();
    expect(readdirSync(`${path}.deliveries`)).toEqual([]);
    expect(loaded(path).map((kept) => [kept.messageId, String(kept.payload)])).toEqual([[messageId(2), '{"event":"completed","result":"small"}']]);
  });

  it('at a start, removes files no delivery names, and drops a delivery whose file is gone or cut short, saying so', () => {
    const path = jobFile();
    written(path, delivery(1, LARGE), delivery(2, LARGE));
    const files = `${path}.deliveries`;
    writeFileSync(join(files, messageId(9)), 'left by a killed server');
    writeFileSync(join(files, `${messageId(8)}.part`), 'cut short while written');
    rmSync(join(files, messageId(1)));
    writeFileSync(join(files, messageId(2)), LARGE.subarray(0, 1000)); // a power cut
    const warnings: string[] = [];
    expect(loaded(path, (message) => warnings.push(message))).toEqual([]);
    expect(readdirSync(files)).toEqual([]);
    expect(warnings).toEqual([
      `${files}/${messageId(1)} cannot be read (ENOENT): the completed event of job job-1 is not delivered`,
      `${files}/${messageId(2)} holds 1000 bytes of the ${LARGE.length} written: the completed event of job job-2 is not delivered`,
    ]);
    // The dropped deliveries' rows went with them: the start after says nothing.
    expect(loaded(path, (message) => warnings.push(message))).toEqual([]);
    expect(warnings).toHaveLength(2);
  });

  it('opens a job file written before payloads had files, and reads its deliveries', () => {
    const path = jobFile();
    const old = new Database(path);
    old.exec(`CREATE TABLE webhook_deliveries (seq INTEGER PRIMARY KEY AUTOINCREMENT, message_id TEXT NOT NULL UNIQUE, job_id TEXT NOT NULL,
      event TEXT NOT NULL, payload TEXT NOT NULL, attempts INTEGER NOT NULL, next_at INTEGER NOT NULL)`);
    old.prepare('INSERT INTO webhook_deliveries (message_id, job_id, event, payload, attempts, next_at) VALUES (?, ?, ?, ?, ?, ?)').run(messageId(1), 'job-1', 'completed', LARGE, 2, 5);
    old.close();
    const [kept] = loaded(path);
    expect(kept).toMatchObject({ messageId: messageId(1), attempts: 2, nextAt: 5 });
    expect(Buffer.from(kept!.payload).equals(LARGE)).toBe(true);
  });
});
