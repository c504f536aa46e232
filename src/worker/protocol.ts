/**
 * The messages between the gateway and a worker (docs/worker-protocol.md), defined once on
 * this side. python/apipod/_runtime/protocol.py is the other side; both are tested against
 * test/fixtures/protocol/*.json so the two cannot drift.
 */

import { endianness } from 'node:os';
import { COMPUTE_VALUES, PROVIDER_VALUES } from '../deployment-target.js';
import type { Compute, Provider } from '../deployment-target.js';

export const PROTOCOL_VERSION = 9;

/**
 * The longest event line a worker sends (it is told so in APIPOD_MAX_EVENT_BYTES and fails a
 * larger result with ResultTooLarge), and the most base64 a result's files are inlined
 * into: the gateway holds a result as one JavaScript string, which V8 caps at ~512 M
 * characters, and answers with the two together.
 */
export const MAX_EVENT_BYTES = 200 * 2 ** 20;
export const MAX_INLINE_MEDIA_CHARS = 200 * 2 ** 20;

/**
 * How deep arrays and objects may nest in a value either way: the gateway refuses deeper
 * input, and a worker (told so in APIPOD_MAX_VALUE_DEPTH) makes its Python deep enough to
 * carry it through decoding, the function and encoding, and fails a deeper result with
 * ResultTooDeep. Python's json module gives up near 1,000 levels, and the gateway's own
 * JSON.stringify a few thousand levels in.
 */
export const MAX_VALUE_DEPTH = 512;

/** Plain JSON, as it travels on the pipes. */
export type Value = null | boolean | number | string | Value[] | { [key: string]: Value };

/** A payload above 64 KiB travels as a temporary file; the receiver reads and deletes it. */
export type FileReference = {
  $file: { path: string; file_name: string | null; content_type: string | null };
};

/** A media value inline: what a Python media object's `to_json()` returns. */
export type MediaValue = {
  file_name: string | null;
  content_type: string | null;
  content: string;
};

export interface ErrorInfo {
  /** The Python exception's class name, e.g. "ValueError". */
  type: string;
  message: string;
  /** The formatted Python traceback. */
  traceback: string;
  /** The argument the worker could not convert to its parameter's type (the caller's fault), else null. */
  argument: string | null;
  /**
   * The function refused its input by raising the apipod toolkit's JobException
   * (FileUploadException, ...): the caller's fault too, which the toolkit answers with a 422.
   */
  rejects_input: boolean;
}

export interface EndpointReport {
  path: string;
  methods: string[];
  function: string;
  doc: string | null;
  is_async: boolean;
  is_generator: boolean;
  is_chat: boolean;
  /** `use_queue=False`: answered with its result under serverless compute too, never as a job unless asked. */
  direct: boolean;
  /**
   * The one parameter whose value is the whole JSON body, as the apipod toolkit takes a
   * socaity-schemas request model (`request: EmbeddingRequest` takes `{"input": ...}`); null
   * for every other endpoint, whose body holds its parameters by name.
   */
  body_parameter: string | null;
  input_schema: { [key: string]: Value };
  output_schema: { [key: string]: Value };
  injected: string[];
}

export interface AppReport {
  title: string | null;
  compute: Compute;
  provider: Provider;
}

export type SetupStage = 'import' | 'lifespan' | 'schema';
const SETUP_STAGES: readonly SetupStage[] = ['import', 'lifespan', 'schema'];

// Commands: gateway -> worker; call and shutdown on fd 3, cancel on fd 5.
export interface CallCommand {
  type: 'call';
  call: string;
  endpoint: string;
  arguments: { [parameter: string]: Value };
  /** Parameters whose strings follow the line, each as its UTF-8 bytes and a newline (encodeCallWithStrings). */
  texts?: string[];
  /** Parameters whose lists of numbers follow the texts, each as base64 of its doubles and a newline (encodeCallWithStrings). */
  numbers?: string[];
  /** The size in bytes of each line that follows (texts, then numbers), newline not counted: the worker reads each straight into a buffer of its size. */
  line_bytes?: number[];
}

/** A parameter's long list of numbers (a list[float]): it travels beside its call as doubles, not as JSON. */
export interface NumberList {
  parameter: string;
  numbers: readonly number[];
}

/** A parameter's string as UTF-8 bytes, with no newline in them: it travels beside its call, undecoded. */
export interface LongString {
  parameter: string;
  bytes: Buffer;
}
export interface CancelCommand {
  type: 'cancel';
  call: string;
}
/** Takes back calls sent behind a running one, to run them in another worker (fd 5, as it may come mid-call). */
export interface WithdrawCommand {
  type: 'withdraw';
  calls: string[];
}
export interface ShutdownCommand {
  type: 'shutdown';
}
export type Command = CallCommand | CancelCommand | WithdrawCommand | ShutdownCommand;

// Events: worker -> gateway, fd 4.
export interface ReadyEvent {
  type: 'ready';
  protocol: number;
  python: string;
  app: AppReport;
  endpoints: EndpointReport[];
}
export interface SetupFailedEvent {
  type: 'setup_failed';
  stage: SetupStage;
  error: ErrorInfo;
}
export interface ProgressEvent {
  type: 'progress';
  call: string;
  progress: number | null;
  message: string | null;
}
export interface ChunkEvent {
  type: 'chunk';
  call: string;
  value: Value;
}
export interface ResultEvent {
  type: 'result';
  call: string;
  value: Value;
}
/** A generator's end: its result is the list of the `chunks` chunks it sent before. */
export interface StreamedEvent {
  type: 'streamed';
  call: string;
  chunks: number;
}
export interface ErrorEvent {
  type: 'error';
  call: string;
  error: ErrorInfo;
}
export interface CancelledEvent {
  type: 'cancelled';
  call: string;
}
/** The calls of a `withdraw` that had not started: they never will, and nothing more comes for them. */
export interface WithdrawnEvent {
  type: 'withdrawn';
  calls: string[];
}
export type Event =
  | ReadyEvent
  | SetupFailedEvent
  | ProgressEvent
  | ChunkEvent
  | ResultEvent
  | StreamedEvent
  | ErrorEvent
  | CancelledEvent
  | WithdrawnEvent;
/** The events that belong to one call. */
export type CallEvent = ProgressEvent | ChunkEvent | ResultEvent | StreamedEvent | ErrorEvent | CancelledEvent;

/** A message that breaks the protocol; the gateway kills the worker that sent it. */
export class ProtocolError extends Error {
  override readonly name = 'ProtocolError';
}

/** One command as one line for its pipe (fd 3, or fd 5 for a cancel or a withdraw). */
export function encodeCommand(command: Command): string {
  return `${JSON.stringify(command)}\n`;
}

/**
 * A `call` whose arguments are JSON text already (a client's body): the line in pieces, the
 * text's own bytes among them, uncopied but where a newline (whitespace between its tokens:
 * inside a string JSON escapes it) has to become a space to keep the line one line.
 */
export function encodeCallWithText(call: string, endpoint: string, argumentsJson: Buffer): Buffer[] {
  let text = argumentsJson;
  for (let at = text.indexOf(0x0a); at !== -1; at = text.indexOf(0x0a, at + 1)) {
    if (text === argumentsJson) text = Buffer.from(argumentsJson);
    text[at] = 0x20;
  }
  const start = `{"type":"call","call":${JSON.stringify(call)},"endpoint":${JSON.stringify(endpoint)},"arguments":`;
  return [Buffer.from(start), text, Buffer.from('}\n')];
}

/**
 * A `call` whose long strings follow its line, each as its own line of UTF-8 (it holds no
 * newline): the worker reads them as they are, where a JSON string would be parsed, and
 * puts them in `arguments` in place of the `""` there. Then its lists of numbers, each as
 * one line of base64 of little-endian IEEE 754 doubles, which the worker turns into a list
 * of floats in C in ~7 ms where Python's json takes ~40 ms for 200,000 numbers; in
 * `arguments` an empty list stands in for each. `line_bytes` gives each following line's
 * size, so the worker reads it into one buffer rather than in pieces it then joins.
 */
export function encodeCallWithStrings(command: CallCommand, strings: readonly LongString[], numberLists: readonly NumberList[] = []): Buffer[] {
  const lines = [...strings.map((string) => string.bytes), ...numberLists.map((list) => Buffer.from(doublesOf(list.numbers).toString('base64')))];
  const line = encodeCommand({
    ...command,
    ...(strings.length > 0 ? { texts: strings.map((string) => string.parameter) } : {}),
    ...(numberLists.length > 0 ? { numbers: numberLists.map((list) => list.parameter) } : {}),
    ...(lines.length > 0 ? { line_bytes: lines.map((following) => following.length) } : {}),
  });
  return [Buffer.from(line), ...lines.flatMap((following) => [following, NEWLINE])];
}
const NEWLINE = Buffer.from('\n');

/** Numbers as little-endian doubles, the order the worker reads (Python's array('d') on a little-endian machine, byte-swapped on another). */
function doublesOf(numbers: readonly number[]): Buffer {
  const bytes = Buffer.allocUnsafeSlow(numbers.length * 8); // its own memory: a Float64Array needs 8-byte alignment
  if (endianness() === 'LE') {
    new Float64Array(bytes.buffer, bytes.byteOffset, numbers.length).set(numbers);
  } else {
    numbers.forEach((number, index) => bytes.writeDoubleLE(number, index * 8));
  }
  return bytes;
}

const RESULT_START = Buffer.from('{"type":"result","call":"');
const VALUE_KEY = Buffer.from('","value":');
/** A value shorter than this is copied out of the pipe's read: a job keeps its result for its TTL, and a view would keep the whole read. */
const COPIED_VALUE_BYTES = 64 * 1024;

/**
 * A `result` event as its call and its value's JSON text (UTF-8 bytes), without reading the
 * value: the worker writes a result compact and in this order,
 * `{"type":"result","call":"ID","value":VALUE}` (docs/worker-protocol.md), so the value is the
 * line between the call and the last `}`. The gateway answers with those bytes, never parsing
 * and serialising them again: an integer beyond 2^53 keeps its digits, and a result of
 * numbers costs no formatting. Null for any other line (another type, a call id with an
 * escape), which parseEvent reads.
 */
export function readResultValue(line: Buffer): { call: string; value: Buffer } | null {
  const head = resultHead(line, VALUE_KEY);
  return head === null ? null : { call: head.call, value: valueFrom(line, head.after) };
}

/**
 * A result line's call, and where what follows `key` starts, when `key` comes right after
 * the call's id (which holds no quote), or null: a large result is not searched through.
 */
function resultHead(line: Buffer, key: Buffer): { call: string; after: number } | null {
  if (line[line.length - 1] !== 0x7d || !line.subarray(0, RESULT_START.length).equals(RESULT_START)) return null;
  const callEnd = line.indexOf(0x22, RESULT_START.length);
  if (callEnd === -1 || !line.subarray(callEnd, callEnd + key.length).equals(key)) return null;
  const call = line.toString('utf8', RESULT_START.length, callEnd);
  return call === '' || call.includes('\\') ? null : { call, after: callEnd + key.length };
}

/** The line's bytes from `start` to its last `}`: the value, copied out of the line when short (COPIED_VALUE_BYTES). */
function valueFrom(line: Buffer, start: number): Buffer {
  const value = line.subarray(start, line.length - 1);
  return value.length < COPIED_VALUE_BYTES ? Buffer.from(value) : value;
}

const TEXTS_KEY = Buffer.from('","texts":[');
const NUMBERS_KEY = Buffer.from('],"numbers":[');
const LIST_END = Buffer.from('],"value":');

/** Where a result's value holds `""` for a line that follows it: a long string's, or a list of doubles'. */
export interface ResultPlace {
  offset: number;
  kind: 'text' | 'numbers';
}

/**
 * A `result` whose long strings and lists of doubles follow it as lines of their own
 * (docs/worker-protocol.md, `texts` and `numbers`):
 * `{"type":"result","call":"ID","texts":[OFFSET,...],"numbers":[OFFSET,...],"value":VALUE}`
 * (`numbers` may be left out), VALUE holding `""` at each byte offset, where a string or a
 * list goes; the lines follow in the order of their offsets. Null for any other line; a
 * ProtocolError for offsets that do not point at such places.
 */
export function readResultWithTexts(line: Buffer): { call: string; places: ResultPlace[]; value: Buffer } | null {
  const head = resultHead(line, TEXTS_KEY);
  if (head === null) return null;
  const { call, after: textsStart } = head;
  const textsEnd = line.indexOf(0x5d, textsStart);
  if (textsEnd === -1) return null;
  let numbersEnd = textsEnd;
  if (line.subarray(textsEnd, textsEnd + NUMBERS_KEY.length).equals(NUMBERS_KEY)) {
    numbersEnd = line.indexOf(0x5d, textsEnd + NUMBERS_KEY.length);
    if (numbersEnd === -1) return null;
  }
  if (!line.subarray(numbersEnd, numbersEnd + LIST_END.length).equals(LIST_END)) return null;
  const value = valueFrom(line, numbersEnd + LIST_END.length);
  const offsetsIn = (start: number, end: number) => {
    const list = line.toString('latin1', start, end);
    return list === '' ? [] : list.split(',').map(Number);
  };
  const texts = offsetsIn(textsStart, textsEnd);
  const numbers = numbersEnd === textsEnd ? [] : offsetsIn(textsEnd + NUMBERS_KEY.length, numbersEnd);
  const places: ResultPlace[] = [
    ...texts.map((offset) => ({ offset, kind: 'text' as const })),
    ...numbers.map((offset) => ({ offset, kind: 'numbers' as const })),
  ].sort((first, second) => first.offset - second.offset);
  const named = `its texts' offsets ${JSON.stringify(texts)} and its numbers' ${JSON.stringify(numbers)}`;
  if (places.length === 0) throw new ProtocolError(`result: ${named} name no place in its value`);
  places.forEach(({ offset }, index) => {
    const after = index === 0 ? 0 : places[index - 1]!.offset + 2;
    if (!Number.isInteger(offset) || offset < after || value[offset] !== 0x22 || value[offset + 1] !== 0x22) {
      throw new ProtocolError(`result: ${named} do not each point at an empty string in its value`);
    }
  });
  return { call, places, value };
}

/**
 * One line from fd 4 as a typed event. Unknown fields are dropped; a line that is not
 * JSON, has an unknown `type` or a field of the wrong shape throws a ProtocolError.
 */
export function parseEvent(line: string): Event {
  let message: unknown;
  try {
    message = JSON.parse(line);
  } catch {
    throw new ProtocolError(`event is not JSON: ${abbreviate(line)}`);
  }
  const fields = new Fields(message, 'event');
  const type = fields.string('type');
  switch (type) {
    case 'ready': {
      const protocol = fields.number('protocol');
      if (protocol !== PROTOCOL_VERSION) {
        throw new ProtocolError(`worker speaks protocol ${protocol}, this gateway speaks ${PROTOCOL_VERSION}`);
      }
      const app = fields.object('app');
      const endpoints = fields.objects('endpoints').map(readEndpoint);
      const paths = endpoints.map((endpoint) => endpoint.path);
      const repeated = paths.find((path, index) => paths.indexOf(path) !== index);
      // A call names its endpoint by path alone.
      if (repeated !== undefined) throw fields.error('endpoints', `two endpoints share the path ${repeated}`);
      return {
        type,
        protocol,
        python: fields.string('python'),
        app: {
          title: app.nullableString('title'),
          compute: app.oneOf('compute', COMPUTE_VALUES),
          provider: app.oneOf('provider', PROVIDER_VALUES),
        },
        endpoints,
      };
    }
    case 'setup_failed':
      return { type, stage: fields.oneOf('stage', SETUP_STAGES), error: readError(fields.object('error')) };
    case 'progress': {
      const progress = fields.nullableNumber('progress');
      if (progress !== null && (progress < 0 || progress > 1)) {
        throw new ProtocolError(`event.progress: ${progress} is outside [0, 1]`);
      }
      return { type, call: fields.callId(), progress, message: fields.nullableString('message') };
    }
    case 'chunk':
    case 'result':
      return { type, call: fields.callId(), value: fields.value('value') };
    case 'streamed': {
      const chunks = fields.number('chunks');
      if (!Number.isInteger(chunks) || chunks < 0) throw fields.error('chunks', `${chunks} is not a whole number, 0 or more`);
      return { type, call: fields.callId(), chunks };
    }
    case 'error':
      return { type, call: fields.callId(), error: readError(fields.object('error')) };
    case 'cancelled':
      return { type, call: fields.callId() };
    case 'withdrawn': {
      const calls = fields.strings('calls');
      if (calls.includes('')) throw fields.error('calls', 'holds an empty call id');
      return { type, calls };
    }
    default:
      throw new ProtocolError(`unknown event type '${type}'`);
  }
}

function readEndpoint(fields: Fields): EndpointReport {
  const path = fields.string('path');
  if (!path.startsWith('/')) throw fields.error('path', `'${path}' does not start with '/'`);
  const methods = fields.strings('methods');
  if (methods.length === 0) throw fields.error('methods', 'is empty');
  const lowerCase = methods.find((method) => method !== method.toUpperCase());
  if (lowerCase !== undefined) throw fields.error('methods', `'${lowerCase}' is not upper case`);
  return {
    path,
    methods,
    function: fields.string('function'),
    doc: fields.nullableString('doc'),
    is_async: fields.boolean('is_async'),
    is_generator: fields.boolean('is_generator'),
    is_chat: fields.boolean('is_chat'),
    direct: fields.boolean('direct'),
    body_parameter: fields.nullableString('body_parameter'),
    input_schema: readInputSchema(fields.object('input_schema')),
    output_schema: fields.object('output_schema').raw,
    injected: fields.strings('injected'),
  };
}

function readInputSchema(schema: Fields): { [key: string]: Value } {
  if (schema.raw.type !== 'object') throw schema.error('type', 'the input schema describes an object');
  return schema.raw;
}

function readError(fields: Fields): ErrorInfo {
  return {
    type: fields.string('type'),
    message: fields.string('message'),
    traceback: fields.string('traceback'),
    argument: fields.nullableString('argument'),
    rejects_input: fields.boolean('rejects_input'),
  };
}

/** Reads the fields of one JSON object, naming the field's path in every complaint. */
class Fields {
  readonly raw: { [key: string]: Value };

  constructor(
    value: unknown,
    private readonly where: string,
  ) {
    if (!isJsonObject(value)) throw new ProtocolError(`${where}: expected an object`);
    this.raw = value;
  }

  error(field: string, problem: string): ProtocolError {
    return new ProtocolError(`${this.where}.${field}: ${problem}`);
  }

  string(field: string): string {
    const value = this.raw[field];
    if (typeof value !== 'string') throw this.error(field, 'expected a string');
    return value;
  }

  nullableString(field: string): string | null {
    const value = this.raw[field];
    if (value !== null && typeof value !== 'string') throw this.error(field, 'expected a string or null');
    return value;
  }

  oneOf<Choice extends string>(field: string, choices: readonly Choice[]): Choice {
    const value = this.string(field);
    if (!(choices as readonly string[]).includes(value)) {
      throw this.error(field, `'${value}' is not one of ${choices.join(', ')}`);
    }
    return value as Choice;
  }

  callId(): string {
    const id = this.string('call');
    if (id === '') throw this.error('call', 'is empty');
    return id;
  }

  number(field: string): number {
    const value = this.raw[field];
    if (typeof value !== 'number') throw this.error(field, 'expected a number');
    return value;
  }

  nullableNumber(field: string): number | null {
    const value = this.raw[field];
    if (value !== null && typeof value !== 'number') throw this.error(field, 'expected a number or null');
    return value;
  }

  boolean(field: string): boolean {
    const value = this.raw[field];
    if (typeof value !== 'boolean') throw this.error(field, 'expected true or false');
    return value;
  }

  /** Any JSON value: what it means is the receiver's business. */
  value(field: string): Value {
    const value = this.raw[field];
    if (value === undefined) throw this.error(field, 'missing');
    return value;
  }

  object(field: string): Fields {
    return new Fields(this.raw[field], `${this.where}.${field}`);
  }

  objects(field: string): Fields[] {
    return this.array(field).map((item, index) => new Fields(item, `${this.where}.${field}[${index}]`));
  }

  strings(field: string): string[] {
    const items = this.array(field);
    if (!items.every((item) => typeof item === 'string')) throw this.error(field, 'expected an array of strings');
    return items as string[];
  }

  private array(field: string): Value[] {
    const value = this.raw[field];
    if (!Array.isArray(value)) throw this.error(field, 'expected an array');
    return value;
  }
}

/** A JSON object: not an array, not null. */
export function isJsonObject(value: unknown): value is { [key: string]: Value } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A JSON value's JSON Schema type: `integer` for a whole number, `number` for any other. */
export function jsonTypeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function abbreviate(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}...` : text;
}
