import { explain, valid } from '@renovatebot/pep440';
import { parseMarker } from './markers.js';

/**
 * One dependency as PEP 508 writes it: `name[extras] specifier ; marker` or
 * `name[extras] @ url ; marker`. Requirements files add forms PEP 508 lacks (bare URLs,
 * local paths, `-e`); src/scan/requirements.ts builds the same shape for those.
 */
export interface Requirement {
  /** As written. Empty when the name cannot be told without building the package (a local directory, a VCS URL without `#egg=`). */
  name: string;
  /** PEP 503 normalised name: lower-case, runs of `-_.` become `-`. Empty when `name` is. */
  key: string;
  /** PEP 685 normalised, sorted, without duplicates. */
  extras: string[];
  /** Clauses as written, in order, without spaces or parentheses, joined by commas: `>=2.1,<3`. Empty when none. */
  specifier: string;
  /** The marker as written (trimmed), null when none. */
  marker: string | null;
  /** The direct reference (`name @ url`), bare URL, VCS URL or local path; null for an index requirement. */
  url: string | null;
  /** Installed with `-e`. */
  editable: boolean;
}

export type RequirementResult = { requirement: Requirement } | { error: string };

// PEP 508: identifier = letterOrDigit identifier_end*, ending in a letter or digit.
const NAME = /^[A-Za-z0-9](?:[-_.A-Za-z0-9]*[A-Za-z0-9])?$/;
const NAME_RUN = /^[-_.A-Za-z0-9]*/;
const OPERATOR = /^(===|~=|==|!=|<=|>=|<|>)/;

/** PEP 503: lower-case, runs of `-`, `_` and `.` become one `-`. */
export function normaliseName(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, '-');
}

export function isValidName(name: string): boolean {
  return NAME.test(name);
}

/** Parse one PEP 508 requirement string, e.g. a pyproject `[project] dependencies` entry. */
export function parseRequirement(text: string): RequirementResult {
  let rest = text.trim();

  const nameRun = NAME_RUN.exec(rest)?.[0] ?? '';
  if (nameRun === '') return { error: 'expected a package name' };
  if (!NAME.test(nameRun)) return { error: `invalid package name '${nameRun}'` };
  const name = nameRun;
  rest = rest.slice(nameRun.length).trimStart();

  let extras: string[] = [];
  if (rest.startsWith('[')) {
    const close = rest.indexOf(']');
    if (close < 0) return { error: "expected ']' to close the extras" };
    const parsed = parseExtras(rest.slice(1, close));
    if ('error' in parsed) return parsed;
    extras = parsed.extras;
    rest = rest.slice(close + 1).trimStart();
  }

  let specifier = '';
  let url: string | null = null;
  if (rest.startsWith('@')) {
    // PEP 508 url_req: the URL runs to whitespace, and a marker must be set off by whitespace
    // before its `;`, since `;` is legal inside a URL.
    rest = rest.slice(1).trimStart();
    url = /^\S*/.exec(rest)?.[0] ?? '';
    if (url === '') return { error: "expected a URL after '@'" };
    if (!/^[A-Za-z][A-Za-z0-9+.-]*:/.test(url)) return { error: `invalid URL '${url}'` };
    rest = rest.slice(url.length).trimStart();
  } else if (rest.startsWith('(')) {
    const close = rest.indexOf(')');
    if (close < 0) return { error: "expected ')' to close the version specifier" };
    const parsed = parseSpecifier(rest.slice(1, close));
    if ('error' in parsed) return parsed;
    specifier = parsed.specifier;
    rest = rest.slice(close + 1).trimStart();
  } else if (OPERATOR.test(rest)) {
    const end = rest.indexOf(';');
    const parsed = parseSpecifier(end < 0 ? rest : rest.slice(0, end));
    if ('error' in parsed) return parsed;
    specifier = parsed.specifier;
    rest = end < 0 ? '' : rest.slice(end);
  }

  let marker: string | null = null;
  if (rest.startsWith(';')) {
    marker = rest.slice(1).trim();
    if (marker === '') return { error: "expected a marker after ';'" };
    const parsed = parseMarker(marker);
    if ('error' in parsed) return { error: `invalid marker: ${parsed.error}` };
  } else if (rest !== '') {
    return { error: `unexpected '${rest}' after the requirement` };
  }

  return {
    requirement: { name, key: normaliseName(name), extras, specifier, marker, url, editable: false },
  };
}

/** The inside of `[...]`: comma-separated names, normalised per PEP 685. */
export function parseExtras(text: string): { extras: string[] } | { error: string } {
  if (text.trim() === '') return { extras: [] };
  const extras = new Set<string>();
  for (const raw of text.split(',')) {
    const extra = raw.trim();
    if (!NAME.test(extra)) return { error: `invalid extra '${extra}'` };
    extras.add(normaliseName(extra));
  }
  return { extras: [...extras].sort() };
}

/** A PEP 440 version specifier (PEP 508 version_many), e.g. `>= 2.1, < 3`. */
export function parseSpecifier(text: string): { specifier: string } | { error: string } {
  if (text.trim() === '') return { specifier: '' };
  const clauses: string[] = [];
  for (const raw of text.split(',')) {
    const clause = raw.trim();
    const operator = OPERATOR.exec(clause)?.[0];
    const version = operator === undefined ? '' : clause.slice(operator.length).trim();
    if (operator === undefined || !isValidClauseVersion(operator, version)) {
      return { error: `invalid version specifier '${clause}'` };
    }
    clauses.push(operator + version);
  }
  return { specifier: clauses.join(',') };
}

// PEP 440 "Version specifiers": `.*` only after == and !=, and only on a release; a local
// label only with == and !=; `~=` needs at least two release segments; `===` takes any string.
function isValidClauseVersion(operator: string, version: string): boolean {
  if (version === '' || /\s/.test(version)) return false;
  if (operator === '===') return !/[;)]/.test(version);
  if (operator === '==' || operator === '!=') {
    if (version.endsWith('.*')) return /^v?(?:\d+!)?\d+(?:\.\d+)*$/i.test(version.slice(0, -2));
    return valid(version) !== null;
  }
  const parts = explain(version);
  if (parts === null || parts.local !== null) return false;
  return operator !== '~=' || parts.release.length >= 2;
}

/**
 * The one version a specifier allows, from its first exact clause: `==2.1.0` -> `2.1.0`,
 * `===2.1.0` -> `2.1.0`. Null for ranges, wildcards (`==2.1.*`), no specifier, and an exact
 * clause whose version is not PEP 440 (see unmatchableVersions), so a caller can compare it.
 */
export function pinnedVersion(specifier: string): string | null {
  const [first] = exactVersions(specifier);
  return first !== undefined && valid(first) !== null ? first : null;
}

/**
 * Versions in exact clauses that are not PEP 440 versions, e.g. `>2` in `===>2`. Such a clause
 * parses (`===` takes any string), but pip compares it with each release's PEP 440 version, so it
 * matches no release and nothing can be installed.
 */
export function unmatchableVersions(specifier: string): string[] {
  return exactVersions(specifier).filter((version) => valid(version) === null);
}

/** The versions of the `==` (without a wildcard) and `===` clauses, in order. */
function exactVersions(specifier: string): string[] {
  return specifier.split(',').flatMap((clause) => {
    const exact = /^(===?)\s*(.*)$/.exec(clause.trim());
    const version = exact?.[2]?.trim() ?? '';
    if (version === '' || (exact?.[1] === '==' && version.endsWith('.*'))) return [];
    return [version];
  });
}
