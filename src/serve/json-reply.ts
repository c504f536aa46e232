import { Readable } from 'node:stream';
import type { HttpReply } from './http/http-reply.js';
import type { JsonText } from '../worker/json-text.js';
import { jsonChunks, smallJson, TEXT_SLICE_BYTES, type JsonTree } from './json-chunks.js';
import { disconnectStalled } from './stalled-client.js';

/** A JSON text this long or shorter is sent at once: as long as the text of a value sendJson sends as one string. */
const SMALL_TEXT_BYTES = 64 * 1024;
/** A JSON text this long or shorter is sent as a string: decoding it costs less than a second piece to write. */
const SHORT_TEXT_BYTES = 4 * 1024;

/**
 * Sends a value as JSON (`application/json`, with its Content-Length). A small value goes
 * as one string; a large one is serialised piece by piece as the client takes it
 * (backpressure), so a client that asks for a large result and does not read it holds the
 * result once, not three times (the value, its JSON text, the socket's copy of that text).
 * Such a client is disconnected once it has taken nothing for `sendTimeoutMs`
 * (`--send-timeout`, as nginx's `send_timeout`), and the result goes with it.
 */
export function sendJson(reply: HttpReply, value: JsonTree, sendTimeoutMs: number): HttpReply {
  reply.type('application/json; charset=utf-8');
  const small = smallJson(value);
  if (small !== null) return reply.send(small);
  // Counted in a pass of its own, so the text is never whole in memory.
  let length = 0;
  for (const piece of jsonChunks(value)) length += Buffer.byteLength(piece);
  return sendPieces(reply, length, jsonChunks(value), sendTimeoutMs);
}

/**
 * Sends JSON text that is already bytes (a result as the worker wrote it, in one or more
 * buffers) as it is: a small one as one buffer, as sendJson sends a small value; a large one
 * in slices of those buffers, with the same backpressure and `--send-timeout` as sendJson.
 */
export function sendJsonText(reply: HttpReply, text: JsonText, sendTimeoutMs: number): HttpReply {
  reply.type('application/json; charset=utf-8');
  if (text.length <= SHORT_TEXT_BYTES && text.pieces.length === 1) {
    // As a string, Node writes it in one write with the response's head; a buffer takes a writev of both (~2-4 µs more a response).
    return reply.send(text.pieces[0]!.toString('utf8'));
  }
  if (text.length <= SMALL_TEXT_BYTES) {
    const { pieces } = text;
    return reply.send(pieces.length === 1 ? pieces[0] : Buffer.concat(pieces, text.length));
  }
  return sendPieces(reply, text.length, text.slices(TEXT_SLICE_BYTES), sendTimeoutMs);
}

function sendPieces(reply: HttpReply, length: number, pieces: Iterable<string | Buffer>, sendTimeoutMs: number): HttpReply {
  reply.header('content-length', String(length));
  const response = reply.raw;
  const drop = setTimeout(() => disconnectStalled(response), sendTimeoutMs);
  drop.unref();
  response.once('close', () => clearTimeout(drop));
  // Each piece is taken only when the socket has room for it: taking one is the client reading.
  function* watched(): Generator<string | Buffer, void, undefined> {
    for (const piece of pieces) {
      drop.refresh();
      yield piece;
    }
  }
  return reply.send(Readable.from(watched(), { objectMode: true, highWaterMark: 1 }));
}
