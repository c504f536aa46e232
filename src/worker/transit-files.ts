import { closeSync, fstatSync, openSync, readSync, rmSync, write, writeFileSync, writeSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';

/*
 * The files gateway and workers hand each other's payloads in (APIPOD_FILE_DIR: uploads,
 * decoded base64, media results) live for one call, in the page cache. One up to
 * AT_ONCE_BYTES is read or written at once on the event loop (~0.1 ms a MiB): through the
 * thread pool, each of open, fstat, read, write, close and unlink costs the call a hand-off
 * to a pool thread and a wake-up back, more than the copy itself (a 1.5 MB image in and out:
 * p50 4.8 -> 4.5 ms, bench/RESULTS.md). A larger file goes through the pool, so the event
 * loop keeps serving other requests meanwhile.
 */
const AT_ONCE_BYTES = 8 * 1024 * 1024;

export async function writeTransitFile(path: string, bytes: Buffer): Promise<void> {
  if (isWrittenAtOnce(bytes.length)) writeFileSync(path, bytes);
  else await writeFile(path, bytes);
}

/**
 * A transit file written as its bytes arrive (a multipart upload's part): its first
 * AT_ONCE_BYTES on the event loop, as writeTransitFile writes a file of that size; the rest
 * through the pool. Streamed to a write stream, each 64 KiB chunk was a hand-off to the pool
 * and back: 1-1.7 ms of the gateway's CPU for a 1.5 MB upload.
 */
export class TransitFileWriter {
  private readonly descriptor: number;
  /** The bytes written so far. */
  size = 0;

  constructor(readonly path: string) {
    this.descriptor = openSync(path, 'w');
  }

  /** Resolves once `bytes` are in the file; the caller may reuse them then. */
  async write(bytes: Buffer): Promise<void> {
    this.size += bytes.length;
    for (let offset = 0; offset < bytes.length; ) {
      offset += isWrittenAtOnce(this.size) ? writeSync(this.descriptor, bytes, offset) : await writeInPool(this.descriptor, bytes, offset);
    }
  }

  close(): void {
    closeSync(this.descriptor);
  }
}

const writeInPool = promisify((descriptor: number, bytes: Buffer, offset: number, done: (error: Error | null, written: number) => void) => {
  write(descriptor, bytes, offset, bytes.length - offset, null, (error, written) => done(error, written));
});

/** Whether a transit file of this size is written on the event loop (writeTransitFile): one that can be written without waiting. */
export function isWrittenAtOnce(size: number): boolean {
  return size <= AT_ONCE_BYTES;
}

/**
 * A transit file's bytes, deleted once read (or once it could not be). `checkSize` sees the
 * size before anything is read, and may throw to refuse it.
 */
export async function readTransitFile(path: string, checkSize: (bytes: number) => void): Promise<Buffer> {
  const descriptor = openSync(path, 'r');
  try {
    const { size } = fstatSync(descriptor);
    checkSize(size);
    if (size > AT_ONCE_BYTES) return await readFile(path);
    const content = Buffer.allocUnsafe(size);
    let read = 0;
    for (let got = -1; read < size && got !== 0; read += got) got = readSync(descriptor, content, read, size - read, read);
    return read === size ? content : content.subarray(0, read);
  } finally {
    closeSync(descriptor);
    rmSync(path, { force: true });
  }
}

/** Deletes the transit files a call's arguments were staged in, once the call has ended. */
export async function removeStagedFiles(paths: readonly string[]): Promise<void> {
  await Promise.all(paths.map((path) => rm(path, { force: true })));
}

/** The same at once: for a call that was never made. */
export function removeStagedFilesNow(paths: readonly string[]): void {
  for (const path of paths) rmSync(path, { force: true });
}
