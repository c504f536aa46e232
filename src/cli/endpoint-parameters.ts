import { SvcError } from '../svc-error.js';
import { jsonTypeOf } from '../worker/protocol.js';
import { closestName } from './closest-name.js';

type Json = { [key: string]: unknown };

/** One parameter of an endpoint as its OpenAPI document describes it, for typing `-i name=value`. */
export interface ParameterShape {
  /** The JSON types it takes (`integer`, `string`, ...); empty when its schema says none (any value). */
  types: ReadonlySet<string>;
  /** The JSON types a list's items take, when it takes a list. */
  itemTypes: ReadonlySet<string> | null;
  /** It takes an uploaded file (a `format: binary` string); `repeatedFile`, a list of them. */
  takesFile: boolean;
  repeatedFile: boolean;
}

/** How an endpoint takes its input: a JSON body, a multipart form (it has file parameters), or a query string (GET). */
export type InputEncoding = 'json' | 'multipart' | 'query';

export interface EndpointParameters {
  /** The path as the document lists it. */
  path: string;
  encoding: InputEncoding;
  parameters: ReadonlyMap<string, ParameterShape>;
}

/**
 * The parameters of the operation `method` at `path` in an OpenAPI 3.x document (the one
 * `svc start` serves, or the apipod toolkit's): a path is found as it is written, without
 * svc's `/v1` prefix, or as the toolkit spells it (`/make_fries` at `/make-fries`). A path or
 * method the document does not list is a usage error naming those it does.
 */
export function findEndpointParameters(document: unknown, path: string, method: string): EndpointParameters {
  const paths = isObject(document) && isObject(document.paths) ? document.paths : null;
  if (paths === null) throw new SvcError('request-failed', 'the service\'s /openapi.json lists no paths, so -i cannot tell the types of the inputs; send them with -d JSON');
  const wanted = pathOf(path);
  const listed = Object.keys(paths);
  const found = [wanted, wanted.replace(/^\/v1(?=\/)/, '')].flatMap((candidate) => listed.filter((key) => key === candidate || toolkitSpelling(key) === toolkitSpelling(candidate)))[0];
  if (found === undefined) {
    const endpoints = listed.filter((key) => !key.startsWith('/v1/'));
    const suggestion = closestName(wanted, endpoints);
    throw new SvcError('usage', `${wanted} is no endpoint of the service (it has ${endpoints.join(', ') || 'none'})${suggestion ? `. Did you mean ${suggestion}?` : ''}`);
  }
  const operations = paths[found] as Json;
  const operation = operations[method.toLowerCase()];
  if (!isObject(operation)) {
    const methods = Object.keys(operations).map((name) => name.toUpperCase());
    throw new SvcError('usage', `${found} takes ${methods.join(', ')}, not ${method}${methods.includes('GET') ? ' (--method GET)' : ''}`);
  }
  const root = document as Json;
  if (Array.isArray(operation.parameters)) {
    const parameters = new Map<string, ParameterShape>();
    for (const parameter of operation.parameters.map((item) => resolve(item, root))) {
      if (isObject(parameter) && parameter.in === 'query' && typeof parameter.name === 'string') parameters.set(parameter.name, shapeOf(parameter.schema, root));
    }
    return { path: found, encoding: 'query', parameters };
  }
  const content = isObject(operation.requestBody) && isObject(operation.requestBody.content) ? operation.requestBody.content : {};
  const encoding = 'application/json' in content || !('multipart/form-data' in content) ? 'json' : 'multipart';
  const media = content[encoding === 'json' ? 'application/json' : 'multipart/form-data'];
  const schema = resolve(isObject(media) ? media.schema : undefined, root);
  const properties = isObject(schema) && isObject(schema.properties) ? schema.properties : {};
  const parameters = new Map(Object.entries(properties).map(([name, property]) => [name, shapeOf(property, root)] as const));
  return { path: found, encoding, parameters };
}

function shapeOf(schema: unknown, root: Json): ParameterShape {
  const members = membersOf(schema, root);
  const items = members.flatMap((member) => (member.type === 'array' ? membersOf(member.items, root) : []));
  const isFile = (member: Json) => member.type === 'string' && member.format === 'binary';
  const repeatedFile = items.some(isFile);
  return {
    types: typesOf(members),
    itemTypes: members.some((member) => member.type === 'array') ? typesOf(items) : null,
    takesFile: repeatedFile || members.some(isFile),
    repeatedFile,
  };
}

/** A schema's alternatives, through `$ref`, `anyOf` and `oneOf` (Optional[X] and unions). */
function membersOf(schema: unknown, root: Json, depth = 0): Json[] {
  const resolved = resolve(schema, root);
  if (!isObject(resolved) || depth > 16) return [];
  const alternatives = [resolved.anyOf, resolved.oneOf].filter(Array.isArray).flat();
  if (alternatives.length > 0) return alternatives.flatMap((member) => membersOf(member, root, depth + 1));
  return [resolved];
}

function typesOf(members: readonly Json[]): Set<string> {
  const types = new Set<string>();
  for (const member of members) {
    for (const type of [member.type].flat()) if (typeof type === 'string') types.add(type);
    if (member.type === undefined && isObject(member.properties)) types.add('object');
    if (member.type === undefined && Array.isArray(member.enum)) for (const value of member.enum) types.add(jsonTypeOf(value));
  }
  return types;
}


/** A local `$ref` (`#/components/schemas/Order`), followed to what it names. */
function resolve(schema: unknown, root: Json): unknown {
  let node = schema;
  for (let hops = 0; isObject(node) && typeof node.$ref === 'string' && hops < 16; hops++) {
    const reference: string = node.$ref;
    if (!reference.startsWith('#/')) return {};
    node = reference
      .slice(2)
      .split('/')
      .reduce<unknown>((parent, segment) => (isObject(parent) ? parent[segment.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined), root);
  }
  return node;
}

/** The path of a path or of a whole URL, without a trailing slash. */
function pathOf(path: string): string {
  const bare = /^[a-z][a-z\d+.-]*:\/\//i.test(path) ? new URL(path).pathname : `/${path.replace(/^\/+/, '')}`;
  return bare.length > 1 ? bare.replace(/\/+$/, '') : bare;
}

/** The apipod toolkit's route name: lower case, each run of other characters than letters, digits and `/` one `-`. */
function toolkitSpelling(path: string): string {
  return path.toLowerCase().replace(/[^a-z0-9/]+/g, '-');
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
