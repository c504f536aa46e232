import { endianness } from 'node:os';
import { ProtocolError } from './protocol.js';

const LITTLE_ENDIAN = endianness() === 'LE';

/**
 * A list of doubles, sent as one line of base64 of their little-endian IEEE 754 bytes (a
 * result's `numbers`, docs/worker-protocol.md), as JSON: each number as JavaScript writes it
 * (the shortest text that reads back as the same double, as Python's repr is), with `.0`
 * after a whole one, so that Python's json, fastsdk's, reads it back as a float and not an
 * int; `-0` as `-0.0`.
 */
export function doublesJson(base64: Buffer): Buffer {
  const bytes = Buffer.from(base64.toString('latin1'), 'base64');
  // Node skips what is not base64, so a line with anything else decodes short.
  if (bytes.length % 8 !== 0 || bytes.length !== decodedLength(base64)) {
    throw new ProtocolError(`result: a list of numbers is not base64 of doubles (${base64.length} characters)`);
  }
  const count = bytes.length / 8;
  const numbers = LITTLE_ENDIAN && bytes.byteOffset % 8 === 0 ? new Float64Array(bytes.buffer, bytes.byteOffset, count) : littleEndianDoubles(bytes);
  return Buffer.from(numbersText(numbers), 'latin1');
}

/**
 * JSON.stringify writes each number straight into its text, ~140 ns a number of an
 * embedding, where a number made a string on its own also goes through V8's cache of number
 * strings (~250 ns). It writes a whole number without the `.0` Python needs to read a float,
 * so a list holding one is written a number at a time.
 */
function numbersText(numbers: Float64Array): string {
  let hasWholeNumber = false;
  for (let index = 0; index < numbers.length; index++) {
    const number = numbers[index]!;
    if (!Number.isFinite(number)) throw new ProtocolError(`result: a list of numbers holds ${number}, which JSON cannot write`);
    if (isWritableWhole(number)) hasWholeNumber = true;
  }
  if (!hasWholeNumber) return JSON.stringify(Array.from(numbers));
  let json = '[';
  for (let index = 0; index < numbers.length; index++) {
    const number = numbers[index]!;
    if (index > 0) json += ',';
    json += isWritableWhole(number) ? (Object.is(number, -0) ? '-0.0' : `${number}.0`) : `${number}`;
  }
  return `${json}]`;
}

/** A whole number JavaScript writes without an exponent (from 1e21 on it has one, which Python reads as a float). */
function isWritableWhole(number: number): boolean {
  return Number.isInteger(number) && Math.abs(number) < 1e21;
}

function littleEndianDoubles(bytes: Buffer): Float64Array {
  const numbers = new Float64Array(bytes.length / 8);
  for (let index = 0; index < numbers.length; index++) numbers[index] = bytes.readDoubleLE(index * 8);
  return numbers;
}

/** How many bytes a base64 text of this length stands for, its `=` padding taken off. */
function decodedLength(base64: Buffer): number {
  const padding = base64.length < 2 ? 0 : (base64[base64.length - 1] === 0x3d ? 1 : 0) + (base64[base64.length - 2] === 0x3d ? 1 : 0);
  return base64.length % 4 === 0 ? (base64.length / 4) * 3 - padding : -1;
}
