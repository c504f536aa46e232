import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { JobStore } from '../../src/serve/jobs/job-store.js';
import { SqliteCheckpointer } from '../../src/serve/jobs/sqlite-checkpointer.js';
import { JsonText, PlainStringText } from '../../src/worker/json-text.js';
import { SqliteJobJournal } from '../../src/serve/jobs/sqlite-job-journal.js';
import { APART_BYTES } from '../../src/serve/jobs/job-value-files.js';
import type { Job } from '../../src/serve/jobs/job.js';

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

/** Closes `journal` and opens its file again, as the next server does. */
function reopen(journal: SqliteJobJournal, path: string): SqliteJobJournal {
  journal.close();
  opened.splice(opened.indexOf(journal), 1);
  const next = SqliteJobJournal.open(path);
  opened.push(next);
  return next;
}

/**
 * Whether every commit in the log has been copied back into the file: the log's index (the
 * `-shm` file, little-endian here) holds the last frame written at byte 16 (mxFrame) and the
 * last one copied back at byte 96 (nBackfill).
 */
function logCopiedBack(path: string): boolean {
  const index = readFileSync(`${path}-shm`).subarray(0, 100);
  return index.readUInt32LE(16) > 0 && index.readUInt32LE(96) === index.readUInt32LE(16);
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

  it("copies a commit's log back into the file in a thread when its results come to much, so the next commit starts the log over", async () => {
    const { store, path } = openStore();
    const sizes = () => ({ file: statSync(path).size, log: statSync(`${path}-wal`).size });
    // Ten results a commit, each small enough to stay in its row (a large one has a file of its own).
    const each = APART_BYTES - 1024;
    const bytes = 10 * each;
    for (const [index, text] of ['a', 'b'].entries()) {
      for (let count = 0; count < 10; count++) {
        const job = store.create('/work', null, false, {});
        store.move(job, 'PROCESSING');
        store.move(job, 'FINISHED', { result: text.repeat(each) });
      }
      await store.persisted();
      // SQLite alone copies the log once it passes 4 MiB: a first 2.5 MB commit would stay in the log.
      await expect.poll(() => logCopiedBack(path), { timeout: 5000 }).toBe(true);
      expect(sizes().file).toBeGreaterThanOrEqual((index + 1) * bytes);
    }
    // The second commit was written over the first's log, not after it.
    expect(sizes().log).toBeLessThan(1.5 * bytes);
    expect(rowsOnDisk(path).map((row) => row.result?.length)).toEqual(Array(20).fill(each + 2));
  });

  it("copies the log back in the thread too once many commits' results come to much together (embeddings, one a commit)", async () => {
    const { store, path } = openStore();
    // A 1,536-float embedding's JSON is ~30 KB: ten commits of one pass what asks for a copy, and SQLite alone waits for 4 MiB.
    for (let count = 0; count < 10; count++) {
      const job = store.create('/embed', null, false, {});
      store.move(job, 'PROCESSING');
      store.move(job, 'FINISHED', { result: 'e'.repeat(30_000) });
      await store.persisted();
    }
    await expect.poll(() => logCopiedBack(path), { timeout: 5000 }).toBe(true);
  });

  it('keeps a large result in a file of its own beside the SQLite file, out of its log, and gives it back to the next server', async () => {
    const { store, journal, path } = openStore();
    const text = `é ${'r'.repeat(2 * 2 ** 20)}`;
    const job = store.create('/work', null, false, {});
    store.move(job, 'PROCESSING');
    store.move(job, 'FINISHED', { result: { text } });
    await store.persisted();
    expect(rowsOnDisk(path)).toEqual([{ id: job.id, status: 'FINISHED', result: null, args: null, runs: 1, read: 0 }]);
    expect(JSON.parse(readFileSync(`${path}.values/${job.id}.result`, 'utf8'))).toEqual({ text });
    expect(statSync(`${path}-wal`).size).toBeLessThan(2 ** 20);
    // The server holds it no longer: it reads the file when the result is asked for.
    const kept = job.result as JsonText;
    expect(kept.length).toBe(Buffer.byteLength(JSON.stringify({ text })));
    writeFileSync(`${path}.values/${job.id}.result`, JSON.stringify({ text: text.toUpperCase() }));
    expect(kept.value).toEqual({ text: text.toUpperCase() });
    writeFileSync(`${path}.values/${job.id}.result`, JSON.stringify({ text }));

    const next = reopen(journal, path);
    const [loaded] = next.load();
    expect(loaded?.job.result instanceof JsonText ? loaded.job.result.value : null).toEqual({ text });
  });

  it("keeps a queued job's large arguments in a file until it ends, runs it again with them after a restart, then removes the file", async () => {
    const { store, journal, path } = openStore();
    const args = { text: 'x'.repeat(APART_BYTES), n: 1 };
    const job = store.create('/work', null, false, args);
    await store.persisted();
    const file = `${path}.values/${job.id}.args`;
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(args);
    expect(rowsOnDisk(path)).toEqual([{ id: job.id, status: 'PENDING', result: null, args: null, runs: 0, read: 0 }]);

    const next = reopen(journal, path);
    expect(next.load().map((loaded) => [loaded.job.id, loaded.args])).toEqual([[job.id, args]]);
    const store2 = new JobStore(RETENTION, Date.now, next);
    const again = store2.create('/work', null, false, {}); // the restart's own jobs go on being written
    // It runs again, and ends.
    Object.assign(job, { status: 'FINISHED', result: 'done', startedAt: Date.now(), finishedAt: Date.now() });
    next.started(job);
    next.ended(job);
    await store2.persisted();
    await new Promise((resolve) => setTimeout(resolve, 50)); // the end is a later write
    expect(existsSync(file)).toBe(false);
    expect(rowsOnDisk(path).map((row) => [row.id, row.status, row.args])).toEqual([[job.id, 'FINISHED', null], [again.id, 'PENDING', '{}']]);
  });

  it("keeps a generator's chunks that come to 256 KiB or more in a file, and gives them back to the next server", async () => {
    const { store, journal, path } = openStore();
    const chunks = ['a', 'b', 'c'].map((letter) => letter.repeat(100_000));
    const job = store.create('/words', null, true, {});
    store.move(job, 'PROCESSING');
    job.chunks.push(...chunks);
    store.move(job, 'FINISHED', { result: chunks });
    await store.persisted();
    expect(readdirSync(`${path}.values`).sort()).toEqual([`${job.id}.chunks`, `${job.id}.result`]);
    const next = reopen(journal, path);
    const [loaded] = next.load();
    expect(loaded?.job.chunks).toEqual(chunks);
    expect(loaded?.job.result instanceof JsonText ? loaded.job.result.value : null).toEqual(chunks);
  });

  it("removes a forgotten job's file once its row is deleted", async () => {
    const { store, journal, path } = openStore();
    const job = store.create('/work', null, false, {});
    store.move(job, 'PROCESSING');
    store.move(job, 'FINISHED', { result: 'r'.repeat(APART_BYTES) });
    await store.persisted();
    const file = `${path}.values/${job.id}.result`;
    expect(existsSync(file)).toBe(true);
    journal.forget(job.id);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(rowsOnDisk(path)).toEqual([]);
    expect(existsSync(file)).toBe(false);
  });

  it('drops at the next start, saying so, a job whose file is gone or cut short, and removes the files no job names', async () => {
    const { store, journal, path } = openStore();
    const [gone, short, kept] = ['a', 'b', 'c'].map((text) => {
      const job = store.create('/work', null, false, {});
      store.move(job, 'PROCESSING');
      store.move(job, 'FINISHED', { result: text.repeat(APART_BYTES) });
      return job;
    }) as [Job, Job, Job];
    await store.persisted();
    journal.close();
    opened.splice(opened.indexOf(journal), 1);
    rmSync(`${path}.values/${gone.id}.result`);
    truncateSync(`${path}.values/${short.id}.result`, 1000);
    // What a server killed between writing a file and committing its row leaves.
    writeFileSync(`${path}.values/${'f'.repeat(32)}.result`, '"never committed"');

    const warnings: string[] = [];
    const next = SqliteJobJournal.open(path, (message) => warnings.push(message));
    opened.push(next);
    expect(next.load().map((loaded) => loaded.job.id)).toEqual([kept.id]);
    expect(warnings).toEqual([
      `--job-store sqlite:${path}: job ${gone.id} (/work, FINISHED) is dropped: ${path}.values/${gone.id}.result cannot be read (ENOENT)`,
      `--job-store sqlite:${path}: job ${short.id} (/work, FINISHED) is dropped: ${path}.values/${short.id}.result holds 1000 bytes of the ${APART_BYTES + 2} written`,
      `--job-store sqlite:${path}: removed 2 file(s) of ${path}.values that no job named (left by a server that stopped while writing them)`,
    ]);
    expect(readdirSync(`${path}.values`)).toEqual([`${kept.id}.result`]);
    await new Promise((resolve) => setTimeout(resolve, 50)); // the dropped jobs' rows deleted
    expect(rowsOnDisk(path).map((row) => row.id)).toEqual([kept.id]);
  });

  it('gives a file written before values were kept apart the column that names them, and keeps its jobs', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'svc-journal-')), 'jobs.sqlite');
    const old = new Database(path);
    old.exec(
      'CREATE TABLE jobs (id TEXT PRIMARY KEY, endpoint TEXT NOT NULL, streams INTEGER NOT NULL, owner TEXT, status TEXT NOT NULL, progress REAL, message TEXT, ' +
        'result TEXT, error TEXT, chunks TEXT, args TEXT, created_at INTEGER NOT NULL, started_at INTEGER, finished_at INTEGER, runs INTEGER NOT NULL DEFAULT 0, read INTEGER NOT NULL DEFAULT 0)',
    );
    old.prepare("INSERT INTO jobs (id, endpoint, streams, status, result, created_at, runs) VALUES (?, '/work', 0, 'FINISHED', ?, 1, 1)").run('0'.repeat(32), '"old"');
    old.close();
    const journal = SqliteJobJournal.open(path);
    opened.push(journal);
    expect(journal.load().map((loaded) => [loaded.job.id, loaded.job.result])).toEqual([['0'.repeat(32), 'old']]);
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
