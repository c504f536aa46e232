import { mkdir, stat, writeFile } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import { MediaResult } from '../client/index.js';
import { SvcError } from '../svc-error.js';

/** One media file of a result, where it goes, and its bytes. */
interface MediaFile {
  /** Where it sits in the result (`images[0]`, `mask`); empty for a result that is one file. */
  at: Array<string | number>;
  fileName: string | null;
  contentType: string | null;
  bytes: Uint8Array;
}

/** A file `-o` wrote. */
export interface WrittenFile {
  path: string;
  bytes: number;
  contentType: string | null;
}

/**
 * `-o PATH`: writes the media files of a result to disk, and returns the result with each
 * file replaced by the path it went to, for stdout. A result that is one file (the bytes a
 * server sent for `Accept`, or a media value `{file_name, content_type, content}`) goes to
 * PATH itself, or into it under its own name when PATH is a directory. A result that holds
 * files (a list, an object) makes PATH a directory, each file named after where it sits:
 * `mask.png`, `images-0.png`. A result without a file is an error: nothing is written.
 */
export async function saveMediaResults(result: unknown, path: string): Promise<{ printed: unknown; written: WrittenFile[] }> {
  const single = asMediaFile(result, []);
  if (single !== null) {
    const intoDirectory = await isDirectory(path);
    if (path.endsWith('/')) await mkdir(path, { recursive: true }).catch((error: unknown) => Promise.reject(notWritten(path, error)));
    const target = intoDirectory ? join(path, safeName(single.fileName) ?? `output${extensionOf(single)}`) : path;
    return { printed: target, written: [await save(target, single)] };
  }
  const files: MediaFile[] = [];
  const printedWith = (value: unknown, at: Array<string | number>): unknown => {
    const file = asMediaFile(value, at);
    if (file !== null) {
      files.push(file);
      return join(path, `${at.join('-')}${extensionOf(file)}`);
    }
    if (Array.isArray(value)) return value.map((item, index) => printedWith(item, [...at, index]));
    if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, printedWith(item, [...at, key])]));
    return value;
  };
  const printed = printedWith(result, []);
  if (files.length === 0) throw new SvcError('request-failed', `-o ${path}: the result holds no file to write (it is ${describe(result)}); nothing was written`, {}, { result });
  try {
    await mkdir(path, { recursive: true });
  } catch (error) {
    throw notWritten(path, error);
  }
  const written: WrittenFile[] = [];
  for (const file of files) written.push(await save(join(path, `${file.at.join('-')}${extensionOf(file)}`), file));
  return { printed, written };
}

function asMediaFile(value: unknown, at: Array<string | number>): MediaFile | null {
  if (value instanceof MediaResult) return { at, fileName: value.fileName, contentType: value.contentType, bytes: value.bytes };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const media = value as { file_name?: unknown; content_type?: unknown; content?: unknown };
  if (typeof media.content !== 'string' || !('content_type' in media)) return null;
  return {
    at,
    fileName: typeof media.file_name === 'string' ? media.file_name : null,
    contentType: typeof media.content_type === 'string' ? media.content_type : null,
    bytes: Buffer.from(media.content, 'base64'),
  };
}

/** `.png`: the file name's extension, else the content type's subtype when it is a plain word, else none. */
function extensionOf(file: MediaFile): string {
  const fromName = file.fileName === null ? '' : extname(file.fileName);
  if (fromName !== '') return fromName;
  const subtype = /^[a-z]+\/([a-z0-9]+)$/i.exec(file.contentType ?? '')?.[1]?.toLowerCase();
  if (subtype === undefined || subtype === 'octet') return '';
  return `.${subtype === 'jpeg' ? 'jpg' : subtype === 'mpeg' ? 'mp3' : subtype}`;
}

/** The last part of a name the server gave, never a path elsewhere; null when nothing is left. */
function safeName(fileName: string | null): string | null {
  const name = fileName === null ? '' : basename(fileName.replace(/\\/g, '/'));
  return name === '' || name === '.' || name === '..' ? null : name;
}

async function save(path: string, file: MediaFile): Promise<WrittenFile> {
  try {
    await writeFile(path, file.bytes);
  } catch (error) {
    throw notWritten(path, error);
  }
  return { path, bytes: file.bytes.byteLength, contentType: file.contentType };
}

async function isDirectory(path: string): Promise<boolean> {
  return path.endsWith('/') || (await stat(path).then((info) => info.isDirectory(), () => false));
}

function notWritten(path: string, error: unknown): SvcError {
  const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
  return new SvcError('io', `-o ${path}: cannot write it (${reason})`, { file: path });
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
