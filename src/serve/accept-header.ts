/** One media range of an Accept header (RFC 9110, 12.5.1): `image/*;q=0.8`. */
interface MediaRange {
  type: string;
  subtype: string;
  quality: number;
}

function readRanges(accept: string | undefined): MediaRange[] {
  const ranges: MediaRange[] = [];
  for (const range of (accept ?? '').toLowerCase().split(',')) {
    const [mediaType = '', ...parameters] = range.split(';').map((part) => part.trim());
    const [type = '', subtype = ''] = mediaType.split('/');
    if (type === '' || subtype === '') continue;
    const q = parameters.find((parameter) => parameter.startsWith('q='));
    ranges.push({ type, subtype, quality: q === undefined ? 1 : Number(q.slice(2)) || 0 });
  }
  return ranges;
}

/**
 * The quality the client gives `mediaType`: that of the most specific range naming it
 * (`image/png` over `image/*` over `*\/*`), 0 when none does. `withAnyType` false leaves
 * `*\/*` out: every client sends it, and it asks for nothing in particular.
 */
function qualityOf(ranges: readonly MediaRange[], mediaType: string, withAnyType: boolean): number {
  const [type, subtype] = mediaType.toLowerCase().split('/');
  const exact = ranges.find((range) => range.type === type && range.subtype === subtype);
  const ofType = ranges.find((range) => range.type === type && range.subtype === '*');
  const any = withAnyType ? ranges.find((range) => range.type === '*' && range.subtype === '*') : undefined;
  return (exact ?? ofType ?? any)?.quality ?? 0;
}

const EVENT_STREAM = /event-stream/i;

/**
 * The client asks for server-sent events: `Accept` names text/event-stream, with a quality
 * above 0 and no lower than application/json's when it names that too. Wildcards, which
 * every client sends, ask for nothing in particular: the answer stays JSON.
 */
export function acceptsEventStream(accept: string | undefined): boolean {
  // Most headers name no event stream: they need not be parsed.
  if (accept === undefined || !EVENT_STREAM.test(accept)) return false;
  const ranges = readRanges(accept);
  const named = (type: string, subtype: string) => ranges.find((range) => range.type === type && range.subtype === subtype)?.quality ?? 0;
  const eventStream = named('text', 'event-stream');
  return eventStream > 0 && eventStream >= named('application', 'json');
}

/** How a result may be answered: as JSON, as the bytes of its one media file, or neither (406). */
export type ResultForm = 'json' | 'media' | 'none';

/**
 * JSON is the default: without an Accept header, with `*\/*` or application/json. The
 * bytes of a media result (`mediaType` null: the result is no media file) when the client
 * names its type, or its kind (`image/*`), above application/json.
 */
export function chooseResultForm(accept: string | undefined, mediaType: string | null): ResultForm {
  if (accept === undefined || accept.trim() === '') return 'json';
  const ranges = readRanges(accept);
  const json = qualityOf(ranges, 'application/json', true);
  const media = mediaType === null ? 0 : qualityOf(ranges, mediaType, false);
  if (media > 0 && media > qualityOf(ranges, 'application/json', false)) return 'media';
  return json > 0 ? 'json' : 'none';
}
