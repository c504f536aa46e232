import type { Compute } from '../deployment-target.js';
import { isJsonObject, type EndpointReport, type Value } from '../worker/protocol.js';
import { findChatParameter } from './chat/chat-request.js';
import { ComponentSchemas } from './component-schemas.js';
import { readParameters, type ParameterInput } from './endpoint-inputs.js';
import { fileModelComponents, fileModelReference, JOB_RESULT_COMPONENTS, uploadSchema } from './toolkit-schemas.js';

export interface ServiceDescription {
  title: string;
  version: string;
  compute: Compute;
  endpoints: readonly EndpointReport[];
}

type Json = { [key: string]: Value };

const ERROR_SCHEMA: Json = {
  type: 'object',
  properties: {
    error: {
      type: 'object',
      properties: {
        status: { type: 'integer' },
        type: { type: 'string' },
        code: { type: 'string' },
        message: { type: 'string' },
        detail: {
          type: 'array',
          items: { type: 'object', properties: { field: { type: 'string' }, message: { type: 'string' } } },
        },
      },
      required: ['status', 'type', 'code', 'message'],
    },
  },
  required: ['error'],
};

/**
 * One server-sent event, as OpenAPI 3.1 describes a `text/event-stream` body: its schema is
 * that of each event (3.2's `itemSchema`), whose `data` is a line of text, JSON or not.
 */
const SERVER_SENT_EVENT: Json = {
  type: 'object',
  properties: { event: { type: 'string' }, data: { type: 'string' }, id: { type: 'string' }, retry: { type: 'integer' } },
};

function errorResponse(description: string): Json {
  return { description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
}

/**
 * The errors any call can meet before or after the function (docs/errors.md has them all):
 * a client generated from the document, and a fuzzer reading it, know each status.
 */
function callErrors(method: string, { invalidInput, timesOut }: { invalidInput: string; timesOut: boolean }): Json {
  return {
    '400': errorResponse('the body (or a query percent-escape) is not valid JSON, form or multipart, nests deeper than 512 levels, or is not UTF-8'),
    ...(method === 'GET'
      ? {}
      : {
          '413': errorResponse('the body is larger than --max-body-size, or a multipart form has more than 1,000 parts'),
          '415': errorResponse('the body is neither JSON, a URL-encoded form nor multipart/form-data, or it is compressed (Content-Encoding)'),
        }),
    '422': errorResponse(invalidInput),
    '500': errorResponse('the function raised an exception, or its worker died'),
    '503': errorResponse('the queue is full, unread results fill the server, or it is starting or stopping; retry after the Retry-After seconds'),
    ...(timesOut ? { '504': errorResponse('the call ran past --endpoint-timeout') } : {}),
  };
}

/**
 * The OpenAPI 3.1 document of a service: one operation per endpoint and method, its JSON
 * Schema as the request body (or query parameters for GET), and the shared error shape.
 * OpenAPI 3.1 uses JSON Schema 2020-12, the dialect workers report, so schemas pass as they
 * are, but for their `$defs`, which go to components/schemas (see ComponentSchemas).
 *
 * It is also the apipod toolkit's document, which its client fastsdk reads to decide how to
 * call the service: `info.apipod` says the service is one (and whether it answers with
 * jobs), media are described with the toolkit's `*FileModel` components, and an endpoint
 * with media parameters has the toolkit's multipart body only. fastsdk sends JSON whenever
 * an operation lists it, and cannot put a file in JSON; svc still accepts JSON there.
 */
export function describeService(service: ServiceDescription): Json {
  const components = new ComponentSchemas({ Error: ERROR_SCHEMA });
  const mediaKinds = new Set<string>();
  const chatRequestSchema = (endpoint: EndpointReport, schema: Json): Json => {
    const definitions = endpoint.input_schema.$defs;
    return components.adopt(definitions === undefined ? schema : { ...schema, $defs: definitions });
  };
  const operationName = operationNames(service.endpoints);
  const paths: Json = {};
  for (const reported of service.endpoints) {
    const chat = reported.is_chat ? findChatParameter(reported) : null;
    if (chat) {
      paths[reported.path] = { post: describeChatOperation(reported, operationName(reported), chatRequestSchema(reported, chat.schema), reported.path) };
      continue;
    }
    const endpoint = {
      ...reported,
      input_schema: components.adopt(reported.input_schema),
      output_schema: withFileModels(components.adopt(reported.output_schema), mediaKinds) as Json,
    };
    const answersWithJob = service.compute === 'serverless' && !endpoint.direct;
    const parameters = readParameters(reported.input_schema);
    const operations: Json = {};
    for (const method of endpoint.methods) {
      operations[method.toLowerCase()] = describeOperation(endpoint, operationName(endpoint), method, { answersWithJob, mediaKinds, parameters });
    }
    paths[endpoint.path] = operations;
  }
  const firstChat = service.endpoints.find((endpoint) => endpoint.is_chat);
  const firstChatSchema = firstChat ? findChatParameter(firstChat) : null;
  if (firstChat && firstChatSchema) {
    const operation = describeChatOperation(firstChat, operationName(firstChat), chatRequestSchema(firstChat, firstChatSchema.schema), '/v1/chat/completions');
    paths['/v1/chat/completions'] = { post: { ...operation, operationId: 'chat_completions' } };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: service.title,
      version: service.version,
      description: 'Served by svc. Every endpoint is also reachable under /v1.',
      apipod: { compute: service.compute, version: service.version },
    },
    paths,
    components: {
      schemas: {
        ...components.schemas,
        ...fileModelComponents(mediaKinds),
        ...(service.compute === 'serverless' ? JOB_RESULT_COMPONENTS : {}),
      },
    },
  };
}

/** A result's media (a returned ImageFile, a list or dict of them) as the toolkit's FileModel references. */
function withFileModels(schema: Value, mediaKinds: Set<string>): Value {
  if (Array.isArray(schema)) return schema.map((item) => withFileModels(item, mediaKinds));
  if (!isJsonObject(schema)) return schema;
  const media = schema['x-media-type'];
  if (typeof media === 'string') {
    mediaKinds.add(media);
    return fileModelReference(media);
  }
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, withFileModels(value, mediaKinds)]));
}

/**
 * Operation ids must be unique, and generated clients name their methods after them: the
 * function's name, with its path as well when two endpoints share a function name (as
 * FastAPI does), so `run` at /predict and /predict2 give `run_predict` and `run_predict2`;
 * a name still taken (`run` at /a beside a function `run_a`) gets a number.
 */
function operationNames(endpoints: readonly EndpointReport[]): (endpoint: EndpointReport) => string {
  const uses = new Map<string, number>();
  for (const endpoint of endpoints) uses.set(endpoint.function, (uses.get(endpoint.function) ?? 0) + 1);
  const names = new Map<string, string>(); // by path: the document describes copies of the reports
  const taken = new Set(endpoints.filter((endpoint) => uses.get(endpoint.function) === 1).map((endpoint) => endpoint.function));
  for (const endpoint of endpoints) {
    if (uses.get(endpoint.function) === 1) {
      names.set(endpoint.path, endpoint.function);
      continue;
    }
    const wanted = `${endpoint.function}${endpoint.path}`.replace(/\W/g, '_');
    let name = wanted;
    for (let number = 2; taken.has(name); number++) name = `${wanted}_${number}`;
    taken.add(name);
    names.set(endpoint.path, name);
  }
  return (endpoint) => names.get(endpoint.path) ?? endpoint.function;
}

function describeOperation(
  endpoint: EndpointReport,
  name: string,
  method: string,
  { answersWithJob, mediaKinds, parameters }: { answersWithJob: boolean; mediaKinds: Set<string>; parameters: ReadonlyMap<string, ParameterInput> },
): Json {
  const hasMedia = [...parameters.values()].some((parameter) => parameter.upload !== null);
  const operation: Json = { operationId: `${name}_${method.toLowerCase()}`, summary: endpoint.function };
  if (endpoint.doc) operation.description = endpoint.doc;
  if (method === 'GET') operation.parameters = queryParameters(endpoint);
  else operation.requestBody = requestBody(endpoint, hasMedia ? { parameters, mediaKinds } : null);
  operation.responses = {
    '200': answersWithJob
      ? {
          description: 'the job: poll its links.status (or refresh_job_url) until it ends; its result is the function\'s',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/JobResult' } } },
        }
      : endpoint.is_generator
      ? {
          description:
            'the chunks the function yielded: joined into one string when every chunk is text, else as a list; with ' +
            '`Accept: text/event-stream`, server-sent events as it yields: a `chunk` event per item, `progress` events, then a ' +
            '`status` event with the job envelope',
          content: {
            'application/json': { schema: { anyOf: [{ type: 'string' }, endpoint.output_schema] } },
            'text/event-stream': { schema: SERVER_SENT_EVENT },
          },
        }
      : { description: 'the function result', content: { 'application/json': { schema: endpoint.output_schema } } },
    ...callErrors(method, { invalidInput: 'the input does not match the schema', timesOut: !answersWithJob }),
    '406': errorResponse("Accept takes neither JSON nor the result's media type; the message names what it can give"),
    ...(answersWithJob ? { '429': errorResponse("this API key's jobs fill its share of the job store; read their results, or retry after the Retry-After seconds") } : {}),
  };
  return operation;
}

/** A chat endpoint takes the chat request itself as the body and answers a chat completion. */
function describeChatOperation(endpoint: EndpointReport, name: string, requestSchema: Json, path: string): Json {
  // OpenAI's clients read a 400 for a bad chat request; at the endpoint's own path it is svc's 422.
  const invalidChat = 'the request is not a valid chat request';
  const errors = callErrors('POST', { invalidInput: invalidChat, timesOut: true });
  if (path.endsWith('/completions')) {
    errors['400'] = errorResponse(`${invalidChat}, or its body is not valid JSON`);
    delete errors['422'];
  }
  return {
    operationId: `${name}_chat`,
    summary: `${endpoint.function} (OpenAI-compatible chat completion)`,
    ...(endpoint.doc ? { description: endpoint.doc } : {}),
    requestBody: { required: true, content: { 'application/json': { schema: requestSchema } } },
    responses: {
      '200': {
        description: 'a chat.completion object, or chat.completion.chunk server-sent events with "stream": true',
        content: { 'application/json': { schema: { type: 'object' } }, 'text/event-stream': { schema: SERVER_SENT_EVENT } },
      },
      ...errors,
    },
  };
}

function requestBody(endpoint: EndpointReport, media: { parameters: ReadonlyMap<string, ParameterInput>; mediaKinds: Set<string> } | null): Json {
  const content: Json = media
    ? { 'multipart/form-data': { schema: multipartSchema(endpoint, media.parameters, media.mediaKinds) } }
    : { 'application/json': { schema: endpoint.input_schema } };
  return { required: (endpoint.input_schema.required as Value[] | undefined)?.length !== 0, content };
}

/**
 * Media parameters become file parts in a multipart form, described as the toolkit
 * describes them (an upload, a FileModel or a string); a list of them, repeated parts.
 */
function multipartSchema(endpoint: EndpointReport, parameters: ReadonlyMap<string, ParameterInput>, mediaKinds: Set<string>): Json {
  const properties: Json = {};
  for (const [name, schema] of Object.entries(propertiesOf(endpoint))) {
    const upload = parameters.get(name)?.upload ?? null;
    if (upload === null) {
      properties[name] = schema;
      continue;
    }
    mediaKinds.add(upload.media);
    const file = uploadSchema(upload.media);
    // The docstring's help for the parameter stays with it.
    const help: Json = isJsonObject(schema) && typeof schema.description === 'string' ? { description: schema.description } : {};
    properties[name] = upload.repeated ? { type: 'array', items: file, ...help } : { ...file, ...help };
  }
  return { ...endpoint.input_schema, properties };
}

function queryParameters(endpoint: EndpointReport): Value[] {
  const required = new Set((endpoint.input_schema.required as string[] | undefined) ?? []);
  return Object.entries(propertiesOf(endpoint)).map(([name, schema]) => ({
    name,
    in: 'query',
    required: required.has(name),
    schema,
  }));
}

function propertiesOf(endpoint: EndpointReport): { [name: string]: Value } {
  const properties = endpoint.input_schema.properties;
  return isJsonObject(properties) ? properties : {};
}
