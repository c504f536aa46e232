import type { HttpRequest } from '../http/http-request.js';
import { isJsonObject, type EndpointReport, type Value } from '../../worker/protocol.js';
import { HttpError } from '../http-error.js';
import { compileEndpointInputs, type EndpointInputs } from '../endpoint-inputs.js';
import { readArguments } from '../request-arguments.js';
import { FormFields, MultipartBody } from '../request-bodies.js';

type JsonObject = { [key: string]: Value };

/** A validated chat-completion body: `messages` is there; every other field passes through. */
export interface ChatRequestBody extends JsonObject {
  messages: Value[];
}

/**
 * How a chat endpoint takes its request: the client's body is the value of one parameter
 * (the one annotated ChatCompletionRequest); the function's other parameters keep their
 * defaults. The body is checked against that parameter's schema alone, so unknown fields
 * pass (`additionalProperties: true`) and problems name `messages`, not `request.messages`.
 */
export class ChatRequestReader {
  readonly parameter: string;
  private readonly inputs: EndpointInputs;

  constructor(endpoint: EndpointReport) {
    const found = findChatParameter(endpoint);
    if (!found) {
      throw new Error(`${endpoint.path} is reported as a chat endpoint but no parameter has the ChatCompletionRequest schema`);
    }
    this.parameter = found.name;
    const definitions = endpoint.input_schema.$defs;
    this.inputs = compileEndpointInputs({ ...endpoint, input_schema: { ...found.schema, ...(definitions ? { $defs: definitions } : {}) } });
  }

  /**
   * The request's body, validated. Invalid input is a 400 at the Chat Completions API's URLs
   * (`.../completions`), as chat-completion servers answer it, so a client raises its
   * BadRequest error with svc's message; at the endpoint's own path, where the apipod
   * toolkit's clients call it, a 422, as the toolkit answers it.
   */
  async read(request: HttpRequest): Promise<ChatRequestBody> {
    if (request.body instanceof MultipartBody || request.body instanceof FormFields) {
      throw new HttpError(415, 'unsupported_media_type', 'unsupported_content_type', 'a chat completion is sent as application/json');
    }
    try {
      const { arguments: body } = await readArguments(request, this.inputs, null);
      return body as ChatRequestBody;
    } catch (error) {
      const atChatCompletionsUrl = request.routeOptions.url?.endsWith('/completions') ?? false;
      if (error instanceof HttpError && error.status === 422 && atChatCompletionsUrl) {
        throw new HttpError(400, 'invalid_request', error.code, error.message, error.extra);
      }
      throw error;
    }
  }
}

/**
 * The parameter a chat endpoint's body fills: the one whose schema (or one of its anyOf
 * members, for an optional one) has `messages`. Also what an API document shows as the body.
 */
export function findChatParameter(endpoint: EndpointReport): { name: string; schema: JsonObject } | null {
  const properties = endpoint.input_schema.properties;
  if (!isJsonObject(properties)) return null;
  for (const [name, schema] of Object.entries(properties)) {
    const candidates = isJsonObject(schema) && Array.isArray(schema.anyOf) ? schema.anyOf : [schema];
    const chat = candidates.find((candidate) => isJsonObject(candidate) && isJsonObject(candidate.properties) && 'messages' in candidate.properties);
    if (isJsonObject(chat)) return { name, schema: chat };
  }
  return null;
}
