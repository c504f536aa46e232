import type { Value } from '../worker/protocol.js';

/**
 * The component schemas the apipod toolkit (1.0.33) publishes in its OpenAPI document and
 * that its client, fastsdk, reads: a `*FileModel` reference marks a parameter as a file
 * (so the client uploads one), and `JobResult` names the job envelope. Shapes as the
 * toolkit's (socaity-schemas' `FileModel`, apipod's `JobResult`), so a client generated
 * from either document reads both.
 */
type Json = { [key: string]: Value };

/** The worker's `x-media-type` -> the toolkit's component and media class. */
const FILE_MODELS: { [media: string]: { component: string; mediaClass: string; contentMediaType: string } } = {
  file: { component: 'FileModel', mediaClass: 'MediaFile', contentMediaType: 'application/octet-stream' },
  image: { component: 'ImageFileModel', mediaClass: 'ImageFile', contentMediaType: 'image/*' },
  audio: { component: 'AudioFileModel', mediaClass: 'AudioFile', contentMediaType: 'audio/*' },
  video: { component: 'VideoFileModel', mediaClass: 'VideoFile', contentMediaType: 'video/*' },
};

const nullable = (schema: Json): Json => ({ anyOf: [schema, { type: 'null' }] });

function fileModelSchema(component: string, mediaClass: string): Json {
  return {
    title: component,
    type: 'object',
    properties: {
      file_name: { type: 'string', title: 'File Name' },
      content_type: { type: 'string', title: 'Content Type' },
      content: {
        title: 'Content',
        description: 'the file as base64, or a URL svc downloads',
        anyOf: [{ type: 'string' }, { type: 'string', contentMediaType: 'application/octet-stream' }, { type: 'string', minLength: 1, format: 'uri' }],
      },
      max_size_mb: { ...nullable({ type: 'number' }), title: 'Max Size Mb', default: 4000 },
    },
    required: ['file_name', 'content_type', 'content'],
    'x-media-type': mediaClass,
  };
}

function fileModelOf(media: string): { component: string; mediaClass: string; contentMediaType: string } {
  return FILE_MODELS[media] ?? (FILE_MODELS.file as (typeof FILE_MODELS)[string]);
}

/** A reference to the media kind's `*FileModel` component. */
export function fileModelReference(media: string): Json {
  return { $ref: `#/components/schemas/${fileModelOf(media).component}` };
}

/**
 * A media parameter in a multipart form, as the toolkit describes it: an uploaded file (a
 * binary part, of the kinds `/docs` offers in its file input), the file as a FileModel
 * object, or a string (base64, a data URI or a URL). Never empty: an empty field is one not
 * sent, as the toolkit reads forms.
 */
export function uploadSchema(media: string): Json {
  return {
    anyOf: [
      { type: 'string', format: 'binary', contentMediaType: fileModelOf(media).contentMediaType, minLength: 1 },
      fileModelReference(media),
      { type: 'string', minLength: 1 },
    ],
  };
}

/** The components for the media kinds a document references. */
export function fileModelComponents(mediaKinds: ReadonlySet<string>): Json {
  const components: Json = {};
  for (const media of mediaKinds) {
    const { component, mediaClass } = fileModelOf(media);
    components[component] = fileModelSchema(component, mediaClass);
  }
  return components;
}

/** The job envelope as a component: every field a client of either protocol reads. */
export const JOB_RESULT_COMPONENTS: Json = {
  JobResult: {
    title: 'JobResult',
    description: 'A job: the hosted inference API\'s fields and the apipod toolkit\'s, one envelope for both (docs/jobs.md).',
    type: 'object',
    properties: {
      id: { type: 'string' },
      job_id: { type: 'string' },
      status: { type: 'string', enum: ['PENDING', 'QUEUED', 'PROCESSING', 'STREAMING', 'FINISHED', 'FAILED', 'TIMEOUT', 'CANCELLED'] },
      progress: nullable({ type: 'number', minimum: 0, maximum: 1 }),
      message: nullable({ type: 'string' }),
      result: { description: "the function's result once FINISHED" },
      error: { ...nullable({ type: 'string' }), description: 'the exception\'s message once FAILED or TIMEOUT' },
      error_detail: nullable({
        type: 'object',
        properties: { type: { type: 'string' }, message: { type: 'string' }, traceback: { type: 'string' } },
        required: ['type', 'message'],
      }),
      endpoint: { type: 'string' },
      refresh_job_url: { type: 'string', format: 'uri' },
      cancel_job_url: { type: 'string', format: 'uri' },
      stream_url: { type: 'string', format: 'uri' },
      links: { $ref: '#/components/schemas/JobLinks' },
      metrics: { $ref: '#/components/schemas/JobMetrics' },
      service_specification: { type: 'object' },
      created_at: { type: 'string', format: 'date-time' },
      started_at: nullable({ type: 'string', format: 'date-time' }),
      finished_at: nullable({ type: 'string', format: 'date-time' }),
    },
    required: ['id', 'job_id', 'status', 'links'],
  },
  JobLinks: {
    title: 'JobLinks',
    type: 'object',
    properties: {
      status: { type: 'string', format: 'uri' },
      cancel: { type: 'string', format: 'uri' },
      stream: { type: 'string', format: 'uri', description: 'only for a generator endpoint\'s job' },
    },
  },
  JobMetrics: {
    title: 'JobMetrics',
    type: 'object',
    properties: {
      created_at: { type: 'string', format: 'date-time' },
      queued_at: { type: 'string', format: 'date-time' },
      started_at: nullable({ type: 'string', format: 'date-time' }),
      finished_at: nullable({ type: 'string', format: 'date-time' }),
      execution_time_s: nullable({ type: 'number' }),
    },
  },
};
