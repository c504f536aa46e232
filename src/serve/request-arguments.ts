import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { HttpRequest } from './http/http-request.js';
import type { CancelSignal } from '../worker/cancel-signal.js';
import { removeStagedFiles, TransitFileWriter, writeTransitFile } from '../worker/transit-files.js';
import { isJsonObject, jsonTypeOf, type LongString, type Value } from '../worker/protocol.js';
import type { EndpointInputs, ParameterInput } from './endpoint-inputs.js';
import { fieldPath, HttpError } from './http-error.js';
import type { Arguments } from './input-validation.js';
import { fetchMediaUrls, type MediaUrlSettings } from './media-urls.js';
import { boundaryOf, MalformedMultipart, MultipartReader, type PartHead } from './multipart-reader.js';
import { bodyTooLarge, FormFields, jsonProblem, jsonTextOf, longStringsOf, MultipartBody } from './request-bodies.js';
import { gatherFormModels } from './form-models.js';
import { refuseControlBytes } from './long-strings.js';
import { decodePlainBase64 } from './plain-base64.js';
import { releaseLongStrings } from './released-buffers.js';

export interface ReadArguments {
  arguments: Arguments;
  /** Uploaded files staged for the worker; the caller deletes them once the call ends. */
  stagedFiles: string[];
  /** `arguments` as the JSON text the client sent, when the worker may take that text as it is (endpoint-inputs.ts). */
  argumentsJson?: Buffer;
  /** Strings `arguments` holds as `""`, to send beside it (long-strings.ts), or to put back in a job's (jobArguments). */
  longStrings?: LongString[];
}

/** Where a call's files are staged for the worker, and how media URLs are fetched (null: they are refused). */
export interface FileStaging {
  dir: string;
  mediaUrls: MediaUrlSettings | null;
  /** Fires when the client leaves: the downloads stop. */
  cancel: CancelSignal;
}

/**
 * The call's arguments from the request: the JSON body, the query string for GET, a
 * URL-encoded form, or a multipart form whose file parts are media parameters, staged with
 * the files media URLs name (`staging` null: neither multipart nor URLs are taken).
 * Read and validated as the endpoint's inputs (compiled once: endpoint-inputs.ts) say; a
 * 4xx HttpError says what is wrong.
 */
export async function readArguments(
  request: HttpRequest,
  inputs: EndpointInputs,
  staging: FileStaging | null,
  { forJob = false }: { forJob?: boolean } = {},
): Promise<ReadArguments> {
  const read = await readRequest(request, inputs, staging?.dir ?? null);
  if (read.longStrings !== undefined && forJob) {
    // A job keeps its arguments whole, as any replica that runs it reads them: its strings
    // stay strings (jobArguments), a media parameter's base64 too, not a file staged here.
    refuseControlBytes(read.longStrings, inputs.base64Parameters);
  } else if (read.longStrings !== undefined) {
    Object.assign(read, await placeLongStrings(read.arguments, read.longStrings, inputs, staging?.dir ?? null));
  }
  if (staging === null || inputs.mediaUrlParameters.size === 0) return read;
  try {
    const fetched = await fetchMediaUrls(read.arguments, inputs.mediaUrlParameters, staging);
    // Nothing fetched: the arguments are still what the client sent.
    const argumentsJson = fetched.stagedFiles.length === 0 ? read.argumentsJson : undefined;
    return { arguments: fetched.arguments, stagedFiles: [...read.stagedFiles, ...fetched.stagedFiles], argumentsJson, longStrings: read.longStrings };
  } catch (error) {
    await removeStagedFiles(read.stagedFiles);
    throw error;
  }
}

/**
 * A JSON body as the endpoint's parameters by name. A schema endpoint's body is its one
 * parameter, as the apipod toolkit takes it (`{"input": ...}` for `request: EmbeddingRequest`);
 * one that already names the parameter alone (`{"request": {...}}`, svc's own form) is taken as it is.
 */
function asParameters(body: unknown, name: string | null): unknown {
  if (name === null || !isJsonObject(body)) return body;
  const keys = Object.keys(body);
  return keys.length === 1 && keys[0] === name ? body : { [name]: body };
}

async function readRequest(request: HttpRequest, inputs: EndpointInputs, uploadDir: string | null): Promise<ReadArguments> {
  const { validators } = inputs;
  if (request.method === 'GET' || request.method === 'HEAD') {
    return { arguments: validators.text({ ...(request.query as object) }), stagedFiles: [] };
  }
  const body = request.body;
  if (body instanceof MultipartBody) {
    if (uploadDir === null) throw new HttpError(415, 'unsupported_media_type', 'unsupported_content_type', 'this endpoint takes no multipart form');
    return readMultipart(request, inputs, uploadDir);
  }
  if (body instanceof FormFields) {
    refuseJsonSentAsForm(body.fields);
    return { arguments: validators.text(gatherFormModels(withoutEmptyFields(body.fields), inputs)), stagedFiles: [] };
  }
  if (body === undefined) {
    // An empty body is the call with no arguments: fine for an endpoint without required
    // parameters, and a 422 naming the missing ones otherwise. A JSON `null` is no object of
    // arguments, and the validator says so, as it does for `[]` or `"text"`.
    return { arguments: validators.json({}), stagedFiles: [] };
  }
  rejectFileReferences(body as Value, '');
  const args = validators.json(asParameters(body, inputs.bodyParameter));
  const longStrings = longStringsOf(body);
  if (longStrings !== undefined) return { arguments: args, stagedFiles: [], longStrings };
  // The body itself, not a schema endpoint's wrapping of it: its text can go to the worker unchanged.
  const argumentsJson = inputs.takesJsonText && args === body ? jsonTextOf(body) : undefined;
  return { arguments: args, stagedFiles: [], argumentsJson };
}

/**
 * The long strings a call's arguments hold as `""` (long-strings.ts): a media parameter's
 * plain base64, decoded here and staged as a file the worker reads as an upload; the others
 * sent beside the call. Base64 the worker would read otherwise goes to it as text.
 */
async function placeLongStrings(args: Arguments, longStrings: LongString[], inputs: EndpointInputs, uploadDir: string | null): Promise<ReadArguments> {
  const stagedFiles: string[] = [];
  const texts: LongString[] = [];
  try {
    for (const string of longStrings) {
      const file = inputs.base64Parameters.has(string.parameter) && uploadDir !== null ? decodePlainBase64(string.bytes) : null;
      if (file === null) {
        refuseControlBytes([string], inputs.base64Parameters);
        texts.push(string);
        continue;
      }
      const path = join(uploadDir!, randomUUID());
      stagedFiles.push(path);
      await writeTransitFile(path, file);
      releaseLongStrings([string]); // the worker reads the file
      args[string.parameter] = { $file: { path, file_name: null, content_type: null } };
    }
  } catch (error) {
    await removeStagedFiles(stagedFiles);
    throw error;
  }
  return { arguments: args, stagedFiles, longStrings: texts.length > 0 ? texts : undefined };
}

/** `curl -d '{"a": 1}'` sends JSON as a form, whose one field is named by the whole text: say so, not that `{"a": 1}` is no parameter. */
function refuseJsonSentAsForm(fields: { [name: string]: unknown }): void {
  const names = Object.keys(fields);
  if (names.length !== 1 || !/^\s*[[{]/.test(names[0] as string)) return;
  throw new HttpError(
    415,
    'unsupported_media_type',
    'json_sent_as_form',
    'the body looks like JSON but came as a URL-encoded form (what curl -d sends): send it with Content-Type: application/json',
  );
}

/**
 * `{"$file": ...}` tells a worker to read (and delete) a file: only svc may write one,
 * for uploads it staged itself. From a client it would be a way to reach the server's disk.
 */
function rejectFileReferences(value: Value, field: string): void {
  const keys = fileReferenceKeys(value);
  if (keys === null) return;
  const path = fieldPath(keys, field);
  throw new HttpError(422, 'validation_error', 'invalid_input', `${path}: file references cannot be sent; upload the file as multipart or base64`, {
    detail: [{ field: path, message: 'file references cannot be sent; upload the file as multipart or base64' }],
  });
}

/**
 * The keys down to the first `$file` key in `value` (that key last), or null. Nothing is
 * made on the way: a body of 200,000 numbers cost 200,000 path strings when each was named.
 * Recursive: the body parser has refused nesting deeper than MAX_VALUE_DEPTH already.
 */
function fileReferenceKeys(value: Value): Array<string | number> | null {
  if (typeof value !== 'object' || value === null) return null;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index += 1) {
      const item = value[index]!;
      if (typeof item !== 'object' || item === null) continue; // most items of a long list: no call for them
      const below = fileReferenceKeys(item);
      if (below !== null) return [index, ...below];
    }
    return null;
  }
  for (const key of Object.keys(value)) {
    if (key === '$file') return [key];
    const below = fileReferenceKeys(value[key]!);
    if (below !== null) return [key, ...below];
  }
  return null;
}

/** Fields and files of one multipart form, as Starlette (and so the apipod toolkit) reads at most. */
const MAX_FORM_PARTS = 1000;

/** A form's parts as they are read: text fields' values, and file parts staged as transit files. */
class FormParts {
  readonly texts: { [name: string]: string[] } = {};
  readonly files: { [name: string]: Value } = {};
  readonly stagedFiles: string[] = [];
  private partsRead = 0;
  private field: { head: PartHead; name: string; bytes: Buffer[] } | null = null;
  private file: { head: PartHead; name: string; repeated: boolean; writer: TransitFileWriter } | null = null;

  constructor(
    private readonly inputs: EndpointInputs,
    private readonly uploadDir: string,
  ) {}

  open(head: PartHead): void {
    if (++this.partsRead > MAX_FORM_PARTS) {
      throw new HttpError(413, 'payload_too_large', 'too_many_parts', `the form has more than ${MAX_FORM_PARTS} fields and files together, the most this server reads`);
    }
    const name = head.name;
    if (name === null) throw new MalformedMultipart('a part has no name (Content-Disposition: form-data; name="...")');
    const parameter = this.inputs.parameters.get(name);
    const upload = parameter?.upload ?? null;
    if (head.isFile && upload === null) {
      throw new HttpError(422, 'validation_error', 'invalid_input', `${name} is not a file parameter`, {
        detail: [{ field: name, message: 'is not a file parameter of this endpoint' }],
      });
    }
    // A list takes repeated parts, as a URL-encoded form's repeated fields: files for a list of media, text for others.
    const repeatable = head.isFile ? upload?.repeated === true : (parameter?.itemTypes ?? null) !== null;
    const [sameKind, otherKind] = head.isFile ? [this.files, this.texts] : [this.texts, this.files];
    if (name in otherKind || (name in sameKind && !repeatable)) throw givenTwice(name, name in otherKind && upload?.repeated === true);
    if (!head.isFile) {
      this.field = { head, name, bytes: [] };
      return;
    }
    const path = join(this.uploadDir, randomUUID());
    this.stagedFiles.push(path);
    this.file = { head, name, repeated: upload?.repeated === true, writer: new TransitFileWriter(path) };
  }

  async write(bytes: Buffer): Promise<void> {
    if (this.file !== null) await this.file.writer.write(bytes);
    else this.field?.bytes.push(bytes);
  }

  close(): void {
    if (this.field !== null) {
      const { head, name, bytes } = this.field;
      this.field = null;
      const value = fieldText(name, Buffer.concat(bytes), head.charset);
      // A file parameter's empty text field (a form's input left blank) is not sent.
      if (!(this.inputs.parameters.get(name)?.upload && value === '')) this.texts[name] = [...(this.texts[name] ?? []), value];
      return;
    }
    if (this.file === null) return;
    const { head, name, repeated, writer } = this.file;
    this.file = null;
    writer.close();
    // What a browser's form sends for a file input left empty: no name, no bytes. It is no file.
    if (head.fileName === '' && writer.size === 0) return;
    // No content type given: the worker tells it from the bytes and the file name.
    const reference = { $file: { path: writer.path, file_name: head.fileName || null, content_type: head.contentType } };
    this.files[name] = repeated ? [...((this.files[name] as Value[] | undefined) ?? []), reference] : reference;
  }

  /** A part cut short by an error: its file is closed, to be removed with the others. */
  abandon(): void {
    this.file?.writer.close();
    this.file = null;
  }
}

/**
 * A multipart form read from the socket as it arrives, its files staged as they come
 * (multipart-reader.ts), then validated with each file standing in as a string.
 */
async function readMultipart(request: HttpRequest, inputs: EndpointInputs, uploadDir: string): Promise<ReadArguments> {
  const maxBytes = request.routeOptions.bodyLimit;
  const parts = new FormParts(inputs, uploadDir);
  try {
    const boundary = boundaryOf(request.headers['content-type']);
    if (boundary === null) throw new MalformedMultipart('its Content-Type names no boundary');
    // The connection stays open and the rest of the body is read and dropped (below), as for
    // a JSON body: an answer that closed it while the client still sent would reach many
    // clients (Node's fetch, every time at 3 MiB) as a broken pipe, not as this 413.
    const tooLarge = () => bodyTooLarge(maxBytes);
    if (Number(request.headers['content-length'] ?? 0) > maxBytes) throw tooLarge();
    const reader = new MultipartReader(boundary);
    let bytesRead = 0;
    // Not destroyed when an error stops the reading: the answer still goes out on its socket.
    for await (const chunk of request.raw.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
      bytesRead += chunk.length;
      if (bytesRead > maxBytes) throw tooLarge();
      for (const event of reader.feed(chunk)) {
        if (event.kind === 'part') parts.open(event.head);
        else if (event.kind === 'data') await parts.write(event.bytes);
        else parts.close();
      }
    }
    reader.end();
    const fields = Object.fromEntries(Object.entries(withoutEmptyFields(parts.texts)).map(([name, values]) => [name, fieldsValue(name, [values].flat(), inputs.parameters.get(name))]));
    rejectFileReferences(fields, '');
    const placeholders = Object.entries(parts.files).map(([name, value]) => [name, Array.isArray(value) ? value.map(() => '') : '']);
    const validated = inputs.validators.text({ ...gatherFormModels(fields, inputs), ...Object.fromEntries(placeholders) });
    return { arguments: { ...validated, ...parts.files }, stagedFiles: parts.stagedFiles };
  } catch (error) {
    // What is left of the body is read and dropped, so the connection can take the next request.
    request.raw.resume();
    parts.abandon();
    await removeStagedFiles(parts.stagedFiles);
    throw malformedBody(error);
  }
}

/**
 * A text part's value in its charset (UTF-8 unless it names one). Bytes that are not text in
 * it are refused, not read as U+FFFD: that would change the value on its way to the function.
 */
function fieldText(name: string, bytes: Buffer, charset: string | null): string {
  try {
    return new TextDecoder(charset ?? 'utf-8', { fatal: true }).decode(bytes);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_ENCODING_NOT_SUPPORTED') {
      throw new HttpError(415, 'unsupported_media_type', 'unsupported_charset', `the form field "${name}" is in ${charset}, a charset this server does not read: send it as UTF-8`);
    }
    throw new HttpError(400, 'invalid_request', 'invalid_encoding', `the form field "${name}" is not valid ${charset ?? 'UTF-8'}: send its text encoded as UTF-8`);
  }
}

/**
 * A form's fields less those sent empty (`name=`, a text input left blank), which are not
 * sent, as FastAPI reads forms and so the apipod package: the parameter gets its default, or
 * is missing. A repeated field keeps its empty items: they are a list's values.
 */
function withoutEmptyFields<T extends string | string[]>(fields: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => !(value === '' || (Array.isArray(value) && value.length === 1 && value[0] === ''))));
}

/** A parameter's text parts: one is the value, several are a list's items. */
function fieldsValue(name: string, texts: string[], parameter: ParameterInput | undefined): Value {
  if (texts.length === 1) return fieldValue(name, texts[0], parameter?.types ?? NO_TYPES);
  return texts.map((text, index) => fieldValue(`${name}[${index}]`, text, parameter?.itemTypes ?? NO_TYPES));
}

/** A text for no parameter of the endpoint: read as JSON where it is JSON, and left for validation to judge. */
const NO_TYPES: ReadonlySet<string> = new Set();

/**
 * A body the multipart parser cannot read (no boundary, cut short) is the client's malformed
 * request, a 400; the socket's own errors (the client left) and a full disk stay as they are.
 */
function malformedBody(error: unknown): unknown {
  if (!(error instanceof MalformedMultipart)) return error;
  return new HttpError(400, 'invalid_request', 'malformed_body', `the multipart body cannot be read: ${error.message}`);
}

/**
 * A part repeated for a parameter that takes one value: taking the last would drop the others
 * without a word. A list of files comes as uploads or as text (URLs, base64), not both: their
 * order between the two would be lost.
 */
function givenTwice(name: string, mixedList: boolean): HttpError {
  const message = mixedList ? 'is given both as uploaded files and as text; send all its items one way' : 'is given more than once, and takes one value';
  return new HttpError(422, 'validation_error', 'invalid_input', `${name} ${message}`, { detail: [{ field: name, message }] });
}

/**
 * Form fields are text, and may carry JSON (`[1, 2]`), held to what a JSON body is: no
 * deeper than the protocol carries, no number beyond a double. A parameter that takes a
 * string (`str`, `Optional[str]`) gets the text as it is, quotes and spaces included, unless
 * it is JSON of another type the parameter also takes (a media object for an image).
 */
function fieldValue(name: string, text: unknown, types: ReadonlySet<string>): Value {
  const value = String(text);
  let parsed: Value;
  try {
    parsed = JSON.parse(value) as Value;
  } catch {
    return value;
  }
  // `null` where the parameter takes none stays the text "null", refused as a URL-encoded
  // form's is: parsed, the validator's coercion would turn it into 0 or false.
  if (parsed === null && !types.has('null')) return value;
  // JSON of a type the parameter does not take stays text, refused as a URL-encoded form's
  // is: parsed, `true` for an int would become 1.
  if (types.size > 0 && !types.has(jsonTypeOf(parsed)) && !(typeof parsed === 'number' && types.has('number'))) return value;
  const container = Array.isArray(parsed) ? 'array' : isJsonObject(parsed) ? 'object' : null;
  if (types.has('string') && (container === null || !types.has(container))) return value;
  const problem = jsonProblem(parsed, name);
  if (problem !== null) throw problem;
  return parsed;
}
