import { isJsonObject, type Value } from '../worker/protocol.js';

/** A parameter that takes multipart uploads. */
export interface FileUpload {
  /** A list of media: one part per file, under the parameter's name. */
  repeated: boolean;
  /** The worker's `x-media-type`: file, image, audio or video. */
  media: string;
}

/**
 * Whether a parameter takes uploads: a media type (ImageFile, bytes, ...), an Optional one,
 * or a list of them. The worker's schemas mark media with `x-media-type`; Optional[X] is
 * `anyOf: [X, {"type": "null"}]`.
 */
export function fileUploadOf(schema: Value | undefined): FileUpload | null {
  const parameter = withoutNull(schema);
  if (isMediaSchema(parameter)) return { repeated: false, media: String(parameter['x-media-type']) };
  if (!isJsonObject(parameter) || parameter.type !== 'array') return null;
  const item = withoutNull(parameter.items);
  return isMediaSchema(item) ? { repeated: true, media: String(item['x-media-type']) } : null;
}

function isMediaSchema(schema: Value | undefined): schema is { [key: string]: Value } {
  return isJsonObject(schema) && 'x-media-type' in schema;
}

function withoutNull(schema: Value | undefined): Value | undefined {
  if (!isJsonObject(schema) || !Array.isArray(schema.anyOf)) return schema;
  const others = schema.anyOf.filter((member) => !(isJsonObject(member) && member.type === 'null'));
  return others.length === 1 ? others[0] : schema;
}
