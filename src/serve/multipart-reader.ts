/**
 * A multipart/form-data body (RFC 7578, framed as RFC 2046 section 5.1.1 says) read as it
 * arrives: each chunk fed in gives back what it completes, parts' bodies as slices of the
 * chunk itself, never copied, so a file part goes to its transit file as it came off the
 * socket. One search for the delimiter covers every byte once; busboy's, with a second search
 * beside it for the part headers busboy did not hand on, cost a 1.5 MB upload twice that
 * (bench/RESULTS.md run 22). Pure: the caller reads the socket and writes the files.
 */

/** What a part's headers say, as the parser needs it. */
export interface PartHead {
  /** Content-Disposition's `name`; null when it named none. */
  name: string | null;
  /** The file name without any directory (`filename*` over `filename`); null when none was given, `''` for a file input left empty. */
  fileName: string | null;
  /** The part's Content-Type, lower-cased, without parameters; null when it gave none. */
  contentType: string | null;
  /** The Content-Type's `charset`, lower-cased; null when none. */
  charset: string | null;
  /** A file rather than a text field: it names a file (even an empty name), or is application/octet-stream (as busboy tells them). */
  isFile: boolean;
}

export type MultipartEvent =
  | { kind: 'part'; head: PartHead }
  /** The next bytes of the current part's body: a slice of a chunk fed in, valid as long as that chunk. */
  | { kind: 'data'; bytes: Buffer }
  | { kind: 'part-end' };

/** A body that is not multipart as its boundary frames it; the message says what is wrong. */
export class MalformedMultipart extends Error {}

/** The most of a part's header block that is read: busboy's limit too (its dicer's MAX_HEADER_SIZE). */
const MAX_HEADER_BYTES = 80 * 1024;
const CRLF = Buffer.from('\r\n');
const HEADER_END = Buffer.from('\r\n\r\n');
const NOTHING = Buffer.alloc(0);

type State = 'preamble' | 'after-delimiter' | 'headers' | 'body' | 'epilogue';

export class MultipartReader {
  private readonly delimiter: Buffer;
  /** Bytes read but not yet decided on: a possible start of a delimiter, or a header block so far. */
  private pending: Buffer = CRLF; // the body's first delimiter has no CRLF of its own before it
  private state: State = 'preamble';
  /** The start of a header block longer than MAX_HEADER_BYTES, while the rest of it is skipped. */
  private keptHeaders: Buffer | null = null;
  /** Whether the current part's events are passed on: a part that is no form field is skipped, as busboy skips it. */
  private isPassedOn = false;

  constructor(boundary: string) {
    // RFC 2046 says 1 to 70 characters; a longer one is taken, as busboy took it.
    if (boundary === '') throw new MalformedMultipart('its Content-Type names an empty boundary');
    this.delimiter = Buffer.from(`\r\n--${boundary}`);
  }

  /** Whether the closing delimiter has been read: what follows is the epilogue, which means nothing. */
  get isComplete(): boolean {
    return this.state === 'epilogue';
  }

  feed(chunk: Buffer): MultipartEvent[] {
    const events: MultipartEvent[] = [];
    const held = this.pending;
    this.pending = NOTHING;
    let rest: Buffer;
    if (this.state === 'epilogue') return events;
    if (this.state === 'body' || this.state === 'preamble') rest = this.afterSeam(held, chunk, events);
    else rest = held.length === 0 ? chunk : Buffer.concat([held, chunk]);
    while (rest.length > 0 && !this.isComplete) {
      if (this.state === 'after-delimiter') rest = this.readAfterDelimiter(rest);
      else if (this.state === 'headers') rest = this.readHeaders(rest, events);
      else rest = this.readBody(rest, events);
    }
    return events;
  }

  /** The body has ended: throws unless the closing delimiter was read. */
  end(): void {
    if (this.state !== 'epilogue') throw new MalformedMultipart('the body ended before its closing boundary');
  }

  /**
   * Bytes held from the last chunk, fewer than a delimiter, joined with just enough of this
   * one to finish any delimiter they start (the whole chunk copied behind them would cost a
   * copy of every upload). Emits what that decides; returns what is left to read.
   */
  private afterSeam(held: Buffer, chunk: Buffer, events: MultipartEvent[]): Buffer {
    if (held.length === 0) return chunk;
    const seam = Buffer.concat([held, chunk.subarray(0, this.delimiter.length - 1)]);
    const found = seam.indexOf(this.delimiter);
    if (found !== -1 && found < held.length) {
      this.emitData(seam.subarray(0, found), events);
      this.closePart(events);
      this.state = 'after-delimiter';
      return chunk.subarray(found + this.delimiter.length - held.length);
    }
    // No delimiter starts in the held bytes: they are body. A chunk too short to finish one is read with them.
    if (chunk.length < this.delimiter.length - 1) return seam;
    this.emitData(held, events);
    return chunk;
  }

  private readBody(bytes: Buffer, events: MultipartEvent[]): Buffer {
    const found = bytes.indexOf(this.delimiter);
    if (found === -1) {
      // The last bytes may start a delimiter the next chunk finishes: they wait for it.
      const decided = Math.max(0, bytes.length - this.delimiter.length + 1);
      this.emitData(bytes.subarray(0, decided), events);
      this.pending = bytes.subarray(decided);
      return NOTHING;
    }
    this.emitData(bytes.subarray(0, found), events);
    this.closePart(events);
    this.state = 'after-delimiter';
    return bytes.subarray(found + this.delimiter.length);
  }

  /** After a delimiter: `--` closes the body; otherwise optional spaces and the line's CRLF, then a part's headers. */
  private readAfterDelimiter(bytes: Buffer): Buffer {
    if (bytes.length < 2) return this.wait(bytes);
    if (bytes[0] === 0x2d && bytes[1] === 0x2d) {
      this.state = 'epilogue';
      return NOTHING;
    }
    const lineEnd = bytes.indexOf(CRLF);
    if (lineEnd === -1) {
      if (!isTransportPadding(bytes.subarray(0, bytes.length - 1)) || bytes.length > MAX_HEADER_BYTES) throw notDelimiterLine();
      return this.wait(bytes);
    }
    if (!isTransportPadding(bytes.subarray(0, lineEnd))) throw notDelimiterLine();
    this.state = 'headers';
    // The header block is read from the delimiter line's CRLF: a part with no headers is the CRLF of an empty line after it.
    return bytes.subarray(lineEnd);
  }

  private readHeaders(bytes: Buffer, events: MultipartEvent[]): Buffer {
    const end = bytes.indexOf(HEADER_END);
    if (end === -1) {
      if (this.keptHeaders === null && bytes.length <= MAX_HEADER_BYTES) return this.wait(bytes);
      // As busboy reads them: the first MAX_HEADER_BYTES, the rest skipped to the block's end.
      this.keptHeaders ??= Buffer.from(bytes.subarray(0, MAX_HEADER_BYTES));
      return this.wait(bytes.subarray(bytes.length - (HEADER_END.length - 1)));
    }
    const block = this.keptHeaders ?? bytes.subarray(0, Math.min(end, MAX_HEADER_BYTES));
    this.keptHeaders = null;
    const head = partHead(block.subarray(CRLF.length).toString('utf8'));
    this.isPassedOn = head !== null;
    if (head !== null) events.push({ kind: 'part', head });
    this.state = 'body';
    return bytes.subarray(end + HEADER_END.length);
  }

  private emitData(bytes: Buffer, events: MultipartEvent[]): void {
    if (this.state === 'body' && this.isPassedOn && bytes.length > 0) events.push({ kind: 'data', bytes });
  }

  private closePart(events: MultipartEvent[]): void {
    if (this.state === 'body' && this.isPassedOn) events.push({ kind: 'part-end' });
    this.isPassedOn = false;
  }

  /** Too few bytes to decide on: they wait for the next chunk. */
  private wait(bytes: Buffer): Buffer {
    this.pending = Buffer.from(bytes); // a header block is small; the chunk it is cut from need not be kept
    return NOTHING;
  }
}

function isTransportPadding(bytes: Buffer): boolean {
  return bytes.every((byte) => byte === 0x20 || byte === 0x09);
}

function notDelimiterLine(): MalformedMultipart {
  return new MalformedMultipart('a boundary line goes on after the boundary (RFC 2046 allows only spaces there)');
}

/** A part's header block, one header a line; null for a part that is no form field (no `form-data` disposition), which is skipped. */
function partHead(block: string): PartHead | null {
  const headers = new Map<string, string>();
  for (const line of block.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  const [disposition, ...dispositionParameters] = headerParameters(headers.get('content-disposition') ?? '');
  if (disposition?.toLowerCase() !== 'form-data') return null;
  const named = new Map(dispositionParameters.map(parameterOf).filter((pair): pair is [string, string] => pair !== null));
  const [type, ...typeParameters] = headerParameters(headers.get('content-type') ?? '');
  const contentType = type === undefined || type === '' ? null : type.toLowerCase();
  const charset = typeParameters.map(parameterOf).find((pair) => pair?.[0] === 'charset')?.[1].toLowerCase() ?? null;
  const extended = named.has('filename*') ? extendedValue(named.get('filename*')!) : null;
  const given = extended ?? named.get('filename') ?? null;
  const fileName = given === null ? null : baseName(given);
  return { name: named.get('name') ?? null, fileName, contentType, charset, isFile: fileName !== null || contentType === 'application/octet-stream' };
}

/** A header's `;`-separated parts, a quoted string's `;` not separating. */
export function headerParameters(header: string): string[] {
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

/** `name="x"` -> [`name`, `x`] (the name lower-cased, the value unquoted); null for a part with no `=`. */
function parameterOf(parameter: string): [string, string] | null {
  const equals = parameter.indexOf('=');
  if (equals === -1) return null;
  return [parameter.slice(0, equals).trim().toLowerCase(), unquote(parameter.slice(equals + 1))];
}

function unquote(value: string): string {
  const trimmed = value.trim();
  return trimmed.length >= 2 && trimmed.startsWith('"') && trimmed.endsWith('"') ? trimmed.slice(1, -1).replace(/\\(.)/g, '$1') : trimmed;
}

/** RFC 8187's `charset'language'percent-encoded` (UTF-8 or ISO-8859-1); null when it is not that. */
function extendedValue(value: string): string | null {
  const match = /^([\w!#$%&+^`{}~-]+)'[^']*'(.*)$/.exec(value);
  if (match === null) return null;
  const charset = match[1]!.toLowerCase();
  if (charset !== 'utf-8' && charset !== 'iso-8859-1') return null;
  try {
    const bytes = Buffer.from(match[2]!.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1');
    return charset === 'utf-8' ? new TextDecoder('utf-8', { fatal: true }).decode(bytes) : bytes.toString('latin1');
  } catch {
    return null;
  }
}

/** The name after any directory a client's file name holds (`C:\photos\a.png` -> `a.png`); `.` and `..` are no name. */
function baseName(fileName: string): string {
  const name = fileName.slice(Math.max(fileName.lastIndexOf('/'), fileName.lastIndexOf('\\')) + 1);
  return name === '.' || name === '..' ? '' : name;
}

/** `multipart/form-data; boundary="x"` -> `x`; null when it names none. */
export function boundaryOf(contentType: string | undefined): string | null {
  for (const parameter of headerParameters(contentType ?? '').slice(1)) {
    const pair = parameterOf(parameter);
    if (pair?.[0] === 'boundary') return pair[1];
  }
  return null;
}
