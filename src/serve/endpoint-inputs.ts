import { isJsonObject, type EndpointReport, type Value } from '../worker/protocol.js';
import { compileValidators, type InputValidator } from './input-validation.js';

type JsonObject = { [key: string]: Value };

/** A parameter that takes multipart uploads. */
export interface FileUpload {
  /** A list of media: one part per file, under the parameter's name. */
  repeated: boolean;
  /** The worker's `x-media-type`: file, image, audio or video. */
  media: string;
}

/** The pydantic model a parameter takes, whose fields a form may send one by one (form-models.ts). */
export interface FormModel {
  fields: readonly string[];
  /** Whether the model requires a field: if not, a required parameter sent no field at all gets `{}`. */
  requiresField: boolean;
}

/**
 * What one parameter accepts, read from its JSON Schema once. The worker writes Optional[X]
 * and unions as `anyOf`, and marks media with `x-media-type` (python/apipod/_runtime/schema.py).
 */
export interface ParameterInput {
  /** The JSON types its schema accepts at its top level, through `anyOf`. */
  types: ReadonlySet<string>;
  /** The JSON types of its list's items (the list member's, for an Optional list or a union); null when it takes no list. */
  itemTypes: ReadonlySet<string> | null;
  /** The multipart uploads it takes; null when it takes none. */
  upload: FileUpload | null;
  /** Where a form's or a query string's boolean words become booleans: in its value, in its list's items, or nowhere. */
  textBooleans: 'value' | 'items' | null;
  formModel: FormModel | null;
}

/** What an endpoint accepts, compiled once when its routes are registered, and read by the request path. */
export interface EndpointInputs {
  /** Each parameter by name, in the schema's order. */
  parameters: ReadonlyMap<string, ParameterInput>;
  required: ReadonlySet<string>;
  /** The parameter a JSON body fills whole (a schema endpoint's request model); null for others. */
  bodyParameter: string | null;
  /**
   * The media parameters whose http(s) URLs the server downloads, each with whether it takes
   * a list: a parameter that also takes text (`ImageFile | str`) is left out, and gets a URL as its text.
   */
  mediaUrlParameters: ReadonlyMap<string, boolean>;
  /** JSON bodies as sent; text (query strings, forms) with boolean words read and coerced to the schema's types. */
  validators: { json: InputValidator; text: InputValidator };
  /**
   * Whether a valid JSON body may reach the worker as the client wrote it rather than as the
   * gateway would write it again: not when an integer is expected anywhere, as `1.0` or `1e2`
   * validate as integers here but would be Python floats (the gateway writes them `1`, `100`).
   */
  takesJsonText: boolean;
  /**
   * The parameters whose long strings a JSON body may hand to the worker undecoded
   * (long-strings.ts): those that take every string, which the empty string stands in for
   * while the rest is validated. None for a schema endpoint, whose body is one model.
   */
  longStringParameters: ReadonlySet<string>;
  /** Of those, the media parameters that take one file: their plain base64 is decoded by the gateway (plain-base64.ts). */
  base64Parameters: ReadonlySet<string>;
  /** The parameters that take a list of numbers (`list[float]`), whose long lists go to the worker as doubles (number-lists.ts). */
  numberListParameters: ReadonlySet<string>;
}

export function compileEndpointInputs(endpoint: Pick<EndpointReport, 'input_schema' | 'body_parameter'>): EndpointInputs {
  const schema = endpoint.input_schema;
  const parameters = readParameters(schema);
  const { mediaUrlParameters, longStringParameters, base64Parameters } = stringInputs(endpoint, parameters);
  const properties = propertiesOf(schema);
  const compiled = compileValidators(schema);
  const readBooleans = textBooleanReader(parameters);
  return {
    parameters,
    required: new Set(Array.isArray(schema.required) ? schema.required.map(String) : []),
    bodyParameter: endpoint.body_parameter,
    mediaUrlParameters,
    validators: { json: compiled.json, text: (input) => compiled.text(isJsonObject(input) ? readBooleans(input) : input) },
    takesJsonText: !JSON.stringify(schema).includes('"integer"'),
    longStringParameters,
    base64Parameters,
    numberListParameters: new Set(endpoint.body_parameter === null ? Object.keys(properties).filter((name) => takesNumberList(properties[name])) : []),
  };
}

/** An endpoint's `base64Parameters` (EndpointInputs), read from its schema alone: what a job's call decodes (job-media-files.ts). */
export function base64ParametersOf(endpoint: Pick<EndpointReport, 'input_schema' | 'body_parameter'>): ReadonlySet<string> {
  return stringInputs(endpoint, readParameters(endpoint.input_schema)).base64Parameters;
}

/** The parameters a string may stand for: a media URL, every string (long-strings.ts), a media file's base64. */
function stringInputs(
  endpoint: Pick<EndpointReport, 'input_schema' | 'body_parameter'>,
  parameters: ReadonlyMap<string, ParameterInput>,
): Pick<EndpointInputs, 'mediaUrlParameters' | 'longStringParameters' | 'base64Parameters'> {
  const properties = propertiesOf(endpoint.input_schema);
  const mediaUrlParameters = new Map<string, boolean>();
  for (const [name, parameter] of parameters) {
    if (parameter.upload !== null && !takesTextOfItsOwn(properties[name])) mediaUrlParameters.set(name, parameter.upload.repeated);
  }
  const longStringParameters = new Set(endpoint.body_parameter === null ? Object.keys(properties).filter((name) => takesEveryString(properties[name])) : []);
  const base64Parameters = new Set([...longStringParameters].filter((name) => mediaUrlParameters.get(name) === false));
  return { mediaUrlParameters, longStringParameters, base64Parameters };
}

/** Keywords that describe a value without constraining it. */
const DESCRIPTIVE_KEYWORDS = ['title', 'description', 'default', 'examples'];
const STRING_KEYWORDS = new Set(['type', ...DESCRIPTIVE_KEYWORDS]);
const UNION_KEYWORDS = new Set(['anyOf', 'x-media-type', ...DESCRIPTIVE_KEYWORDS]);
const LIST_KEYWORDS = new Set(['items', ...STRING_KEYWORDS]);

/** A list of numbers and nothing else (`list[float]`), whose long lists go to the worker as doubles (number-lists.ts). */
export function takesNumberList(schema: Value | undefined): boolean {
  if (!isJsonObject(schema) || schema.type !== 'array' || !isJsonObject(schema.items)) return false;
  const { items } = schema;
  return Object.keys(schema).every((keyword) => LIST_KEYWORDS.has(keyword)) && items.type === 'number' && Object.keys(items).every((keyword) => STRING_KEYWORDS.has(keyword));
}

/**
 * A schema every string satisfies: `str` without constraints, or a union with such a member
 * (`Optional[str]`, a media parameter's base64).
 */
function takesEveryString(schema: Value | undefined): boolean {
  if (!isJsonObject(schema)) return false;
  if ('type' in schema) return schema.type === 'string' && Object.keys(schema).every((keyword) => STRING_KEYWORDS.has(keyword));
  return Array.isArray(schema.anyOf) && Object.keys(schema).every((keyword) => UNION_KEYWORDS.has(keyword)) && schema.anyOf.some(takesEveryString);
}

/** Each parameter of an input schema and what it accepts; also what the API document describes. */
export function readParameters(inputSchema: JsonObject): ReadonlyMap<string, ParameterInput> {
  const parameters = new Map<string, ParameterInput>();
  for (const [name, schema] of Object.entries(propertiesOf(inputSchema))) {
    const items = listItemSchema(schema);
    const model = modelSchemaOf(schema, inputSchema);
    parameters.set(name, {
      types: acceptedTypes(schema),
      itemTypes: items === undefined ? null : acceptedTypes(items),
      upload: fileUploadOf(schema),
      textBooleans: takesBooleanText(schema) ? 'value' : takesBooleanText(items) ? 'items' : null,
      formModel:
        model === undefined
          ? null
          : { fields: Object.keys(model.properties as JsonObject), requiresField: Array.isArray(model.required) && model.required.length > 0 },
    });
  }
  return parameters;
}

function propertiesOf(inputSchema: JsonObject): JsonObject {
  return isJsonObject(inputSchema.properties) ? inputSchema.properties : {};
}

function acceptedTypes(schema: Value | undefined): Set<string> {
  if (!isJsonObject(schema)) return new Set();
  const types = new Set<string>(Array.isArray(schema.type) ? schema.type.map(String) : typeof schema.type === 'string' ? [schema.type] : []);
  if (Array.isArray(schema.anyOf)) for (const member of schema.anyOf) acceptedTypes(member).forEach((type) => types.add(type));
  return types;
}

/** The item schema of a list parameter, or of the list member of an Optional list or a union; undefined for others. */
function listItemSchema(schema: Value | undefined): Value | undefined {
  if (!isJsonObject(schema)) return undefined;
  if (schema.type === 'array') return schema.items ?? {};
  return Array.isArray(schema.anyOf) ? schema.anyOf.map(listItemSchema).find((items) => items !== undefined) : undefined;
}

/**
 * Whether a parameter takes uploads: a media type (ImageFile, bytes, ...), a list of them,
 * or a union holding one (Optional[ImageFile], `ImageFile | str`), whose upload goes to its
 * media member (the worker prefers that member for a file), or its list member when it has one.
 */
function fileUploadOf(schema: Value | undefined): FileUpload | null {
  const members = isMediaSchema(schema) || !isJsonObject(schema) || !Array.isArray(schema.anyOf) ? [schema] : schema.anyOf;
  const single = members.filter(isMediaSchema);
  const items = members.flatMap((member) => (isJsonObject(member) && member.type === 'array' ? [withoutNull(member.items)] : [])).filter(isMediaSchema);
  // One file or a list of them (`ImageFile | list[ImageFile]`) takes its parts as a list, one
  // part too, as FastAPI reads a form field whose union holds a list.
  if (items.length > 0) return { repeated: true, media: mediaOf([...single, ...items]) };
  return single.length > 0 ? { repeated: false, media: mediaOf(single) } : null;
}

/** The kind of file a form input asks for: the members' own when they agree, else any file. */
function mediaOf(schemas: JsonObject[]): string {
  const kinds = new Set(schemas.map((schema) => String(schema['x-media-type'])));
  return kinds.size === 1 ? [...kinds][0]! : 'file';
}

function isMediaSchema(schema: Value | undefined): schema is JsonObject {
  return isJsonObject(schema) && 'x-media-type' in schema;
}

function withoutNull(schema: Value | undefined): Value | undefined {
  if (!isJsonObject(schema) || !Array.isArray(schema.anyOf)) return schema;
  const others = schema.anyOf.filter((member) => !(isJsonObject(member) && member.type === 'null'));
  return others.length === 1 ? others[0] : schema;
}

/** `ImageFile | str`: a member other than media (and null) that takes a string. */
function takesTextOfItsOwn(schema: Value | undefined): boolean {
  if (!isJsonObject(schema) || 'x-media-type' in schema || !Array.isArray(schema.anyOf)) return false;
  return schema.anyOf.some((member) => isJsonObject(member) && !('x-media-type' in member) && acceptedTypes(member).has('string'));
}

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
 * A parameter takes boolean words when it takes a boolean (or a list of them) and not a
 * string too: for `bool | str`, "yes" stays the text it is.
 */
function takesBooleanText(schema: Value | undefined): boolean {
  const types = acceptedTypes(schema);
  return types.has('boolean') && !types.has('string');
}

/** Text arguments with every boolean word turned into its boolean where the parameter takes one; the rest is left for validation to judge. */
function textBooleanReader(parameters: ReadonlyMap<string, ParameterInput>): (input: { [name: string]: unknown }) => { [name: string]: unknown } {
  if (![...parameters.values()].some((parameter) => parameter.textBooleans !== null)) return (input) => input;
  return (input) => {
    const read: { [name: string]: unknown } = { ...input };
    for (const [name, value] of Object.entries(input)) {
      const where = parameters.get(name)?.textBooleans;
      if (where === 'value') read[name] = booleanOf(value);
      else if (where === 'items') read[name] = Array.isArray(value) ? value.map(booleanOf) : booleanOf(value);
    }
    return read;
  };
}

function booleanOf(value: unknown): unknown {
  return typeof value === 'string' ? (BOOLEAN_WORDS.get(value.toLowerCase()) ?? value) : value;
}

/**
 * The object schema with named properties (a pydantic model's) that a parameter takes, through
 * `$ref` and Optional's `anyOf`. Read at start for every endpoint, so a reference that leads
 * back to itself ends the search rather than the server.
 */
function modelSchemaOf(schema: Value | undefined, root: JsonObject, followed: ReadonlySet<string> = new Set()): JsonObject | undefined {
  if (!isJsonObject(schema)) return undefined;
  if (typeof schema.$ref === 'string') {
    return followed.has(schema.$ref) ? undefined : modelSchemaOf(resolve(schema.$ref, root), root, new Set([...followed, schema.$ref]));
  }
  if (isJsonObject(schema.properties) && (schema.type === undefined || schema.type === 'object')) return schema;
  if (!Array.isArray(schema.anyOf)) return undefined;
  const models = schema.anyOf.map((member) => modelSchemaOf(member, root, followed)).filter((model) => model !== undefined);
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
