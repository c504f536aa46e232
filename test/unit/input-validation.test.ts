import { describe, expect, it } from 'vitest';
import { endpointReport } from '../support/endpoint-report.js';
import { compileEndpointInputs } from '../../src/serve/endpoint-inputs.js';
import type { EndpointReport, Value } from '../../src/worker/protocol.js';

/** Schemas as the worker reports them (python/apipod/_runtime/schema.py). */
const OPTIONAL_INT: Value = { anyOf: [{ type: 'integer' }, { type: 'null' }], default: null };
const OPTIONAL_STRINGS: Value = { anyOf: [{ type: 'array', items: { type: 'string' } }, { type: 'null' }], default: null };
const BOX: Value = { type: 'object', properties: { width: { type: 'integer' } }, required: ['width'], additionalProperties: false };

function endpointWith(properties: { [name: string]: Value }, defs: { [name: string]: Value } = {}): EndpointReport {
  return endpointReport({ input_schema: { type: 'object', properties, additionalProperties: false, ...(Object.keys(defs).length ? { $defs: defs } : {}) } });
}

function problemsOf(endpoint: EndpointReport, input: Value): unknown {
  try {
    compileEndpointInputs(endpoint).validators.json(input);
    return 'valid';
  } catch (error) {
    return (error as { extra: { detail: unknown } }).extra.detail;
  }
}

describe('input validation messages', () => {
  it('refuses an integer JSON cannot carry exactly, rather than hand the function another number', () => {
    const endpoint = endpointWith({ seed: { type: 'integer' }, box: { $ref: '#/$defs/Box' }, scale: { type: 'number' } }, { Box: BOX });
    expect(problemsOf(endpoint, { seed: 9007199254740993, box: { width: -1e30 }, scale: 1e30 })).toEqual([
      { field: 'seed', message: 'is beyond 9007199254740991, past which JSON numbers lose digits; take it as a str parameter' },
      { field: 'box.width', message: 'is beyond -9007199254740991, past which JSON numbers lose digits; take it as a str parameter' },
    ]);
    expect(problemsOf(endpoint, { seed: 9007199254740991, box: { width: 3 } })).toBe('valid');
  });

  it('names the types an Optional accepts when the value fits none', () => {
    expect(problemsOf(endpointWith({ count: OPTIONAL_INT }), { count: 'seven' })).toEqual([{ field: 'count', message: 'must be an integer or null' }]);
  });

  it("names the exact item when the value fits one branch's type", () => {
    expect(problemsOf(endpointWith({ stop: OPTIONAL_STRINGS }), { stop: ['ok', 2] })).toEqual([{ field: 'stop[1]', message: 'must be a string' }]);
  });

  it("gives a referenced model's own problems for an Optional model", () => {
    const endpoint = endpointWith({ box: { anyOf: [{ $ref: '#/$defs/Box' }, { type: 'null' }] } }, { Box: BOX });
    expect(problemsOf(endpoint, { box: { width: 'wide' } })).toEqual([{ field: 'box.width', message: 'must be an integer' }]);
    expect(problemsOf(endpoint, { box: 'wide' })).toEqual([{ field: 'box', message: 'must be an object or null' }]);
  });

  it("gives the one branch's problem when the value has its type, and says plainly when several branches could have matched", () => {
    const typed: Value = { anyOf: [{ type: 'integer', minimum: 10 }, { type: 'string' }] };
    expect(problemsOf(endpointWith({ size: typed }), { size: 5 })).toEqual([{ field: 'size', message: 'must be >= 10' }]);
    const ranges: Value = { anyOf: [{ type: 'integer', minimum: 10 }, { type: 'integer', maximum: 2 }] };
    expect(problemsOf(endpointWith({ size: ranges }), { size: 5 })).toEqual([{ field: 'size', message: 'does not match any of the allowed types' }]);
  });
});

describe('text arguments (forms, query strings)', () => {
  const text = (properties: { [name: string]: Value }, input: Value) => {
    try {
      return compileEndpointInputs(endpointWith(properties)).validators.text(input);
    } catch (error) {
      return (error as { extra: { detail: unknown } }).extra.detail;
    }
  };

  it('reads a boolean from the words FastAPI and pydantic accept, in any case', () => {
    const flag = { flag: { type: 'boolean' } };
    for (const word of ['true', 'True', 'TRUE', '1', 'yes', 'Y', 'on', 't']) expect(text(flag, { flag: word })).toEqual({ flag: true });
    for (const word of ['false', 'False', '0', 'no', 'OFF', 'n', 'f']) expect(text(flag, { flag: word })).toEqual({ flag: false });
    expect(text(flag, { flag: 'maybe' })).toEqual([{ field: 'flag', message: 'must be a boolean' }]);
  });

  it('reads them in an Optional boolean and a list of booleans, and leaves a parameter that also takes text alone', () => {
    expect(text({ flag: { anyOf: [{ type: 'boolean' }, { type: 'null' }] } }, { flag: 'Yes' })).toEqual({ flag: true });
    expect(text({ flags: { type: 'array', items: { type: 'boolean' } } }, { flags: ['on', 'off'] })).toEqual({ flags: [true, false] });
    expect(text({ answer: { anyOf: [{ type: 'boolean' }, { type: 'string' }] } }, { answer: 'yes' })).toEqual({ answer: 'yes' });
  });

  it('keeps JSON bodies to JSON booleans', () => {
    expect(problemsOf(endpointWith({ flag: { type: 'boolean' } }), { flag: 'yes' })).toEqual([{ field: 'flag', message: 'must be a boolean' }]);
  });
});
