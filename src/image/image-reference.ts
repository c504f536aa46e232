import { SvcError } from '../svc-error.js';

/**
 * Image references as the engine parses them, after distribution's reference grammar
 * (https://github.com/distribution/reference/blob/main/regexp.go): an optional registry
 * host, slash-separated lower-case path components, then `:tag` and/or `@digest`.
 */
const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const DOMAIN = `(?:${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*|\\[[0-9a-fA-F:]+\\])(?::[0-9]+)?`;
const PATH_COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
const TAG = '[\\w][\\w.-]{0,127}';
const DIGEST = '[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}';
const REFERENCE = new RegExp(
  `^((?:${DOMAIN}/)?${PATH_COMPONENT}(?:/${PATH_COMPONENT})*)(?::(${TAG}))?(?:@(${DIGEST}))?$`,
);
const NAME_MAX = 255;

export interface ImageReference {
  name: string;
  tag: string | null;
  digest: string | null;
}

export function parseImageReference(text: string): ImageReference | null {
  const match = REFERENCE.exec(text);
  if (!match || (match[1] ?? '').length > NAME_MAX) return null;
  // A first component with a dot or a port is a registry; only then may it hold upper case.
  return { name: match[1] as string, tag: match[2] ?? null, digest: match[3] ?? null };
}

/** An image reference that must be valid: `what` names where it came from, for the message. */
export function checkImageReference(text: string, what: string): string {
  if (parseImageReference(text) === null) {
    throw new SvcError('usage', `'${abbreviated(text)}' is not a valid image reference (e.g. python:3.11-slim-bookworm)`, {
      field: what,
    });
  }
  return text;
}

/**
 * The tag `svc build --image` gives when none is named: the title, lower-cased, anything
 * outside the grammar turned into `-`, `:latest`. Never empty.
 */
export function imageTagFromTitle(title: string): string {
  const name =
    title
      .normalize('NFKD')
      .replace(/\p{M}+/gu, '') // the accents NFKD split off: Héllo is hello, not he-llo
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 64)
      .replace(/-+$/, '') || 'svc-service';
  return `${name}:latest`;
}

/** `--image NAME` with no tag means `NAME:latest`, as `docker build -t` does. */
export function withDefaultTag(reference: string): string {
  const parsed = parseImageReference(reference);
  if (!parsed) throw new Error(`internal: unchecked image reference ${reference}`);
  return parsed.tag === null && parsed.digest === null ? `${reference}:latest` : reference;
}

/** At most 200 characters of a reference: the terminal output escapes control characters itself. */
function abbreviated(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
