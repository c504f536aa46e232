import { Worker } from 'node:worker_threads';

/**
 * Copies a SQLite file's write-ahead log back into the file (a checkpoint) in a thread of its
 * own, so that the event loop does not. SQLite checkpoints in the connection whose commit
 * takes the log past 1,000 pages (4 MiB): with 2 MB results that is every other job, and
 * each took that commit from ~3 to ~8 ms on average, up to 22 ms, the copy and its fsync
 * (bench/RESULTS.md). Every request waits while the event loop does.
 *
 * Asked once commits have written much (one commit of a large result, or many of medium
 * ones), the thread copies them while the event loop goes on; the next commit then finds the
 * log copied and writes it from its start again. The commit's own checkpoint stays as it was:
 * when the thread falls behind (commits quicker than their copies), the log still stops at
 * 4 MiB, and that checkpoint has little left to copy. Small jobs ask only once thousands of
 * them have written that much together, so a server of small jobs starts the thread (a few
 * MiB of memory) late, if ever.
 */
export class SqliteCheckpointer {
  private worker: Worker | null = null;
  private warned = false;

  constructor(
    private readonly path: string,
    /** Where better-sqlite3 is, for the thread's own require. */
    private readonly sqliteModule: string,
    private readonly warn: (message: string) => void,
  ) {}

  /** Checkpoints soon; asks made while one runs make one more. */
  request(): void {
    this.worker ??= this.start();
    this.worker.postMessage('checkpoint');
  }

  /** Lets the thread close its connection; does not wait for it (a checkpoint cut short by the process's exit is redone at the next open). */
  close(): void {
    this.worker?.postMessage('close');
    this.worker = null;
  }

  private start(): Worker {
    const worker = new Worker(THREAD_SOURCE, { eval: true, workerData: { path: this.path, sqliteModule: this.sqliteModule } });
    worker.unref(); // never what keeps a stopping server alive
    worker.on('message', (message: { error: string }) => this.failed(message.error));
    worker.on('error', (error) => this.failed(error.message));
    return worker;
  }

  private failed(reason: string): void {
    if (this.warned) return;
    this.warned = true;
    this.warn(`sqlite:${this.path}: its log cannot be copied back in a thread of its own (${reason}); the commits do it, as they would without`);
  }
}

// CommonJS run by `new Worker(source, { eval: true })`: bundled code has no file of its own to point a thread at.
const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
let db = null;
let scheduled = false;
function checkpoint() {
  scheduled = false;
  if (db === null) return;
  try {
    // PASSIVE: copies what it can without waiting for the event loop's writes, nor making them wait.
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch (error) {
    parentPort.postMessage({ error: error.message });
  }
}
try {
  const Database = require(workerData.sqliteModule);
  db = new Database(workerData.path, { fileMustExist: true });
} catch (error) {
  parentPort.postMessage({ error: error.message });
}
parentPort.on('message', (message) => {
  if (message === 'close') {
    if (db !== null) db.close();
    db = null;
    parentPort.close();
  } else if (!scheduled) {
    // Asks queued behind a running checkpoint make one more, not one each.
    scheduled = true;
    setImmediate(checkpoint);
  }
});
`;
