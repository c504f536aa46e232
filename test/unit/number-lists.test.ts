import { describe, expect, it } from 'vitest';
import type { Value } from '../../src/worker/protocol.js';
import { takesNumberList } from '../../src/serve/endpoint-inputs.js';
import { LONG_LIST_NUMBERS, takeNumberLists } from '../../src/serve/number-lists.js';

const long = Array.from({ length: LONG_LIST_NUMBERS }, (_, index) => index / 3);

describe('long lists of numbers sent beside a call', () => {
  it('takes each long list of a list[float] parameter, leaving [] and the arguments it was given unchanged', () => {
    const args = { values: long, other: long, label: 'a' };
    const { arguments: sent, numberLists } = takeNumberLists(args, new Set(['values']));
    expect(sent).toEqual({ values: [], other: long, label: 'a' });
    expect(numberLists).toEqual([{ parameter: 'values', numbers: long }]);
    expect(args.values).toBe(long);
  });

  it('leaves as JSON a short list, one holding anything but numbers, and one holding -0 (Python reads `-0` as the integer 0)', () => {
    for (const values of [long.slice(1), [...long, null], [...long, -0], [...long.slice(1), '1']]) {
      const args = { values };
      expect(takeNumberLists(args, new Set(['values']))).toEqual({ arguments: args, numberLists: [] });
    }
  });

  it('knows a list[float] schema from one that constrains or converts its items otherwise', () => {
    expect(takesNumberList({ type: 'array', items: { type: 'number' }, title: 'Values' })).toBe(true);
    const others: Value[] = [
      { type: 'array', items: { type: 'integer' } },
      { type: 'array', items: { type: 'number', minimum: 0 } },
      { type: 'array', items: {} },
      { type: 'array', items: { type: 'number' }, uniqueItems: true },
      { anyOf: [{ type: 'array', items: { type: 'number' } }, { type: 'null' }] },
    ];
    for (const schema of others) {
      expect(takesNumberList(schema)).toBe(false);
    }
  });
});
