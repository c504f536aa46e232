import { InvalidArgumentError } from 'commander';
import { SvcError } from '../svc-error.js';
import { closestName } from './closest-name.js';
import type { EndpointParameters } from './endpoint-parameters.js';

/** `-i name=value` as given, in order. */
export interface InputSpec {
  name: string;
  text: string;
}

/** The inputs typed: values as JSON, and the files to upload (paths, in order) by parameter. */
export interface TypedInputs {
  values: Record<string, unknown>;
  files: Map<string, string[]>;
}

/** The words read as a boolean, as the gateway reads a form's (pydantic's lax mode). */
const BOOLEAN_WORDS: ReadonlyMap<string, boolean> = new Map([
  ...['1', 'on', 't', 'true', 'y', 'yes'].map((word) => [word, true] as const),
  ...['0', 'off', 'f', 'false', 'n', 'no'].map((word) => [word, false] as const),
]);

const INTEGER = /^[+-]?\d+$/;
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** `-i name=value`: commander's parser, collecting them; a usage error when it has no `=`. */
export function readInputSpec(text: string, previous: InputSpec[] = []): InputSpec[] {
  const equals = text.indexOf('=');
  if (equals <= 0) throw new InvalidArgumentError('expected name=value, or name=@file for a file');
  return [...previous, { name: text.slice(0, equals), text: text.slice(equals + 1) }];
}

/**
 * Types each `-i` by its parameter's schema, as Cog's `predict -i` does: an integer, number
 * or boolean parameter parses its text, a list or object takes JSON (and a list takes each
 * repeated `-i` as one item), a string takes the text as it is; `@path` names a file for a
 * file parameter. A name the endpoint does not take, or a value its parameter cannot take,
 * is a usage error naming the parameter.
 */
export function typeInputs(specs: readonly InputSpec[], endpoint: EndpointParameters): TypedInputs {
  const values: Record<string, unknown> = {};
  const files = new Map<string, string[]>();
  const given = new Set<string>();
  for (const { name, text } of specs) {
    const shape = endpoint.parameters.get(name);
    if (shape === undefined) throw unknownParameter(name, endpoint);
    const repeats = shape.repeatedFile || shape.itemTypes !== null;
    if (given.has(name) && !repeats) throw new SvcError('usage', `-i ${name} is given more than once, and ${endpoint.path} takes one value for it`);
    given.add(name);
    if (text.startsWith('@')) {
      if (!shape.takesFile) throw new SvcError('usage', `-i ${name}=${text}: ${name} is no file parameter of ${endpoint.path} (it takes ${describeTypes(shape.types)}); send text that starts with @ with -d`);
      if (text === '@') throw new SvcError('usage', `-i ${name}=@ needs a file name: ${name}=@photo.png`);
      files.set(name, [...(files.get(name) ?? []), text.slice(1)]);
      continue;
    }
    if (files.has(name)) throw new SvcError('usage', `-i ${name} is given both as files and as text; give all its items one way`);
    if (shape.itemTypes !== null && !(text.trimStart().startsWith('[') && shape.types.has('array'))) {
      // One item of a list, repeated `-i` adding the others.
      const items = Array.isArray(values[name]) ? (values[name] as unknown[]) : [];
      values[name] = [...items, typeText(name, text, shape.itemTypes)];
    } else {
      values[name] = typeText(name, text, shape.types);
    }
  }
  return { values, files };
}

function typeText(name: string, text: string, types: ReadonlySet<string>): unknown {
  if (types.size === 0) return parseJsonOr(text, text);
  if (types.has('integer') && INTEGER.test(text)) {
    const value = Number(text);
    if (!Number.isSafeInteger(value)) throw new SvcError('usage', `-i ${name}=${text}: beyond the integers JSON carries exactly (±(2^53 - 1))`);
    return value;
  }
  if (types.has('number') && NUMBER.test(text)) return Number(text);
  const word = BOOLEAN_WORDS.get(text.toLowerCase());
  if (types.has('boolean') && word !== undefined) return word;
  const opens = text.trimStart()[0];
  if ((opens === '[' && types.has('array')) || (opens === '{' && types.has('object'))) {
    const value = parseJsonOr(text, undefined);
    if (value === undefined) throw new SvcError('usage', `-i ${name}: not valid JSON: ${text}`);
    return value;
  }
  if (text === 'null' && types.has('null')) return null;
  if (types.has('string')) return text;
  throw new SvcError('usage', `-i ${name}=${text}: ${name} takes ${describeTypes(types)}`);
}

function describeTypes(types: ReadonlySet<string>): string {
  const words: Record<string, string> = { integer: 'an integer', number: 'a number', boolean: 'a boolean (true or false)', string: 'text', array: 'a JSON list', object: 'a JSON object', null: 'null' };
  const described = [...types].map((type) => words[type] ?? type);
  return described.length === 0 ? 'any JSON value' : described.join(' or ');
}

function parseJsonOr<T>(text: string, fallback: T): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return fallback;
  }
}

function unknownParameter(name: string, endpoint: EndpointParameters): SvcError {
  const names = [...endpoint.parameters.keys()];
  const suggestion = closestName(name, names);
  const takes = names.length === 0 ? 'takes no parameters' : `takes ${names.join(', ')}`;
  return new SvcError('usage', `-i ${name}: ${endpoint.path} has no parameter ${name}; it ${takes}${suggestion ? `. Did you mean ${suggestion}?` : ''}`);
}
