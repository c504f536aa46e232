import { isJsonObject, type Value } from '../worker/protocol.js';

/** A parameter that takes multipart uploads. */
export interface FileUpload {
  /** A list of media: one part per file, under the parameter's name. */
  repeated: boolean;
  /** The worker's `x-media-type`: file, image, audio or video. */
  media: string;
}

/**
 * Whether a parameter takes uploads: a media type (ImageFile, bytes, ...), a list of them,
 * or a union holding one (Optional[ImageFile], `ImageFile | str`), whose upload goes to its
 * media member (the worker prefers that member for a file), or its list member when it has one. The worker's schemas mark media
 * with `x-media-type`; Optional[X] and unions are `anyOf`.
 */
export function fileUploadOf(schema: Value | undefined): FileUpload | null {
  const members = isMediaSchema(schema) || !isJsonObject(schema) || !Array.isArray(schema.anyOf) ? [schema] : schema.anyOf;
  const single = members.filter(isMediaSchema);
  const items = members.flatMap((member) => (isJsonObject(member) && member.type === 'array' ? [withoutNull(member.items)] : [])).filter(isMediaSchema);
  // One file or a list of them (`ImageFile | list[ImageFile]`) takes its parts as a list, one
  // part too, as FastAPI reads a form field whose union holds a list.
  if (items.length > 0) return { repeated: true, media: mediaOf([...single, ...items]) };
  return single.length > 0 ? { repeated: false, media: mediaOf(single) } : null;
}

/** The kind of file a form input asks for: the members' own when they agree, else any file. */
function mediaOf(schemas: Array<{ [key: string]: Value }>): string {
  const kinds = new Set(schemas.map((schema) => String(schema['x-media-type'])));
  return kinds.size === 1 ? [...kinds][0]! : 'file';
}

function isMediaSchema(schema: Value | undefined): schema is { [key: string]: Value } {
  return isJsonObject(schema) && 'x-media-type' in schema;
}

function withoutNull(schema: Value | undefined): Value | undefined {
  if (!isJsonObject(schema) || !Array.isArray(schema.anyOf)) return schema;
  const others = schema.anyOf.filter((member) => !(isJsonObject(member) && member.type === 'null'));
  return others.length === 1 ? others[0] : schema;
}
