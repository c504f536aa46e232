import type { CompatRequest } from './compat-requests.js';

/** What a server answered a request: in dedicated compute its response, in serverless the job's end. */
export type Outcome =
  | { kind: 'response'; status: number; body: unknown }
  | { kind: 'job'; status: string; result: unknown; /** Shown in a difference, never compared: each server words its own. */ error?: unknown };

/** The statuses a job ends in, lower-cased: the apipod package's spelling, and svc's once lower-cased. */
export const ENDED_JOB_STATUSES = ['finished', 'failed', 'timeout', 'cancelled', 'error'];

/**
 * A media file in a result, as either server writes one: `{file_name, content_type, content}`
 * with base64 content. Its bytes are compared by kind, not byte for byte: the apipod package
 * encodes images with OpenCV and svc with Pillow, so equal pixels give other bytes. The
 * package's `max_size_mb` (an upload limit echoed into every file) is left out: svc does not
 * write it, and no client reads it from a result.
 */
function normaliseFile(value: Record<string, unknown>): Record<string, unknown> {
  const bytes = Buffer.from(String(value.content), 'base64');
  return { file_name: value.file_name, content_type: value.content_type, content: `<${sniff(bytes)}>` };
}

function sniff(bytes: Buffer): string {
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'png';
  if (bytes[0] === 0xff && bytes[1] === 0xd8) return 'jpeg';
  if (bytes.subarray(0, 4).toString('latin1') === 'RIFF') return 'riff';
  if (bytes.subarray(0, 6).toString('latin1') === '\x93NUMPY') return 'npy';
  return `${bytes.length} bytes`;
}

function isFile(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    && 'content_type' in value && typeof (value as { content?: unknown }).content === 'string';
}

/** The JSON with ignored keys left out and media files reduced to what both servers share. */
export function normalise(value: unknown, ignore: readonly string[]): unknown {
  if (Array.isArray(value)) return value.map((item) => normalise(item, ignore));
  if (isFile(value)) return normaliseFile(value);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([key]) => !ignore.includes(key))
        .sort(([a], [b]) => (a < b ? -1 : 1)) // key order is no difference
        .map(([key, item]) => [key, normalise(item, ignore)]),
    );
  }
  return value;
}

/** The JSON's keys and value types, for answers whose values differ per call (a mock model's random text). */
export function shapeOf(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(shapeOf);
  if (value === null) return 'null';
  if (typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, shapeOf(item)]));
  return typeof value;
}

function comparable(value: unknown, request: CompatRequest): unknown {
  const normalised = normalise(value, request.ignore ?? []);
  return request.compare === 'shape' ? shapeOf(normalised) : normalised;
}

/**
 * How svc's outcome differs from the apipod package's, in words; undefined when equivalent.
 * Error answers (4xx, 5xx) are compared by status only: svc's error body is documented as
 * its own (`{"error": {...}}`, docs/errors.md), not FastAPI's `{"detail": [...]}`.
 */
export function differenceOf(upstream: Outcome, svc: Outcome, request: CompatRequest): string | undefined {
  const show = (outcome: Outcome) => JSON.stringify(outcome).slice(0, 600);
  if (upstream.kind !== svc.kind) return `apipod answered ${show(upstream)}, svc ${show(svc)}`;
  if (upstream.status !== svc.status) return `status: apipod ${show(upstream)}, svc ${show(svc)}`;
  const ended = upstream.kind === 'response' ? upstream.status < 400 : upstream.status === 'finished';
  if (!ended || request.compare === 'status') return undefined;
  const payload = (outcome: Outcome) => (outcome.kind === 'response' ? outcome.body : outcome.result);
  const [expected, actual] = [comparable(payload(upstream), request), comparable(payload(svc), request)];
  if (JSON.stringify(expected) === JSON.stringify(actual)) return undefined;
  return `body: apipod ${JSON.stringify(expected).slice(0, 600)}, svc ${JSON.stringify(actual).slice(0, 600)}`;
}

/**
 * The fields of the apipod package's job envelope (with those of its `links` and `metrics`)
 * that svc's envelope lacks: a client written for the package reads them (fastsdk follows
 * `links.status`).
 */
export function missingEnvelopeFields(upstream: unknown, svc: unknown, prefix = ''): string[] {
  if (typeof upstream !== 'object' || upstream === null || Array.isArray(upstream)) return [];
  const theirs = typeof svc === 'object' && svc !== null ? (svc as Record<string, unknown>) : {};
  return Object.entries(upstream).flatMap(([key, value]) => {
    if (!(key in theirs)) return [`${prefix}${key}`];
    const nested = typeof value === 'object' && value !== null && !Array.isArray(value) && key !== 'result'; // a result is the function's
    return nested ? missingEnvelopeFields(value, theirs[key], `${prefix}${key}.`) : [];
  });
}
