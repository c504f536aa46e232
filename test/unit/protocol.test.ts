import { readFileSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { withTexts } from '../../src/worker/json-text.js';
import { ProtocolError, encodeCommand, parseEvent, readResultValue, readResultWithTexts } from '../../src/worker/protocol.js';
import type { Command } from '../../src/worker/protocol.js';

// The examples python/apipod/_runtime/protocol.py is tested against too: one file per message type.
const fixtureDir = fileURLToPath(new URL('../fixtures/protocol', import.meta.url));
const COMMAND_TYPES = new Set(['call', 'cancel', 'shutdown', 'withdraw']);

function readFixture(file: string): unknown[] {
  return JSON.parse(readFileSync(join(fixtureDir, file), 'utf8')) as unknown[];
}

const fixtureFiles = readdirSync(fixtureDir).filter((file) => file.endsWith('.json') && file !== 'invalid.json');
const commandFiles = fixtureFiles.filter((file) => COMMAND_TYPES.has(basename(file, '.json')));
const eventFiles = fixtureFiles.filter((file) => !COMMAND_TYPES.has(basename(file, '.json')));

describe('protocol events', () => {
  it('has an example file for every event type', () => {
    expect(eventFiles.map((file) => basename(file, '.json')).sort()).toEqual(
      ['cancelled', 'chunk', 'error', 'progress', 'ready', 'result', 'setup_failed', 'streamed', 'withdrawn'],
    );
  });

  describe.each(eventFiles)('%s', (file) => {
    it.each(readFixture(file).map((message) => [JSON.stringify(message).slice(0, 80), message]))(
      'parses %s',
      (_, message) => {
        const event = parseEvent(JSON.stringify(message));
        expect(event.type).toBe(basename(file, '.json'));
        // Every field parsed is the one sent; only unknown fields are left out.
        expect(message).toMatchObject(event);
      },
    );
  });

  it('drops unknown fields', () => {
    const event = parseEvent('{"type": "cancelled", "call": "c-1", "at": "2024-01-01"}');
    expect(event).toEqual({ type: 'cancelled', call: 'c-1' });
  });

  it('rejects a line that is not JSON', () => {
    expect(() => parseEvent('{"type": "result",')).toThrow(ProtocolError);
  });
});

describe('protocol commands', () => {
  it('has an example file for every command type', () => {
    expect(commandFiles.map((file) => basename(file, '.json')).sort()).toEqual(['call', 'cancel', 'shutdown', 'withdraw']);
  });

  describe.each(commandFiles)('%s', (file) => {
    it.each(readFixture(file).map((message) => [JSON.stringify(message).slice(0, 80), message as Command]))(
      'encodes %s as one line that decodes to the same command',
      (_, command) => {
        const line = encodeCommand(command);
        expect(line.endsWith('\n')).toBe(true);
        expect(line.slice(0, -1)).not.toContain('\n');
        expect(JSON.parse(line)).toEqual(command);
      },
    );
  });

  it('keeps a call on one line when an argument holds a newline', () => {
    const command: Command = { type: 'call', call: 'c-1', endpoint: '/echo', arguments: { text: 'two\nlines' } };
    expect(encodeCommand(command)).toBe('{"type":"call","call":"c-1","endpoint":"/echo","arguments":{"text":"two\\nlines"}}\n');
  });
});

describe('result values as bytes', () => {
  const text = 'é'.repeat(64 * 1024);
  const line = (call: string, value: unknown) => Buffer.from(`{"type":"result","call":${JSON.stringify(call)},"value":${JSON.stringify(value)}}`);

  it('gives a result value, large or small, as the bytes the worker wrote, which parse to what parseEvent reads', () => {
    for (const value of [{ text }, 'short', { ok: true, list: [1, 2.5, null] }]) {
      const read = readResultValue(line('c-7', value));
      expect(read?.call).toBe('c-7');
      expect(JSON.parse(read!.value.toString('utf8'))).toEqual((parseEvent(line('c-7', value).toString()) as { value: unknown }).value);
    }
  });

  it('keeps the digits of an integer beyond 2^53, which parsing rounds', () => {
    const read = readResultValue(Buffer.from('{"type":"result","call":"c-1","value":{"seed":18446744073709551617}}'));
    expect(read?.value.toString()).toBe('{"seed":18446744073709551617}');
  });

  it('copies a small value out of the line it was read in, and keeps a large one as a view of it', () => {
    const small = line('c-1', { ok: true });
    const read = readResultValue(small)!;
    small.fill(0x20);
    expect(read.value.toString()).toBe('{"ok":true}');
    const large = line('c-2', text);
    expect(readResultValue(large)!.value.buffer).toBe(large.buffer);
  });

  it('leaves another event, a call id with an escape, and a line cut short to parseEvent', () => {
    expect(readResultValue(Buffer.from(`{"type":"chunk","call":"c-1","value":${JSON.stringify(text)}}`))).toBeNull();
    expect(readResultValue(line('c-"1', text))).toBeNull();
    expect(readResultValue(line('c-\\1', 'x'))).toBeNull();
    expect(readResultValue(Buffer.from('{"type":"result","call":"c-1"}'))).toBeNull();
    expect(readResultValue(Buffer.from('}'))).toBeNull();
  });
});

describe('results with texts', () => {
  const json = (item: unknown) => JSON.stringify(item);

  it('put each text back where its offset says, escaping one that needs it, into the value JSON.stringify writes', () => {
    const texts = ['plain é😀', 'quote " backslash \\ control \u0001 newline-free'];
    const skeleton = Buffer.from(json({ id: 1, first: '', list: [''], second: '' }));
    const offsets = [skeleton.indexOf('""'), skeleton.lastIndexOf('""')];
    const line = Buffer.from(`{"type":"result","call":"c-3","texts":[${offsets.join(',')}],"value":${skeleton.toString()}}`);
    const read = readResultWithTexts(line)!;
    expect([read.call, read.places]).toEqual(['c-3', offsets.map((offset) => ({ offset, kind: 'text' }))]);
    const text = withTexts(read.value, read.places, texts.map((item) => [Buffer.from(item)]));
    expect(Buffer.concat(text.pieces).toString()).toBe(json({ id: 1, first: texts[0], list: [''], second: texts[1] }));
    expect(text.value).toEqual({ id: 1, first: texts[0], list: [''], second: texts[1] });
    expect(text.length).toBe(Buffer.byteLength(json(text.value)));
  });

  it('refuse offsets that point anywhere but at an empty string, and leave other lines alone', () => {
    const skeleton = '{"a":"","b":1}';
    const line = (offsets: string) => Buffer.from(`{"type":"result","call":"c-1","texts":[${offsets}],"value":${skeleton}}`);
    expect(readResultWithTexts(line('5'))?.places).toEqual([{ offset: 5, kind: 'text' }]);
    for (const offsets of ['4', '6', '5,5', '-1', 'x', '', '99']) expect(() => readResultWithTexts(line(offsets))).toThrow(ProtocolError);
    expect(readResultWithTexts(Buffer.from(`{"type":"result","call":"c-1","value":${skeleton}}`))).toBeNull();
  });

  it('put each list of doubles back as JSON that reads as the same floats, in value order with the texts', () => {
    const numbers = [0.1, -2.5, 1, -0, 1e-7, 1e16, 1.5e300, 2 ** 53 + 2, 5e-324, 0.00001];
    const doubles = Buffer.alloc(numbers.length * 8);
    numbers.forEach((number, index) => doubles.writeDoubleLE(number, index * 8));
    const skeleton = Buffer.from('{"embedding":"","text":"","more":""}');
    const [first, second, third] = [skeleton.indexOf('""'), skeleton.indexOf('""', 14), skeleton.lastIndexOf('""')];
    const line = Buffer.from(`{"type":"result","call":"c-4","texts":[${second}],"numbers":[${first},${third}],"value":${skeleton}}`);
    const read = readResultWithTexts(line)!;
    expect(read.places).toEqual([{ offset: first, kind: 'numbers' }, { offset: second, kind: 'text' }, { offset: third, kind: 'numbers' }]);
    const base64 = Buffer.from(doubles.toString('base64'));
    const text = withTexts(read.value, read.places, [[base64.subarray(0, 7), base64.subarray(7)], [Buffer.from('words')], [base64]]);
    const json = '[0.1,-2.5,1.0,-0.0,1e-7,10000000000000000.0,1.5e+300,9007199254740994.0,5e-324,0.00001]';
    expect(Buffer.concat(text.pieces).toString()).toBe(`{"embedding":${json},"text":"words","more":${json}}`);
    expect(text.value).toEqual({ embedding: numbers, text: 'words', more: numbers });
  });

  it('refuse a list of numbers that is not base64 of finite doubles, and a result that names no place', () => {
    const line = Buffer.from('{"type":"result","call":"c-1","texts":[],"numbers":[5],"value":{"a":""}}');
    const read = readResultWithTexts(line)!;
    const nan = Buffer.alloc(8);
    nan.writeDoubleLE(Number.NaN);
    for (const bad of ['AAAAAAAA8D8', 'AAAAAAAA8D8=!', nan.toString('base64'), 'AAAA']) {
      expect(() => withTexts(read.value, read.places, [[Buffer.from(bad)]])).toThrow(ProtocolError);
    }
    expect(() => readResultWithTexts(Buffer.from('{"type":"result","call":"c-1","texts":[],"value":{"a":""}}'))).toThrow(ProtocolError);
  });
});

describe('invalid messages', () => {
  // Commands are the worker's to reject (python/apipod/_runtime/protocol.py); everything else is an
  // event, or not a message at all, and the gateway must refuse it.
  const invalid = readFixture('invalid.json');
  const isCommand = (entry: unknown) =>
    typeof entry === 'object' && entry !== null && COMMAND_TYPES.has(String((entry as { type?: unknown }).type));
  const notCommands = invalid.filter((entry) => !isCommand(entry));

  it('holds invalid events for the gateway to reject', () => {
    expect(notCommands.length).toBeGreaterThan(0);
  });

  it.each(notCommands.map((entry) => [JSON.stringify(entry).slice(0, 100), entry]))('rejects %s', (_, entry) => {
    expect(() => parseEvent(JSON.stringify(entry))).toThrow(ProtocolError);
  });
});
