import { mkdirSync, readdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The values of a job's row that may be kept in a file of their own. */
export type ApartField = 'result' | 'args' | 'chunks';
const FIELDS: readonly ApartField[] = ['result', 'args', 'chunks'];

/** A value this large or larger is kept in a file (256 KiB: the commits that wrote such values were the ones that asked for a checkpoint). */
export const APART_BYTES = 256 * 1024;

/** The ids svc makes (job.ts): nothing else names a file, whatever a row says. */
const JOB_ID = /^[0-9a-f]{32}$/;

/** A value kept apart: where, and how many bytes its file must hold. */
type ApartSizes = Partial<Record<ApartField, number>>;

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
    for (const field of FIELDS) {
      const value = row[field];
      if (value === undefined || value === null || value.length < APART_BYTES || !JOB_ID.test(id)) continue;
      this.makeDirectory();
      writeFileSync(this.fileOf(id, field), value, { mode: 0o600 });
      sizes[field] = typeof value === 'string' ? Buffer.byteLength(value) : value.length;
      kept[field] = null;
    }
    return { ...row, ...kept, apart: formatApart(sizes) };
  }

  /** The fields an `apart` column names. */
  fieldsOf(apart: string | null): ApartField[] {
    return Object.keys(parseApart(apart)) as ApartField[];
  }

  /** The values an `apart` column names, from their files; throws MissingValueFile naming a file that is gone or short. */
  read(id: string, apart: string): Partial<Record<ApartField, Buffer>> {
    const values: Partial<Record<ApartField, Buffer>> = {};
    for (const [field, size] of Object.entries(parseApart(apart)) as Array<[ApartField, number]>) {
      const file = this.fileOf(id, field);
      let bytes: Buffer;
      try {
        bytes = readFileSync(file);
      } catch (error) {
        throw new MissingValueFile(`${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
      }
      if (bytes.length !== size) throw new MissingValueFile(`${file} holds ${bytes.length} bytes of the ${size} written`);
      values[field] = bytes;
    }
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

function formatApart(sizes: ApartSizes): string | null {
  const entries = Object.entries(sizes);
  return entries.length === 0 ? null : entries.map(([field, size]) => `${field}:${size}`).join(',');
}

function parseApart(apart: string | null): ApartSizes {
  const sizes: ApartSizes = {};
  for (const entry of apart === null || apart === '' ? [] : apart.split(',')) {
    const [field, size] = entry.split(':');
    if (FIELDS.includes(field as ApartField) && /^\d+$/.test(size ?? '')) sizes[field as ApartField] = Number(size);
    else throw new MissingValueFile(`the row's apart column names '${entry}', which is no value of a job`);
  }
  return sizes;
}
