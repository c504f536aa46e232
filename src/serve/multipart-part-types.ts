import type { IncomingMessage } from 'node:http';

/** Busboy's own limit on a part's header block (MAX_HEADER_SIZE in its dicer): past it, it gives up too. */
const MAX_HEADER_BYTES = 80 * 1024;
const HEADER_END = Buffer.from('\r\n\r\n');
const CLOSE = Buffer.from('--');

/**
 * Which file parts of a multipart body came with a Content-Type header of their own.
 *
 * The multipart parser reports `text/plain` for a part without one (RFC 7578 section 4.4's
 * default), so a PNG that Python's `requests` uploads (it writes no part Content-Type)
 * would reach the function as text. This reads the same bytes beside the parser and keeps,
 * for each file part in order (a `form-data` part with a `filename`, or of type
 * application/octet-stream: the parser's own rule), whether its headers named a type. Bodies are skipped
 * over, never kept.
 */
export class PartContentTypes {
  private readonly delimiter: Buffer;
  private pending: Buffer = Buffer.from('\r\n'); // the body's first delimiter has no CRLF before it
  private state: 'body' | 'headers' | 'done' = 'body';
  private readonly fileParts: boolean[] = [];

  constructor(boundary: string) {
    this.delimiter = Buffer.from(`\r\n--${boundary}`);
  }

  /** Starts reading the request's body as it arrives; call it just before the parser starts reading. */
  static watch(request: IncomingMessage): PartContentTypes | null {
    const boundary = boundaryOf(request.headers['content-type']);
    if (boundary === null) return null;
    const types = new PartContentTypes(boundary);
    request.on('data', (chunk: Buffer) => types.write(chunk));
    return types;
  }

  /** Whether the file part at this position (0 for the first) gave a Content-Type; true when unknown, so a given type is never dropped. */
  gaveContentType(fileIndex: number): boolean {
    return this.fileParts[fileIndex] ?? true;
  }

  write(chunk: Buffer): void {
    // Past the closing delimiter, or a header block too long to read: the rest of the body is
    // the parser's alone, and kept here it would be copied again with every chunk.
    if (this.state === 'done') return;
    this.pending = this.pending.length === 0 ? chunk : this.state === 'body' ? this.afterSeam(chunk) : Buffer.concat([this.pending, chunk]);
    for (;;) {
      if (this.state === 'body') {
        const found = this.pending.indexOf(this.delimiter);
        if (found === -1) {
          // Keep what could be the start of a delimiter cut by the chunk's end.
          this.pending = this.pending.subarray(Math.max(0, this.pending.length - this.delimiter.length + 1));
          return;
        }
        this.pending = this.pending.subarray(found + this.delimiter.length);
        this.state = 'headers';
        continue;
      }
      if (this.pending.length < CLOSE.length) return;
      if (this.pending.subarray(0, CLOSE.length).equals(CLOSE)) {
        this.state = 'done';
        return;
      }
      const end = this.pending.indexOf(HEADER_END);
      if (end === -1) {
        if (this.pending.length > MAX_HEADER_BYTES) this.state = 'done';
        return;
      }
      this.readHeaders(this.pending.subarray(0, end).toString('latin1'));
      this.pending = this.pending.subarray(end + HEADER_END.length);
      this.state = 'body';
    }
  }

  /**
   * In a part's body only a delimiter matters, and the bytes kept from the last chunk are
   * fewer than one: what of a delimiter they start is finished within this chunk's first bytes.
   * So they are joined to those bytes alone, not the whole chunk copied behind them (a 1.5 MB
   * upload was copied whole, a chunk at a time). Returns what is left to read: the chunk, or
   * from the start of the part's headers when the delimiter crossed into it.
   */
  private afterSeam(chunk: Buffer): Buffer {
    const kept = this.pending.length;
    const seam = Buffer.concat([this.pending, chunk.subarray(0, this.delimiter.length - 1)]);
    const found = seam.indexOf(this.delimiter);
    // A chunk shorter than that may end inside a delimiter still: all of it is kept.
    if (found === -1) return chunk.length >= this.delimiter.length - 1 ? chunk : seam;
    this.state = 'headers';
    return chunk.subarray(found + this.delimiter.length - kept);
  }

  /** The rest of the delimiter line, then one header a line. */
  private readHeaders(block: string): void {
    const headers = new Map<string, string>();
    for (const line of block.split('\r\n').slice(1)) {
      const colon = line.indexOf(':');
      if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
    }
    const disposition = parameters(headers.get('content-disposition') ?? '');
    if (disposition[0]?.toLowerCase() !== 'form-data') return;
    const contentType = headers.get('content-type');
    const named = disposition.slice(1).some((parameter) => /^filename\*?\s*=/i.test(parameter));
    if (named || parameters(contentType ?? '')[0]?.toLowerCase() === 'application/octet-stream') this.fileParts.push(contentType !== undefined);
  }
}

/** `multipart/form-data; boundary="x"` -> `x`. */
function boundaryOf(contentType: string | undefined): string | null {
  for (const parameter of parameters(contentType ?? '').slice(1)) {
    const match = /^boundary\s*=\s*(.*)$/is.exec(parameter);
    if (match) return unquote(match[1]!);
  }
  return null;
}

/** A header's `;`-separated parts, a quoted string's `;` not separating. */
function parameters(header: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (let index = 0; index < header.length; index++) {
    const char = header[index]!;
    if (char === '\\' && quoted) {
      current += char + (header[++index] ?? '');
      continue;
    }
    if (char === '"') quoted = !quoted;
    if (char === ';' && !quoted) {
      parts.push(current.trim());
      current = '';
      continue;
    }
    current += char;
  }
  parts.push(current.trim());
  return parts;
}

function unquote(value: string): string {
  const trimmed = value.trim();
  return trimmed.startsWith('"') && trimmed.endsWith('"') ? trimmed.slice(1, -1).replace(/\\(.)/g, '$1') : trimmed;
}
