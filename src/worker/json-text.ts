import { hasControlByte } from './control-bytes.js';
import { doublesJson } from './doubles-json.js';
import type { ResultPlace, Value } from './protocol.js';

/**
 * A value's JSON text as the worker wrote it (UTF-8), kept as bytes: a large result the
 * gateway need not look inside goes to the client as these bytes, never parsed nor
 * serialised again, and is parsed once only if something reads `value`. The bytes may be in
 * pieces (a result and its texts), which are sent as they are rather than joined: each
 * large buffer allocated costs the gateway garbage collection.
 */
export class JsonText {
  private parsed: { value: Value } | null = null;
  /** Null once released, or kept elsewhere. */
  private bytes: readonly Buffer[] | null;
  /** Where the bytes are read from once kept elsewhere (keepElsewhere). */
  private reread: (() => readonly Buffer[]) | null = null;
  readonly length: number;

  /**
   * `pieces` never split a key: a long string may come as several, but keys lie in the value's
   * own bytes, whole between them. `length` is theirs but for a text kept elsewhere (keptElsewhere).
   */
  constructor(pieces: readonly Buffer[], length = pieces.reduce((sum, piece) => sum + piece.length, 0)) {
    this.bytes = pieces;
    this.length = length;
  }

  /** A text of `length` bytes kept elsewhere from the start (keepElsewhere). */
  static keptElsewhere(length: number, reread: () => readonly Buffer[]): JsonText {
    const text = new JsonText([], length);
    text.keepElsewhere(reread);
    return text;
  }

  get pieces(): readonly Buffer[] {
    if (this.bytes !== null) return this.bytes;
    if (this.reread !== null) return this.reread();
    throw new Error('a JSON text read after it was released');
  }

  /** Lets go of the bytes once the answer is sent (serve/released-buffers.ts): reading them after is a bug. */
  release(): void {
    this.bytes = null;
    this.reread = null;
    this.parsed = null;
  }

  /**
   * Lets go of the bytes, which `reread` gives back each time they are asked for (a job's result
   * kept in a file): whoever holds this text reads the same bytes as before, and the gateway's
   * memory holds none of them between reads.
   */
  keepElsewhere(reread: () => readonly Buffer[]): void {
    this.bytes = null;
    this.parsed = null;
    this.reread = reread;
  }

  get value(): Value {
    if (this.parsed !== null) return this.parsed.value;
    const value = JSON.parse(this.joined().toString('utf8')) as Value;
    // Kept elsewhere, it is parsed each time: kept parsed, it would be held in memory again.
    if (this.reread === null) this.parsed = { value };
    return value;
  }

  /** What JSON.stringify writes for it, wherever it sits in a value: the value itself. */
  toJSON(): Value {
    return this.value;
  }

  /** The bytes in slices of at most `most` bytes, for a socket to take one at a time. */
  *slices(most: number): Generator<Buffer, void, undefined> {
    for (const piece of this.pieces) {
      for (let start = 0; start < piece.length; start += most) yield piece.subarray(start, start + most);
    }
  }

  /** The text as one buffer (a job's result, written to its store). */
  joined(): Buffer {
    return Buffer.concat(this.pieces, this.length);
  }

  /**
   * False when no object in the value can have `key` as a key: the worker (Python's json)
   * writes a key as its plain text, so a key without quotes or backslashes appears as
   * `"key"`. True may be a false alarm (the text inside a string); the caller then parses.
   */
  mayHoldKey(key: string): boolean {
    const quoted = quotedKey(key);
    return this.pieces.some((piece) => piece.includes(quoted));
  }
}

/** A key as JSON writes it, as bytes: made once per key, since every result is searched for the same few. */
const quotedKeys = new Map<string, Buffer>();
function quotedKey(key: string): Buffer {
  let quoted = quotedKeys.get(key);
  if (quoted === undefined) {
    quoted = Buffer.from(`"${key}"`);
    quotedKeys.set(key, quoted);
  }
  return quoted;
}

/**
 * A string as its UTF-8 bytes, which need no escape (no quote, backslash or control byte):
 * JSON writes them as they are between quotes. A job's long string argument, kept as the
 * client sent it: its call takes the bytes beside it (`texts`), never decoded or serialised.
 */
export class PlainStringText extends JsonText {
  /** Null once released. */
  private bytesOfString: Buffer | null;

  constructor(utf8: Buffer) {
    super([QUOTE_BYTES, utf8, QUOTE_BYTES]);
    this.bytesOfString = utf8;
  }

  get utf8(): Buffer {
    if (this.bytesOfString === null) throw new Error('a string read after it was released');
    return this.bytesOfString;
  }

  override release(): void {
    super.release();
    this.bytesOfString = null;
  }

  override get value(): string {
    return this.utf8.toString('utf8');
  }
}

/**
 * A result's value with its long strings and lists of doubles put back (docs/worker-protocol.md,
 * `texts` and `numbers`): `value` has `""` at each place, and each line is, in the pieces it
 * was read in (line-reader.ts), a string's UTF-8, which goes on as it is rather than joined,
 * or base64 of doubles, written as JSON here (doublesJson). Such a string is its own JSON when
 * it holds no quote, backslash or control byte, as long strings mostly do; one that does is
 * escaped by JSON.stringify.
 */
export function withTexts(value: Buffer, places: readonly ResultPlace[], lines: readonly (readonly Buffer[])[]): JsonText {
  const pieces: Buffer[] = [];
  let from = 0;
  places.forEach(({ offset, kind }, index) => {
    const line = lines[index]!;
    pieces.push(value.subarray(from, offset));
    if (kind === 'numbers') {
      pieces.push(doublesJson(line.length === 1 ? line[0]! : Buffer.concat(line)));
    } else if (line.some((part) => part.includes(QUOTE) || part.includes(BACKSLASH) || hasControlByte(part, 0, part.length))) {
      pieces.push(Buffer.from(JSON.stringify(Buffer.concat(line).toString('utf8'))));
    } else {
      pieces.push(QUOTE_BYTES, ...line, QUOTE_BYTES);
    }
    from = offset + 2;
  });
  pieces.push(value.subarray(from));
  return new JsonText(pieces);
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const QUOTE_BYTES = Buffer.from('"');
