import { describe, expect, it } from 'vitest';
import { doublesJson } from '../../src/worker/doubles-json.js';

/** A result's `numbers` line: base64 of the doubles, little-endian. */
function line(numbers: Float64Array): Buffer {
  const bytes = Buffer.alloc(numbers.length * 8);
  numbers.forEach((number, index) => bytes.writeDoubleLE(number, index * 8));
  return Buffer.from(bytes.toString('base64'));
}

describe('doublesJson', () => {
  it('writes every double so that it reads back exactly, and as a float in Python (a point or an exponent)', () => {
    const special = [0, -0, 1, -1, 2 ** 53, 2 ** 53 + 2, 1e21, -1e21, 1e300, 5e-324, 1e-7, 0.1, Number.MAX_VALUE, -Number.MIN_VALUE];
    let seed = 7;
    const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
    for (let list = 0; list < 300; list++) {
      const numbers = new Float64Array(Math.floor(random() * 80));
      for (let index = 0; index < numbers.length; index++) {
        const pick = random();
        // Mostly an embedding's float32 values, whole numbers and edge cases among them.
        numbers[index] = pick < 0.15 ? special[Math.floor(random() * special.length)]! : pick < 0.25 ? Math.round((random() - 0.5) * 1e6) : Math.fround((random() - 0.5) * 0.2);
      }
      const json = doublesJson(line(numbers)).toString('latin1');
      const texts = numbers.length === 0 ? [] : json.slice(1, -1).split(',');
      expect(json.startsWith('[') && json.endsWith(']')).toBe(true);
      expect(texts).toHaveLength(numbers.length);
      texts.forEach((text, index) => {
        expect(Object.is(Number(text), numbers[index]), `${text} for ${numbers[index]}`).toBe(true);
        expect(text).toMatch(/[.e]/);
      });
    }
  });

  it('refuses a number JSON cannot write', () => {
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) expect(() => doublesJson(line(new Float64Array([0.5, bad, 1])))).toThrow(/JSON cannot write/);
  });
});
