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
 * Text arguments (a form, a query string) with every boolean word turned into its boolean,
 * for the parameters that take a boolean (or a list of them) and not a string too: for
 * `bool | str`, "yes" stays the text it is. Anything else is left for validation to judge.
 */
export function readTextBooleans(input: { [name: string]: unknown }, properties: { [name: string]: Value }): { [name: string]: unknown } {
  const read: { [name: string]: unknown } = { ...input };
  for (const [name, value] of Object.entries(input)) {
    const schema = properties[name];
    if (takesBooleanText(schema)) read[name] = booleanOf(value);
    else if (takesBooleanText(listItemSchema(schema))) read[name] = Array.isArray(value) ? value.map(booleanOf) : booleanOf(value);
  }
  return read;
}

function booleanOf(value: unknown): unknown {
  return typeof value === 'string' ? (BOOLEAN_WORDS.get(value.toLowerCase()) ?? value) : value;
}

function takesBooleanText(schema: Value | undefined): boolean {
  const types = acceptedTypes(schema);
  return types.has('boolean') && !types.has('string');
}
