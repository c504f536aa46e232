import type { Value } from './protocol.js';

/**
 * A value's JSON text as the worker wrote it (UTF-8), kept as bytes: a large result the
 * gateway need not look inside goes to the client as these bytes, never parsed nor
 * serialised again, and is parsed once only if something reads `value`.
 */
export class JsonText {
  private parsed: { value: Value } | null = null;

  constructor(readonly bytes: Buffer) {}

  get value(): Value {
    this.parsed ??= { value: JSON.parse(this.bytes.toString('utf8')) as Value };
    return this.parsed.value;
  }

  /**
   * False when no object in the value can have `key` as a key: the worker (Python's json)
   * writes a key as its plain text, so a key without quotes or backslashes appears as
   * `"key"`. True may be a false alarm (the text inside a string); the caller then parses.
   */
  mayHoldKey(key: string): boolean {
    return this.bytes.includes(`"${key}"`);
  }
}
