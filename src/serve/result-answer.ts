import type { HttpReply } from './http/http-reply.js';
import { mediaBytesOf } from '../worker/file-references.js';
import { JsonText } from '../worker/json-text.js';
import { isJsonObject, type Value } from '../worker/protocol.js';
import { chooseResultForm } from './accept-header.js';
import { HttpError } from './http-error.js';
import { sendJson, sendJsonText } from './json-reply.js';

/*
 * A result as the client asks for it with Accept, as BentoML answers a file: JSON by default,
 * or the bytes of the one media file a result is, with its content type; a client asking for
 * neither gets a 406 naming what there is.
 */

/** The one media file a result is (a returned ImageFile, bytes), or null for any other result. */
export function mediaTypeOf(result: Value | JsonText | null): string | null {
  // A text without the key is no media file: no need to parse it to know.
  if (result instanceof JsonText) return result.mayHoldKey('content_type') ? mediaTypeOf(result.value) : null;
  const value = result;
  // A file's bytes when it came as one (its base64 is then made only if read): not read here.
  const hasContent = mediaBytesOf(value) !== undefined || (isJsonObject(value) && typeof value.content === 'string');
  if (!isJsonObject(value) || !hasContent || !('content_type' in value)) return null;
  return typeof value.content_type === 'string' && value.content_type.includes('/') ? value.content_type.toLowerCase() : 'application/octet-stream';
}

/**
 * Sends `result` as JSON (written as the client reads it, json-reply.ts) or as its media bytes;
 * `subject` names it in a 406 ("the result of /grayscale"). A result still in the worker's
 * JSON text that has no `content_type` key is no media file, and goes out as that text.
 */
export function sendResult(reply: HttpReply, accept: string | undefined, result: Value | JsonText, subject: string, sendTimeoutMs: number): HttpReply {
  if (result instanceof JsonText && !result.mayHoldKey('content_type')) {
    if (chooseResultForm(accept, null) === 'none') throw notAcceptable(accept, subject, offeredAs(null));
    return sendJsonText(reply, result, sendTimeoutMs);
  }
  const value = result instanceof JsonText ? result.value : result;
  const mediaType = mediaTypeOf(value);
  const form = chooseResultForm(accept, mediaType);
  if (form === 'none') throw notAcceptable(accept, subject, offeredAs(mediaType));
  if (form === 'json' || mediaType === null || !isJsonObject(value)) {
    return sendJson(reply, value, sendTimeoutMs);
  }
  // Sent for every file, named or not: it tells a text file from a text answer.
  reply.header('content-disposition', contentDisposition(typeof value.file_name === 'string' ? value.file_name : null));
  return reply.type(mediaType).send(mediaBytesOf(value) ?? Buffer.from(value.content as string, 'base64'));
}

/** A 406 for an Accept that takes neither JSON nor the media type `subject` is `offered` as (offeredAs). */
export function notAcceptable(accept: string | undefined, subject: string, offered: string): HttpError {
  return new HttpError(406, 'not_acceptable', 'not_acceptable', `${subject} cannot be sent as ${JSON.stringify(accept ?? '')}: it is available as ${offered}`);
}

/** What a result can be sent as, in words: JSON, and its media type when it is one media file. */
export function offeredAs(mediaType: string | null): string {
  return mediaType === null ? 'JSON only (application/json): it is no single media file' : `${mediaType} (or ${mediaType.split('/')[0]}/*) or application/json`;
}

/**
 * Whether a call whose output schema is known can be answered as the Accept header asks,
 * checked before the call runs so that a client asking for a file of an endpoint that
 * returns none spends no compute: a 406, or null when it may be (or the result will say).
 */
export function refusalBeforeCall(accept: string | undefined, outputSchema: Value, subject: string): HttpError | null {
  if (chooseResultForm(accept, null) !== 'none' || !isJsonObject(outputSchema)) return null;
  const unknown = Object.keys(outputSchema).length === 0 || JSON.stringify(outputSchema).includes('"x-media-type"');
  return unknown ? null : notAcceptable(accept, subject, offeredAs(null));
}

/** `inline; filename="a.png"`, with the UTF-8 name as well (RFC 6266) when it is not plain ASCII. */
function contentDisposition(fileName: string | null): string {
  if (fileName === null) return 'inline';
  const ascii = fileName.replace(/[^\w.\- ]/g, '_');
  return ascii === fileName ? `inline; filename="${ascii}"` : `inline; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(fileName)}`;
}
