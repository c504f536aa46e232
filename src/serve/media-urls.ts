import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { CancelSignal } from '../worker/cancel-signal.js';
import type { Value } from '../worker/protocol.js';
import { HttpError } from './http-error.js';
import type { Arguments } from './input-validation.js';

/** How the server fetches the URLs clients give for media parameters; null in GatewayOptions: it refuses them. */
export interface MediaUrlSettings {
  /** The most bytes one call's downloads may add up to: the upload limit, --max-body-size. */
  maxBytes: number;
  /** How long one download may take, from connecting to its last byte (--media-url-timeout). */
  timeoutMs: number;
}

/** Redirects followed, as a browser would follow a few (a CDN, a signed storage URL). */
const MAX_REDIRECTS = 5;
/** `scheme://...`: base64 has no `:`, and a data URL no `//`, so this is a URL the client meant to be fetched. */
const URL_TEXT = /^[a-z][a-z0-9+.-]*:\/\//i;
const FETCHED = /^https?:\/\//i;

/**
 * The arguments with every http(s) URL given for one of `parameters` (an endpoint's
 * mediaUrlParameters: name -> takes a list) downloaded into `dir` and replaced by a file
 * reference, as an upload is staged: what the apipod package advertises ("a file upload, a
 * URL, or a base64 string"). A download that
 * fails, or a URL of another scheme (file://), is a 422 naming the parameter and why. With
 * `settings` null, such a URL is refused with a 422 that says the server fetches none. A
 * download stops when `cancel` fires (the client left).
 */
export async function fetchMediaUrls(
  args: Arguments,
  parameters: ReadonlyMap<string, boolean>,
  { dir, mediaUrls: settings, cancel }: { dir: string; mediaUrls: MediaUrlSettings | null; cancel: CancelSignal },
): Promise<{ arguments: Arguments; stagedFiles: string[] }> {
  const fetched: Arguments = { ...args };
  const stagedFiles: string[] = [];
  let budget = settings?.maxBytes ?? 0;
  const fetchOne = async (field: string, url: string): Promise<Value> => {
    if (settings === null) throw urlRefused(field, 'this server fetches no URLs (svc start --no-media-urls); upload the file or send its base64');
    // file:, ftp:, s3: ... would otherwise reach the worker as base64 it cannot decode.
    if (!FETCHED.test(url.trim())) throw urlRefused(field, `cannot fetch ${url}: only http and https URLs are fetched`);
    const path = join(dir, randomUUID());
    stagedFiles.push(path);
    const download = await downloadTo(path, url, { ...settings, remainingBytes: budget }, cancel).catch((error: unknown) => {
      if (error instanceof DownloadError) throw urlRefused(field, `cannot fetch ${url}: ${error.message}`);
      throw notSaved(field, error);
    });
    budget -= download.bytes;
    return { $file: { path, file_name: download.fileName, content_type: download.contentType } };
  };
  try {
    for (const [name, repeated] of parameters) {
      const value = args[name];
      if (isUrl(value)) fetched[name] = await fetchOne(name, value);
      else if (repeated && Array.isArray(value)) {
        const items: Value[] = [];
        for (const [index, item] of value.entries()) items.push(isUrl(item) ? await fetchOne(`${name}[${index}]`, item) : item);
        fetched[name] = items;
      }
    }
  } catch (error) {
    await Promise.all(stagedFiles.map((path) => rm(path, { force: true })));
    throw error;
  }
  return { arguments: fetched, stagedFiles };
}

function isUrl(value: Value | undefined): value is string {
  return typeof value === 'string' && URL_TEXT.test(value.trim());
}

function urlRefused(field: string, message: string): HttpError {
  return new HttpError(422, 'validation_error', 'invalid_input', `invalid input: ${field}: ${message}`, { detail: [{ field, message }] });
}

/** The server's own disk failed (full, gone): its fault, not the URL's, and no temporary path for the client. */
function notSaved(field: string, error: unknown): HttpError {
  const code = (error as NodeJS.ErrnoException).code ?? 'an error';
  return new HttpError(500, 'internal_error', 'internal_error', `svc failed: the download for ${field} could not be saved on the server (${code})`);
}

/** Why a download failed, in words for the client. */
class DownloadError extends Error {}

interface Download {
  bytes: number;
  /** The last part of the URL's path, the file's name as a browser would save it; null when there is none. */
  fileName: string | null;
  /** The answer's Content-Type, null when it gave none or a generic one: the worker then tells it from the bytes. */
  contentType: string | null;
}

/**
 * Downloads `url` into `path`, following redirects between http(s) URLs, within the time
 * limit and the bytes the call's downloads may still take (`remainingBytes` of `maxBytes`),
 * until `cancel` fires. Every failure is a DownloadError.
 */
async function downloadTo(path: string, url: string, limits: MediaUrlSettings & { remainingBytes: number }, cancel: CancelSignal): Promise<Download> {
  const timeout = AbortSignal.timeout(limits.timeoutMs);
  const clientLeft = new AbortController();
  const leave = () => clientLeft.abort();
  cancel.addEventListener('abort', leave);
  if (cancel.aborted) leave();
  const signal = AbortSignal.any([timeout, clientLeft.signal]);
  const tooLarge = () => new DownloadError(`the call's downloads pass the ${limits.maxBytes / 2 ** 20} MiB limit (svc start --max-body-size)`);
  try {
    let current = new URL(url.trim());
    for (let redirects = 0; ; redirects++) {
      const response = await fetch(current, { redirect: 'manual', signal });
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location !== null) {
        await response.body?.cancel();
        if (redirects === MAX_REDIRECTS) throw new DownloadError(`it redirects more than ${MAX_REDIRECTS} times`);
        current = new URL(location, current);
        if (current.protocol !== 'http:' && current.protocol !== 'https:') throw new DownloadError(`it redirects to ${current.href}; only http and https URLs are fetched`);
        continue;
      }
      if (!response.ok) {
        await response.body?.cancel();
        throw new DownloadError(`the server answered ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`);
      }
      const declared = Number(response.headers.get('content-length') ?? Number.NaN);
      if (declared > limits.remainingBytes) {
        await response.body?.cancel();
        throw tooLarge();
      }
      const bytes = await saveBody(response, path, limits.remainingBytes, tooLarge);
      return { bytes, fileName: fileNameOf(current), contentType: contentTypeOf(response.headers.get('content-type')) };
    }
  } catch (error) {
    if (error instanceof DownloadError || isErrorOfFile(error, path)) throw error;
    if (clientLeft.signal.aborted) throw new DownloadError('the client left');
    if (timeout.aborted) throw new DownloadError(`no complete answer within ${limits.timeoutMs / 1000} s`);
    throw new DownloadError(reasonOf(error));
  } finally {
    cancel.removeEventListener('abort', leave);
  }
}

async function saveBody(response: Response, path: string, maxBytes: number, tooLarge: () => Error): Promise<number> {
  let bytes = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      done(bytes > maxBytes ? tooLarge() : null, chunk);
    },
  });
  const body = response.body ? Readable.fromWeb(response.body as WebReadableStream<Uint8Array>) : Readable.from([]);
  await pipeline(body, counter, createWriteStream(path));
  return bytes;
}

function fileNameOf(url: URL): string | null {
  const last = url.pathname.split('/').at(-1) ?? '';
  try {
    return decodeURIComponent(last) || null;
  } catch {
    return last || null;
  }
}

function contentTypeOf(header: string | null): string | null {
  const type = header?.split(';')[0]?.trim().toLowerCase() ?? '';
  return type === '' || type === 'application/octet-stream' ? null : type;
}

function isErrorOfFile(error: unknown, path: string): boolean {
  return error instanceof Error && (error as NodeJS.ErrnoException).path === path;
}

/** fetch's "fetch failed" holds the reason in its cause: a refused connection, an unknown host. */
function reasonOf(error: unknown): string {
  const cause = error instanceof Error ? (error.cause as { code?: string; message?: string } | undefined) : undefined;
  if (cause?.code === 'ECONNREFUSED') return 'the connection was refused';
  if (cause?.code === 'ENOTFOUND') return 'the host is unknown';
  // OpenSSL's messages end in a line break.
  return (cause?.message ?? (error instanceof Error ? error.message : String(error))).trim();
}
