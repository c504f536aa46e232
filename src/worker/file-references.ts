import { realpathSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { sep } from 'node:path';
import { readTransitFile } from './transit-files.js';
import { isJsonObject, type FileReference, type MediaValue, type Value } from './protocol.js';

/** A `$file` reference the gateway will not follow: outside the file directory, or unreadable. */
export class FileReferenceError extends Error {
  override readonly name = 'FileReferenceError';
}

/** The files a value refers to are too large to answer with inline. */
export class ResultTooLarge extends Error {
  override readonly name = 'ResultTooLarge';
}

/** The base64 a call's result may still have inlined: a generator's chunks, its result, share one. */
export interface InlineBudget {
  maxChars: number;
  usedChars: number;
}

/**
 * Replaces every `$file` reference in a value by the inline media value it stands for
 * (`{file_name, content_type, content: base64}`), deleting each file once read.
 *
 * Only files inside `fileDir` (APIPOD_FILE_DIR) are followed: a value is user data, and an
 * endpoint that echoes its input must not let a client read or delete any file the gateway
 * can reach.
 *
 * The base64 inlined comes out of `budget` (the gateway answers with the whole result as one
 * JSON string); beyond it a ResultTooLarge is thrown. When it throws, every file the value
 * refers to is deleted: none is left in the directory.
 *
 * A value without any `$file` key, as most results are, comes back as it is, without the
 * asynchronous walk, which costs a promise per value.
 */
export async function inlineFileReferences(value: Value, fileDir: string, budget: InlineBudget): Promise<Value> {
  if (!mayHoldFileReferences(value)) return value;
  try {
    return await inlineAll(value, fileDir, { alreadyRead: new Map(), budget });
  } catch (error) {
    await deleteReferencedFiles(value, fileDir);
    throw error;
  }
}

interface Inlining {
  /** Files this value names more than once are read once. */
  alreadyRead: Map<string, MediaValue>;
  budget: InlineBudget;
}

async function inlineAll(value: Value, fileDir: string, inlining: Inlining): Promise<Value> {
  const reference = asFileReference(value);
  if (reference) {
    const known = inlining.alreadyRead.get(reference.path);
    if (known) return spend(known, inlining.budget);
    const path = insideDirectory(reference.path, fileDir);
    const content = await readTransitFile(path, (size) => {
      if (inlining.budget.usedChars + base64Chars(size) > inlining.budget.maxChars) throw tooLarge(inlining.budget);
    }).catch((error: unknown) => {
      if (error instanceof ResultTooLarge) throw error;
      throw new FileReferenceError(`cannot read the worker's file ${reference.path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    });
    const inline = mediaValueOf(reference.file_name, reference.content_type, content);
    inlining.alreadyRead.set(reference.path, inline);
    return spend(inline, inlining.budget);
  }
  // One reference at a time, so a file named twice is read once.
  if (Array.isArray(value)) {
    const items: Value[] = [];
    for (const item of value) items.push(await inlineAll(item, fileDir, inlining));
    return items;
  }
  if (isJsonObject(value)) {
    const entries: [string, Value][] = [];
    for (const [key, item] of Object.entries(value)) {
      entries.push([key, await inlineAll(item, fileDir, inlining)]);
    }
    return Object.fromEntries(entries);
  }
  return value;
}

/** The bytes of the media values made from files here, which an answer as the file sends without base64. */
const mediaBytes = new WeakMap<object, Buffer>();

/** A media value whose `content` (base64) is made only when read: an answer as the file itself needs none. */
function mediaValueOf(fileName: string | null, contentType: string | null, bytes: Buffer): MediaValue {
  let content: string | undefined;
  const inline = { file_name: fileName, content_type: contentType } as MediaValue;
  // Read from the map, not held here: releaseMediaBytes must be able to let go of them.
  Object.defineProperty(inline, 'content', { enumerable: true, get: () => (content ??= heldBytes(inline).toString('base64')) });
  mediaBytes.set(inline, bytes);
  return inline;
}

function heldBytes(value: MediaValue): Buffer {
  const bytes = mediaBytes.get(value);
  if (bytes === undefined) throw new Error('a media value read after its bytes were released');
  return bytes;
}

/** The file's bytes behind a media value inlined from a `$file` reference, or undefined for any other value. */
export function mediaBytesOf(value: Value): Buffer | undefined {
  return typeof value === 'object' && value !== null ? mediaBytes.get(value) : undefined;
}

/**
 * The file's bytes behind `key` of a media value made from a `$file` reference: its
 * `content`, whose base64 is made only when read. A walker over a value asks this before it
 * reads a key, and writes or counts the bytes instead. Undefined for any other key or value.
 */
export function fileBytesAt(value: object, key: string): Buffer | undefined {
  return key === 'content' ? mediaBytes.get(value) : undefined;
}

/** Lets go of a media value's bytes once its answer is sent (serve/released-buffers.ts): reading them after is a bug. */
export function releaseMediaBytes(value: Value): void {
  if (typeof value === 'object' && value !== null) mediaBytes.delete(value);
}

function spend(inline: MediaValue, budget: InlineBudget): MediaValue {
  const chars = base64Chars(heldBytes(inline).length);
  if (budget.usedChars + chars > budget.maxChars) throw tooLarge(budget);
  budget.usedChars += chars;
  return inline;
}

function tooLarge(budget: InlineBudget): ResultTooLarge {
  const limit = `${((budget.maxChars * 3) / 4 / 2 ** 20).toFixed(1)} MiB`;
  return new ResultTooLarge(
    `the files in the result come to more than the ${limit} svc answers with inline: ` +
      'store large files elsewhere (a bucket, a shared disk) and return where they are',
  );
}

/** How many characters the base64 of `bytes` bytes takes. */
export function base64Chars(bytes: number): number {
  return Math.ceil(bytes / 3) * 4;
}

/** Deletes the files a value refers to inside `fileDir`, those not read yet. */
export async function deleteReferencedFiles(value: Value, fileDir: string): Promise<void> {
  const reference = isJsonObject(value) && isJsonObject(value.$file) && typeof value.$file.path === 'string' ? value.$file.path : null;
  if (reference !== null) {
    let path: string | null;
    try {
      path = insideDirectory(reference, fileDir);
    } catch {
      path = null;
    }
    if (path !== null) await rm(path, { force: true });
    return;
  }
  const items = Array.isArray(value) ? value : isJsonObject(value) ? Object.values(value) : [];
  for (const item of items) await deleteReferencedFiles(item, fileDir);
}

/** Whether a value holds any `$file` key anywhere. */
function mayHoldFileReferences(value: Value): boolean {
  if (Array.isArray(value)) return value.some(mayHoldFileReferences);
  if (!isJsonObject(value)) return false;
  for (const key in value) {
    if (key === '$file' || mayHoldFileReferences(value[key] as Value)) return true;
  }
  return false;
}

/** The reference a value stands for, when it is an object whose `$file` is an object (as the Python side reads it). */
function asFileReference(value: Value): FileReference['$file'] | null {
  if (!isJsonObject(value) || !isJsonObject(value.$file)) return null;
  const { path, file_name: fileName = null, content_type: contentType = null } = value.$file;
  if (typeof path !== 'string') throw new FileReferenceError('a $file reference without a path');
  return {
    path,
    file_name: typeof fileName === 'string' ? fileName : null,
    content_type: typeof contentType === 'string' ? contentType : null,
  };
}

function insideDirectory(path: string, directory: string): string {
  const realFile = realPathOr(path);
  const realDirectory = realpathSync.native(directory);
  if (!realFile.startsWith(realDirectory + sep)) {
    throw new FileReferenceError(`the worker referred to ${path}, which is outside the file directory ${directory}`);
  }
  return realFile;
}

function realPathOr(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    return path;
  }
}
