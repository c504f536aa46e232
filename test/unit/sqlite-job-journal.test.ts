import { mkdtempSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { JobStore } from '../../src/serve/jobs/job-store.js';
import { SqliteCheckpointer } from '../../src/serve/jobs/sqlite-checkpointer.js';
import { PlainStringText } from '../../src/worker/json-text.js';
import { SqliteJobJournal } from '../../src/serve/jobs/sqlite-job-journal.js';

const Database = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
const RETENTION = { ttlMs: 60_000, maxRetained: 100, maxRetainedBytes: 2 ** 20 };

interface Row {
  id: string;
  status: string;
  result: string | Buffer | null;
  args: string | Buffer | null;
  runs: number;
  read: number;
}

const opened: SqliteJobJournal[] = [];
afterEach(() => {
  for (const journal of opened.splice(0)) journal.close();
});

function openStore(): { store: JobStore; journal: SqliteJobJournal; path: string } {
  const path = join(mkdtempSync(join(tmpdir(), 'svc-journal-')), 'jobs.sqlite');
  const journal = SqliteJobJournal.open(path);
  opened.push(journal);
  return { store: new JobStore(RETENTION, Date.now, journal), journal, path };
}

/** The file as another process sees it now: what a crash at this moment would leave. */
function rowsOnDisk(path: string): Row[] {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare('SELECT id, status, result, args, runs, read FROM jobs ORDER BY created_at').all() as Row[];
  } finally {
    db.close();
  }
}

/** The rows on disk once they are `expected`, or as they are after two seconds (a status change may wait a few milliseconds). */
async function rowsOnDiskBecome(path: string, expected: Row[]): Promise<Row[]> {
  const deadline = Date.now() + 2000;
  let rows = rowsOnDisk(path);
  while (JSON.stringify(rows) !== JSON.stringify(expected) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    rows = rowsOnDisk(path);
  }
  return rows;
}

describe('jobs written to a SQLite file', () => {
  it('has a submitted job on disk once persisted resolves, and its start, end and read within a few milliseconds', async () => {
    const { store, path } = openStore();
    const job = store.create('/work', null, false, { n: 1 });
    await store.persisted();
    expect(rowsOnDisk(path)).toEqual([{ id: job.id, status: 'PENDING', result: null, args: '{"n":1}', runs: 0, read: 0 }]);

    store.move(job, 'PROCESSING');
    store.move(job, 'FINISHED', { result: 'done' });
    store.get(job.id, null);
    const ended = [{ id: job.id, status: 'FINISHED', result: '"done"', args: null, runs: 1, read: 1 }];
    expect(await rowsOnDiskBecome(path, ended)).toEqual(ended);
  });

  it('writes nothing of a job refused before its commit (a full queue)', async () => {
    const { store, path } = openStore();
    store.discard(store.create('/work', null, false, { n: 1 }));
    await store.persisted();
    expect(rowsOnDisk(path)).toEqual([]);
  });

  it('writes a job whose submit waits only when it is answered, as it is then: ended with its result, or unended with its arguments', async () => {
    const { store, path } = openStore();
    const quick = store.create('/work', null, false, { n: 1 }, true);
    const slow = store.create('/work', null, false, { n: 2 }, true);
    store.move(quick, 'PROCESSING');
    store.move(slow, 'PROCESSING');
    // A waiting client is answered with the result, so it counts as read.
    const waiting = store.waitUntilEnded(quick, 10_000);
    store.move(quick, 'FINISHED', { result: 42 });
    await waiting;
    await new Promise((resolve) => setTimeout(resolve, 50));
    // No client holds either id yet: a crash now loses calls nobody was told were accepted.
    expect(rowsOnDisk(path)).toEqual([]);

    await store.answering(quick);
    expect(rowsOnDisk(path)).toEqual([{ id: quick.id, status: 'FINISHED', result: '42', args: null, runs: 1, read: 1 }]);
    // Its wait ran out: answered still running, and on disk to run again after a crash.
    await store.answering(slow);
    expect(rowsOnDisk(path)).toContainEqual({ id: slow.id, status: 'PROCESSING', result: null, args: '{"n":2}', runs: 1, read: 0 });
  });

  it('gives the next server every job as it was left, and runs again those that had not ended', async () => {
    const { store, journal, path } = openStore();
    const ended = store.create('/work', null, false, { n: 1 });
    const running = store.create('/work', null, false, { n: 2 });
    await store.persisted();
    store.move(ended, 'PROCESSING');
    store.move(ended, 'FINISHED', { result: 'kept' });
    store.move(running, 'PROCESSING');
    journal.close();
    opened.splice(opened.indexOf(journal), 1);

    const next = SqliteJobJournal.open(path);
    opened.push(next);
    const loaded = next.load().map(({ job, args, runs, read }) => ({ id: job.id, status: job.status, result: job.result, args, runs, read }));
    expect(loaded.sort((a, b) => a.status.localeCompare(b.status))).toEqual([
      { id: ended.id, status: 'FINISHED', result: 'kept', args: null, runs: 1, read: false },
      { id: running.id, status: 'PROCESSING', result: null, args: { n: 2 }, runs: 1, read: false },
    ]);
  });

  it("counts a job read after its end was written as read at the next start, without writing its result again", async () => {
    const { store, journal, path } = openStore();
    const job = store.create('/work', null, false, {});
    store.move(job, 'PROCESSING');
    store.move(job, 'FINISHED', { result: 'r'.repeat(2 ** 20) });
    await store.persisted();
    await new Promise((resolve) => setTimeout(resolve, 50)); // its later writes (the end) committed
    // Each write of a job's row (and of the megabyte in it) from now on, counted by SQLite itself.
    const watcher = new Database(path);
    watcher.exec('CREATE TABLE rewrites (id TEXT); CREATE TRIGGER counted AFTER UPDATE ON jobs BEGIN INSERT INTO rewrites VALUES (new.id); END;');
    store.get(job.id, null);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(watcher.prepare('SELECT count(*) AS n FROM rewrites').get()).toEqual({ n: 0 });
    watcher.close();
    journal.close();
    opened.splice(opened.indexOf(journal), 1);
    const next = SqliteJobJournal.open(path);
    opened.push(next);
    expect(next.load().map(({ job: loaded, read }) => [loaded.id, loaded.status, read])).toEqual([[job.id, 'FINISHED', true]]);
  });

  it('writes a long string argument kept as its bytes as the string, and gives it back as one to the next server', async () => {
    const { store, journal, path } = openStore();
    const text = `é😀 ${'y'.repeat(100_000)} \u2028`;
    const job = store.create('/work', null, false, { text: new PlainStringText(Buffer.from(text)), n: 1 });
    await store.persisted();
    // Its JSON as UTF-8 bytes (a BLOB: a large value is not decoded into a string to be written).
    expect(rowsOnDisk(path).map((row) => String(row.args))).toEqual([JSON.stringify({ text, n: 1 })]);
    journal.close();
    opened.splice(opened.indexOf(journal), 1);
    const next = SqliteJobJournal.open(path);
    opened.push(next);
    expect(next.load().map(({ job: loaded, args }) => [loaded.id, args])).toEqual([[job.id, { text, n: 1 }]]);
  });

  it("copies a large result's log back into the file in a thread, so its next commit starts the log over", async () => {
    const { store, path } = openStore();
    const sizes = () => ({ file: statSync(path).size, log: statSync(`${path}-wal`).size });
    const bytes = 2 * 2 ** 20;
    for (const [index, text] of ['a', 'b'].entries()) {
      const job = store.create('/work', null, false, {});
      store.move(job, 'PROCESSING');
      store.move(job, 'FINISHED', { result: text.repeat(bytes) });
      await store.persisted();
      // SQLite alone copies the log once it passes 4 MiB: a first 2 MB result would stay in the log.
      const deadline = Date.now() + 5000;
      while (sizes().file < (index + 1) * bytes && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(sizes().file).toBeGreaterThanOrEqual((index + 1) * bytes);
    }
    // The second result was written over the first's log, not after it.
    expect(sizes().log).toBeLessThan(1.5 * bytes);
    expect(rowsOnDisk(path).map((row) => row.result?.length)).toEqual([bytes + 2, bytes + 2]);
  });

  it('says so once when the thread cannot copy the log, and the commits go on', async () => {
    const warnings: string[] = [];
    const checkpointer = new SqliteCheckpointer('/nonexistent/jobs.sqlite', createRequire(import.meta.url).resolve('better-sqlite3'), (message) => warnings.push(message));
    checkpointer.request();
    checkpointer.request();
    await expect.poll(() => warnings, { timeout: 5000 }).toHaveLength(1);
    expect(warnings[0]).toMatch(/^sqlite:\/nonexistent\/jobs\.sqlite: its log cannot be copied back in a thread of its own \(.+\); the commits do it, as they would without$/);
    checkpointer.close();
  });
});
