import type { IncomingMessage } from 'node:http';
import { HttpError } from '../http-error.js';

/**
 * Reads a request's body as bytes, refusing one above `limit` as soon as its Content-Length
 * says so or its bytes pass it (`tooLarge()`), and one shorter or longer than its
 * Content-Length (400). A client that leaves mid-body ends it with the stream's error.
 */
export function readBody(request: IncomingMessage, limit: number, tooLarge: () => Error, done: (error: Error | null, body: Buffer) => void): void {
  const declared = request.headers['content-length'];
  const length = declared === undefined ? null : Number(declared);
  if (length !== null && length > limit) return done(tooLarge(), EMPTY);
  const chunks: Buffer[] = [];
  let received = 0;
  const stop = () => {
    request.off('data', onData);
    request.off('end', onEnd);
    request.off('error', onError);
  };
  const onData = (chunk: Buffer) => {
    received += chunk.length;
    if (received > limit) {
      stop();
      return done(tooLarge(), EMPTY);
    }
    chunks.push(chunk);
  };
  const onEnd = () => {
    stop();
    if (length !== null && received !== length) {
      return done(new HttpError(400, 'invalid_request', 'invalid_body', `the body is ${received} bytes, not the ${length} its Content-Length says`), EMPTY);
    }
    done(null, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received));
  };
  const onError = (error: Error) => {
    stop();
    done(error, EMPTY);
  };
  request.on('data', onData);
  request.on('end', onEnd);
  request.on('error', onError);
}

const EMPTY = Buffer.alloc(0);
