import { isJsonObject, type Value } from '../worker/protocol.js';

type JsonObject = { [key: string]: Value };

/**
 * A form's fields with a pydantic model parameter's fields gathered into it, as FastAPI reads
 * a form into a model (its "form models", which the apipod package serves: `def f(order:
 * Options)` takes `pam1=x&pam2=3`, and its OpenAPI document gives the model as the form's
 * schema). A field is gathered when it is no parameter of the endpoint itself and the model
 * parameter was not sent whole (as JSON text). A required model parameter whose fields all
 * have defaults, sent no field at all, gets `{}`, which the worker fills with the defaults,
 * as FastAPI does. JSON bodies are left alone: there a model is one object.
 */
export function gatherFormModels(fields: JsonObject, inputSchema: Value): JsonObject {
  if (!isJsonObject(inputSchema) || !isJsonObject(inputSchema.properties)) return fields;
  const parameters = inputSchema.properties;
  const required = new Set(Array.isArray(inputSchema.required) ? inputSchema.required.map(String) : []);
  const gathered: JsonObject = { ...fields };
  for (const [parameter, schema] of Object.entries(parameters)) {
    if (parameter in fields) continue;
    const model = modelSchemaOf(schema, inputSchema);
    if (model === undefined) continue;
    const names = Object.keys(model.properties as JsonObject).filter((name) => name in gathered && !(name in parameters));
    if (names.length === 0) {
      const modelRequires = Array.isArray(model.required) && model.required.length > 0;
      if (required.has(parameter) && !modelRequires) gathered[parameter] = {};
      continue;
    }
    gathered[parameter] = Object.fromEntries(names.map((name) => [name, gathered[name] as Value]));
    for (const name of names) delete gathered[name];
  }
  return gathered;
}

/** The object schema with named properties (a pydantic model's) that a parameter takes, through `$ref` and Optional's `anyOf`. */
function modelSchemaOf(schema: Value | undefined, root: JsonObject): JsonObject | undefined {
  if (!isJsonObject(schema)) return undefined;
  if (typeof schema.$ref === 'string') return modelSchemaOf(resolve(schema.$ref, root), root);
  if (isJsonObject(schema.properties) && (schema.type === undefined || schema.type === 'object')) return schema;
  if (!Array.isArray(schema.anyOf)) return undefined;
  const models = schema.anyOf.map((member) => modelSchemaOf(member, root)).filter((model) => model !== undefined);
  return models.length === 1 ? models[0] : undefined;
}

/** A local reference (`#/$defs/Options`), the only kind the worker writes. */
function resolve(reference: string, root: JsonObject): Value | undefined {
  if (!reference.startsWith('#/')) return undefined;
  let node: Value | undefined = root;
  for (const segment of reference.slice(2).split('/')) {
    node = isJsonObject(node) ? node[segment.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
  }
  return node;
}
