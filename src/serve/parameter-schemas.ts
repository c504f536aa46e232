import { isJsonObject, type Value } from '../worker/protocol.js';

/**
 * The JSON types a parameter's schema accepts at its top level, through the `anyOf` the
 * worker writes for Optional[X] and unions (python/apipod/_runtime/schema.py).
 */
export function acceptedTypes(schema: Value | undefined): Set<string> {
  if (!isJsonObject(schema)) return new Set();
  const types = new Set<string>(Array.isArray(schema.type) ? schema.type.map(String) : typeof schema.type === 'string' ? [schema.type] : []);
  if (Array.isArray(schema.anyOf)) for (const member of schema.anyOf) acceptedTypes(member).forEach((type) => types.add(type));
  return types;
}

/** The item schema of a list parameter, or of the list member of an Optional list or a union; undefined for others. */
export function listItemSchema(schema: Value | undefined): Value | undefined {
  if (!isJsonObject(schema)) return undefined;
  if (schema.type === 'array') return schema.items ?? {};
  return Array.isArray(schema.anyOf) ? schema.anyOf.map(listItemSchema).find((items) => items !== undefined) : undefined;
}
