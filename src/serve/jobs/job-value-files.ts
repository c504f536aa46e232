import { mkdirSync, readdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { JsonText } from '../../worker/json-text.js';

/** The values of a job's row that may be kept in a file of their own. */
export type ApartField = 'result' | 'args' | 'chunks';
export const APART_FIELDS: readonly ApartField[] = ['result', 'args', 'chunks'];

/** A value this large or larger is kept in a file (256 KiB: the commits that wrote such values were the ones that asked for a checkpoint). */
export const APART_BYTES = 256 * 1024;

/** The ids svc makes (job.ts): nothing else names a file, whatever a row says. */
const JOB_ID = /^[0-9a-f]{32}$/;

/** The values of a row kept apart, and how many bytes each one's file must hold. */
export type ApartSizes = Partial<Record<ApartField, number>>;

type RowValues = { [field in ApartField]?: string | Buffer | null };

/** A value a row names as kept apart whose file is gone or cut short (a file removed by hand, or a power cut before it was written out). */
export class MissingValueFile extends Error {}

/**
 * A SQLite job store's large values (a job's result, arguments or chunks of APART_BYTES or
 * more) in files beside its file, `PATH.values/ID.FIELD`, their row holding null and, in its
 * column `apart`, which values are kept so and their sizes (`result:2097152`). In a row, SQLite
 * wrote a 2 MB result in ~5 ms of the event loop, copied it back from its log in ~10 ms of a
 * thread's CPU, and wrote freed pages again to delete it (bench/RESULTS.md run 16); a file is
 * one write and one unlink. Neither is synced to disk at each job: like the rows
 * (synchronous=NORMAL), a value survives the process being killed, and a power cut may lose
 * the last ones, which the size in the row then tells (MissingValueFile).
 *
 * A value's file is written before the commit of its row, and removed after the commit that
 * drops it: a row never names a file that was not written. A file no row names (the process
 * killed between the two) is removed at the next start (`removeUnnamed`).
 */
export class JobValueFiles {
  private hasDirectory = false;

  constructor(readonly directory: string) {}

  /** Beside the SQLite file at `path`. */
  static beside(path: string): JobValueFiles {
    return new JobValueFiles(`${path}.values`);
  }

  /**
   * Writes the large values of the row of job `id` to their files; returns the row with those
   * values null, and `apart`, the column that names them (null when none is).
   */
  writeLarge<Row extends RowValues>(id: string, row: Row): Row & { apart: string | null } {
    const sizes: ApartSizes = {};
    const kept: RowValues = {};
    for (const field of APART_FIELDS) {
      const value = row[field];
      if (value === undefined || value === null || value.length < APART_BYTES || !JOB_ID.test(id)) continue;
      this.makeDirectory();
      const file = this.fileOf(id, field);
      try {
        writeFileSync(file, value, { mode: 0o600 });
      } catch (error) {
        // A full disk: no part of a value is left that no row names.
        removeQuietly(file);
        throw error;
      }
      sizes[field] = typeof value === 'string' ? Buffer.byteLength(value) : value.length;
      kept[field] = null;
    }
    return { ...row, ...kept, apart: formatApart(sizes) };
  }

  /** The values an `apart` column names, and their sizes. */
  sizesOf(apart: string | null): ApartSizes {
    return parseApart(apart);
  }

  /**
   * What reads a result kept in its file each time it is sent (from the page cache, as a rule):
   * a job kept readable after its end then holds none of its bytes in the gateway's memory,
   * where V8 counts a large buffer that outlives its young collections towards a full one
   * (JsonText.keepElsewhere).
   */
  resultReader(id: string, size: number): () => readonly Buffer[] {
    const file = this.fileOf(id, 'result');
    return () => [readWhole(file, size)];
  }

  /**
   * The values an `apart` column names: the arguments and chunks read from their files, the
   * result as a text read from its file when sent; throws MissingValueFile naming a file that
   * is gone or short.
   */
  read(id: string, apart: string): { result?: JsonText; args?: Buffer; chunks?: Buffer } {
    const { result, ...others } = parseApart(apart);
    const values: { result?: JsonText; args?: Buffer; chunks?: Buffer } = {};
    if (result !== undefined) {
      // Not read: it is sent from its file when asked for.
      const file = this.fileOf(id, 'result');
      let size: number;
      try {
        size = statSync(file).size;
      } catch (error) {
        throw unreadable(file, error);
      }
      if (size !== result) throw cutShort(file, size, result);
      values.result = JsonText.keptElsewhere(result, this.resultReader(id, result));
    }
    for (const [field, size] of Object.entries(others) as Array<['args' | 'chunks', number]>) values[field] = readWhole(this.fileOf(id, field), size);
    return values;
  }

  /** Removes the files of these values of job `id`; one already gone is no error. */
  remove(id: string, fields: readonly ApartField[]): void {
    for (const field of fields) {
      try {
        unlinkSync(this.fileOf(id, field));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    }
  }

  /** Removes the files of these values of job `id` if it can; one left is removed at the next start. */
  removeQuietly(id: string, fields: readonly ApartField[]): void {
    for (const field of fields) removeQuietly(this.fileOf(id, field));
  }

  /** Removes every file that `named` (job id -> its values kept apart) does not name; how many it removed. */
  removeUnnamed(named: ReadonlyMap<string, readonly ApartField[]>): number {
    let names: string[];
    try {
      names = readdirSync(this.directory);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw error;
    }
    let removed = 0;
    for (const name of names) {
      const [id = '', field, ...rest] = name.split('.');
      if (rest.length === 0 && named.get(id)?.includes(field as ApartField) === true) continue;
      unlinkSync(join(this.directory, name));
      removed += 1;
    }
    return removed;
  }

  private fileOf(id: string, field: ApartField): string {
    return join(this.directory, `${id}.${field}`);
  }

  private makeDirectory(): void {
    if (this.hasDirectory) return;
    try {
      // Beside the SQLite file, whose directory exists.
      mkdirSync(this.directory, { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    this.hasDirectory = true;
  }
}

/** Best effort: a file left is removed at the next start. */
export function removeQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // Gone already, or not removable now.
  }
}

/** A value's file, which must hold `size` bytes; throws MissingValueFile naming it when it is gone or short. */
export function readWhole(file: string, size: number): Buffer {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    throw unreadable(file, error);
  }
  if (bytes.length !== size) throw cutShort(file, bytes.length, size);
  return bytes;
}

function unreadable(file: string, error: unknown): MissingValueFile {
  return new MissingValueFile(`${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
}

function cutShort(file: string, size: number, written: number): MissingValueFile {
  return new MissingValueFile(`${file} holds ${size} bytes of the ${written} written`);
}

function formatApart(sizes: ApartSizes): string | null {
  const entries = Object.entries(sizes);
  return entries.length === 0 ? null : entries.map(([field, size]) => `${field}:${size}`).join(',');
}

function parseApart(apart: string | null): ApartSizes {
  const sizes: ApartSizes = {};
  for (const entry of apart === null || apart === '' ? [] : apart.split(',')) {
    const [field, size] = entry.split(':');
    if (APART_FIELDS.includes(field as ApartField) && /^\d+$/.test(size ?? '')) sizes[field as ApartField] = Number(size);
    else throw new MissingValueFile(`the row's apart column names '${entry}', which is no value of a job`);
  }
  return sizes;
}
