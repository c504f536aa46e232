import type { Value } from '../worker/protocol.js';
import { acceptedTypes, listItemSchema } from './parameter-schemas.js';

/**
 * The words a form field or query string may use for a boolean, compared without case:
 * those pydantic 2 accepts for `bool` in lax mode, which FastAPI (and so the apipod
 * package's form parameters) applies. `requests.post(data={"flag": True})` sends `True`,
 * an HTML checkbox `on`.
 */
const BOOLEAN_WORDS: ReadonlyMap<string, boolean> = new Map([
  ...['1', 'on', 't', 'true', 'y', 'yes'].map((word) => [word, true] as const),
  ...['0', 'off', 'f', 'false', 'n', 'no'].map((word) => [word, false] as const),
]);

/**
 * Reads text arguments (a form, a query string) with every boolean word turned into its
 * boolean, for the parameters that take a boolean (or a list of them) and not a string too:
 * for `bool | str`, "yes" stays the text it is. Anything else is left for validation to judge.
 * The parameters are picked from the schema once, here, not at every call.
 */
export function textBooleanReader(properties: { [name: string]: Value }): (input: { [name: string]: unknown }) => { [name: string]: unknown } {
  const single = new Set<string>();
  const listed = new Set<string>();
  for (const [name, schema] of Object.entries(properties)) {
    if (takesBooleanText(schema)) single.add(name);
    else if (takesBooleanText(listItemSchema(schema))) listed.add(name);
  }
  if (single.size + listed.size === 0) return (input) => input;
  return (input) => {
    const read: { [name: string]: unknown } = { ...input };
    for (const [name, value] of Object.entries(input)) {
      if (single.has(name)) read[name] = booleanOf(value);
      else if (listed.has(name)) read[name] = Array.isArray(value) ? value.map(booleanOf) : booleanOf(value);
    }
    return read;
  };
}

function booleanOf(value: unknown): unknown {
  return typeof value === 'string' ? (BOOLEAN_WORDS.get(value.toLowerCase()) ?? value) : value;
}

function takesBooleanText(schema: Value | undefined): boolean {
  const types = acceptedTypes(schema);
  return types.has('boolean') && !types.has('string');
}
