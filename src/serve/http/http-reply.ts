import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { finished, type Readable } from 'node:stream';

/**
 * The answer a route builds: status and headers, then one `send` of a string, bytes, a
 * readable stream, or a value sent as JSON. A route that writes the response itself
 * (server-sent events) hijacks it first, and takes the headers set so far with it.
 */
export class HttpReply {
  statusCode = 200;
  private readonly headers: OutgoingHttpHeaders = {};
  private isHijacked = false;
  private isSent = false;

  constructor(
    readonly raw: ServerResponse,
    private readonly startedAt: number,
    /** Where a stream's failure goes while the response can still say so. */
    private readonly onStreamError: (error: Error) => void,
  ) {}

  code(status: number): this {
    this.statusCode = status;
    return this;
  }

  header(name: string, value: string | number | string[]): this {
    this.headers[name.toLowerCase()] = value;
    return this;
  }

  type(contentType: string): this {
    return this.header('content-type', contentType);
  }

  getHeaders(): OutgoingHttpHeaders {
    return this.headers;
  }

  /**
   * Makes ready to answer with an error instead, keeping the headers set so far (CORS) but
   * those of the body that will not come; false once the response has started.
   */
  resetForError(): boolean {
    if (this.isHijacked || this.raw.headersSent) return false;
    this.isSent = false;
    for (const name of ['content-type', 'content-length']) {
      delete this.headers[name];
      this.raw.removeHeader(name);
    }
    return true;
  }

  /** The route writes to `raw` itself from here on; `send` does nothing. */
  hijack(): this {
    this.isHijacked = true;
    return this;
  }

  /** Whether an answer was sent (or is being), or the route took the response over. */
  get sent(): boolean {
    return this.isSent || this.isHijacked || this.raw.headersSent;
  }

  /** Milliseconds since the request arrived. */
  get elapsedTime(): number {
    return performance.now() - this.startedAt;
  }

  send(payload?: unknown): this {
    if (this.sent) return this;
    this.isSent = true;
    if (payload === undefined) return this.end(undefined);
    if (typeof payload === 'string') return this.end(payload, 'text/plain; charset=utf-8');
    if (payload instanceof Uint8Array) return this.end(payload, 'application/octet-stream');
    if (isReadable(payload)) return this.stream(payload);
    return this.end(JSON.stringify(payload), 'application/json; charset=utf-8');
  }

  private end(body: string | Uint8Array | undefined, defaultType?: string): this {
    const { headers, raw } = this;
    if (body === undefined) {
      if (this.statusCode !== 204 && this.statusCode !== 304) headers['content-length'] ??= '0';
    } else {
      if (headers['content-type'] === undefined && defaultType !== undefined) headers['content-type'] = defaultType;
      // A HEAD answer keeps the length its route gave: that of the body GET would send.
      if (raw.req.method !== 'HEAD' || headers['content-length'] === undefined) {
        headers['content-length'] = typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
      }
    }
    raw.writeHead(this.statusCode, headers);
    raw.end(body);
    return this;
  }

  /**
   * Pipes a stream as the client reads it. The headers go out with its first piece, so a
   * stream that fails before one is still answered with an error; later, the connection is
   * cut, which tells the client the answer is incomplete. A client that leaves stops it.
   */
  private stream(payload: Readable): this {
    const { raw } = this;
    let sourceOpen = true;
    finished(payload, { readable: true, writable: false }, (error) => {
      sourceOpen = false;
      if (error === undefined || error === null) return;
      if (raw.headersSent) raw.destroy();
      else this.onStreamError(error);
    });
    finished(raw, () => {
      if (sourceOpen) payload.destroy();
    });
    raw.statusCode = this.statusCode;
    for (const [name, value] of Object.entries(this.headers)) if (value !== undefined) raw.setHeader(name, value);
    payload.pipe(raw);
    return this;
  }
}

function isReadable(value: unknown): value is Readable {
  return typeof value === 'object' && value !== null && typeof (value as Readable).pipe === 'function';
}
