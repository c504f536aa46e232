import { isJsonObject, type Value } from '../worker/protocol.js';

type Json = { [key: string]: Value };

const LOCAL_DEFINITION = /^#\/\$defs\/(.+)$/;

/**
 * The `components/schemas` of an OpenAPI document, gathered from the endpoints' JSON Schemas:
 * a schema's `$defs` (pydantic models, enums) move here and its `#/$defs/X` references are
 * rewritten to `#/components/schemas/X`. Left in place, `#/$defs/X` would point at the root
 * of the OpenAPI document, where there is no such thing. One definition seen twice keeps
 * one entry; two different definitions of one name get `Name`, `Name2`, ...
 */
export class ComponentSchemas {
  readonly schemas: Json;
  private readonly nameOf = new Map<string, string>();

  constructor(initial: Json) {
    this.schemas = { ...initial };
  }

  adopt(schema: Json): Json {
    const { $defs: definitions, ...rest } = schema;
    if (!isJsonObject(definitions)) return schema;
    const names = new Map(Object.entries(definitions).map(([name, definition]) => [name, this.componentName(name, definition)]));
    const rewrite = (value: Value): Value => {
      if (Array.isArray(value)) return value.map(rewrite);
      if (!isJsonObject(value)) return value;
      return Object.fromEntries(
        Object.entries(value).map(([key, item]) => {
          const local = key === '$ref' && typeof item === 'string' ? LOCAL_DEFINITION.exec(item)?.[1] : undefined;
          const target = local === undefined ? undefined : names.get(local);
          return [key, target === undefined ? rewrite(item) : `#/components/schemas/${target}`];
        }),
      );
    };
    for (const [name, definition] of Object.entries(definitions)) this.schemas[names.get(name) as string] = rewrite(definition);
    return rewrite(rest) as Json;
  }

  private componentName(name: string, definition: Value): string {
    const key = `${name}\u0000${JSON.stringify(definition)}`;
    const known = this.nameOf.get(key);
    if (known !== undefined) return known;
    const base = name.replace(/[^A-Za-z0-9._-]/g, '_'); // the names OpenAPI allows for components
    let candidate = base;
    for (let suffix = 2; candidate in this.schemas; suffix += 1) candidate = `${base}${suffix}`;
    this.nameOf.set(key, candidate);
    this.schemas[candidate] = {}; // reserved until the caller fills it in
    return candidate;
  }
}
