import { describe, expect, it } from 'vitest';
import { HttpError } from '../../src/serve/http-error.js';
import { LONG_STRING_BYTES, refuseControlBytes, splitLongStrings } from '../../src/serve/long-strings.js';

const LONG = 'x'.repeat(LONG_STRING_BYTES);
const names = new Set(['text', 'other']);

/** The body as JSON.parse reads it, from the split: the rest with each string put back. */
function joined(split: NonNullable<ReturnType<typeof splitLongStrings>>): unknown {
  const value = JSON.parse(split.rest) as Record<string, unknown>;
  for (const { parameter, bytes } of split.strings) {
    expect(value[parameter]).toBe('');
    value[parameter] = bytes.toString('utf8');
  }
  return value;
}

describe('long strings of a JSON body, found without decoding them', () => {
  it('takes out each long string of a named parameter, and the rest parses to the same body', () => {
    const bodies = [
      { text: LONG },
      { a: 1, text: `${LONG}é😀`, b: [1, '}', { c: '"\\' }], other: LONG + LONG, d: null, e: -1.5e3, f: true },
      { nested: { text: 'short' }, text: LONG },
    ];
    for (const body of bodies) {
      for (const text of [JSON.stringify(body), JSON.stringify(body, null, 2), `\ufeff ${JSON.stringify(body)} \n`]) {
        const split = splitLongStrings(Buffer.from(text), names);
        expect(split).not.toBeNull();
        expect(joined(split!)).toEqual(body);
        expect(split!.rest.length).toBeLessThan(200);
      }
    }
  });

  it('leaves alone what must be parsed: escapes, control characters, other parameters, short strings, nesting, repeats', () => {
    const untouched = [
      { text: `${LONG}\n` },
      { text: `${LONG}"` },
      { text: `${LONG}\u0001` },
      { unnamed: LONG },
      { text: 'short' },
      { text: [LONG] },
      { text: { inner: LONG } },
      [LONG],
      LONG,
    ];
    for (const body of untouched) expect(splitLongStrings(Buffer.from(JSON.stringify(body)), names)).toBeNull();
    expect(splitLongStrings(Buffer.from(`{"text":"${LONG}","text":"${LONG}"}`), names)).toBeNull();
  });

  it("takes a media parameter's string without searching it for control characters, and refuses one that holds them when asked", () => {
    const image = `${'QUJD'.repeat(LONG_STRING_BYTES / 4)}\u0001`;
    const base64 = new Set(['text']);
    const split = splitLongStrings(Buffer.from(`{"text": "${image}", "other": "${LONG}"}`), names, base64);
    expect(split?.strings.map(({ parameter }) => parameter)).toEqual(['text', 'other']);
    expect(() => refuseControlBytes(split!.strings, base64)).toThrow(HttpError);
    expect(() => refuseControlBytes(split!.strings, base64)).toThrow('the string of "text" holds a control character');
    expect(() => refuseControlBytes(split!.strings.slice(1), base64)).not.toThrow();
    // Not in base64Parameters: searched, and the body left to JSON.parse.
    expect(splitLongStrings(Buffer.from(`{"text": "${image}"}`), names)).toBeNull();
  });

  it('gives up on a body that is not well formed, for JSON.parse to say why', () => {
    for (const text of [`{"text":"${LONG}"`, `{"text":"${LONG}"} x`, `{"text" "${LONG}"}`, `{"text":"${LONG}",}`, `{"text":"${LONG}`]) {
      const split = splitLongStrings(Buffer.from(text), names);
      if (split !== null) expect(() => JSON.parse(split.rest)).toThrow();
    }
  });
});
