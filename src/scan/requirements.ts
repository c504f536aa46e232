import { posix } from 'node:path';
import type { Diagnostic } from './diagnostic.js';
import { evaluateMarker, type MarkerEnvironment } from './markers.js';
import { normaliseName, parseRequirement, type Requirement } from './pep508.js';
import type { ReadText } from './project-text.js';

/** A requirement with the file and line that declare it, and its `--hash` options. */
export interface LocatedRequirement extends Requirement {
  source: { file: string; line: number };
  hashes: string[];
}

/** Everything a requirements file (and the files it includes) asks pip to do. */
export interface RequirementSet {
  /** Requirements whose marker holds on the image (or have none), in file order. */
  requirements: LocatedRequirement[];
  /** Requirements whose marker is false on linux x86_64 with the image's Python. */
  skipped: LocatedRequirement[];
  /** `-c` constraint lines: they pin versions but install nothing. */
  constraints: LocatedRequirement[];
  indexUrl: string | null;
  extraIndexUrls: string[];
  findLinks: string[];
  /** Every file read, project-relative, in the order first read. */
  files: string[];
  diagnostics: Diagnostic[];
}


interface Location {
  file: string;
  line: number;
}

interface LogicalLine {
  text: string;
  line: number;
}

// pip's options that take a value, split into those svc records and those it leaves to pip.
const INCLUDE_OPTIONS = new Map([
  ['-r', 'requirement'], ['--requirement', 'requirement'],
  ['-c', 'constraint'], ['--constraint', 'constraint'],
]);
const INDEX_OPTIONS = new Map([
  ['-i', 'index'], ['--index-url', 'index'],
  ['--extra-index-url', 'extra-index'],
  ['-f', 'find-links'], ['--find-links', 'find-links'],
]);
const IGNORED_VALUE_OPTIONS = new Set(['--trusted-host', '--only-binary', '--no-binary', '--use-feature', '--progress-bar']);
const IGNORED_FLAGS = new Set(['--no-index', '--pre', '--prefer-binary', '--require-hashes', '--no-deps']);
const PER_REQUIREMENT_OPTIONS = new Set(['--hash', '--config-settings', '--global-option', '--install-option']);
const URL_SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;
const VCS_SCHEME = /^(git|hg|svn|bzr)\+/;
const WHEEL_OR_SDIST = /\/([A-Za-z0-9_.]+?)-\d[^/]*\.(?:whl|tar\.gz|zip)$/;

/**
 * Reads a pip requirements file the way pip does (pip's requirements file format): comments,
 * `\` continuations, `-r`/`-c` includes relative to the including file, index options,
 * URL, VCS and local-path requirements, `-e`, `--hash`, and environment markers evaluated
 * for the image. A line that cannot be parsed becomes a diagnostic and the rest is read.
 */
export function readRequirements(entry: string, readText: ReadText, environment: MarkerEnvironment): RequirementSet {
  const set: RequirementSet = {
    requirements: [], skipped: [], constraints: [], indexUrl: null, extraIndexUrls: [], findLinks: [], files: [], diagnostics: [],
  };
  readFile(entry, 'requirement', [], null);
  return set;

  function readFile(file: string, kind: 'requirement' | 'constraint', including: string[], from: Location | null): void {
    if (including.includes(file)) {
      set.diagnostics.push({ ...(from ?? { file }), message: `${file} includes itself through ${[...including, file].join(' -> ')}; not read again` });
      return;
    }
    if (set.files.includes(file)) return;
    const text = readText(file);
    if (text === null) {
      if (from) set.diagnostics.push({ ...from, message: `${file} not found` });
      return;
    }
    set.files.push(file);
    for (const logical of logicalLines(text)) {
      readLine(file, kind, logical, [...including, file]);
    }
  }

  function readLine(file: string, kind: 'requirement' | 'constraint', { text, line }: LogicalLine, including: string[]): void {
    const at = { file, line };
    const report = (message: string): void => void set.diagnostics.push({ ...at, message });
    const [first = '', ...rest] = splitWords(text);
    const [option, inlineValue] = splitOption(first);

    const includeKind = INCLUDE_OPTIONS.get(option);
    if (includeKind) {
      const target = inlineValue ?? rest[0];
      if (!target) return report(`${option} needs a file name`);
      if (URL_SCHEME.test(target)) return report(`${option} ${target}: remote requirement files are not read; list the requirements here`);
      const resolved = posix.normalize(posix.join(posix.dirname(file), target));
      const childKind = includeKind === 'constraint' || kind === 'constraint' ? 'constraint' : 'requirement';
      return readFile(resolved, childKind, including, at);
    }
    const indexKind = INDEX_OPTIONS.get(option);
    if (indexKind) {
      const url = inlineValue ?? rest[0];
      if (!url) return report(`${option} needs a URL`);
      if (indexKind === 'index') set.indexUrl = url;
      else if (indexKind === 'extra-index') pushUnique(set.extraIndexUrls, url);
      else pushUnique(set.findLinks, url);
      return;
    }
    if (IGNORED_VALUE_OPTIONS.has(option) || IGNORED_FLAGS.has(option)) return;

    const editable = option === '-e' || option === '--editable';
    const words = editable ? [inlineValue ?? rest.shift() ?? '', ...rest] : [first, ...rest];
    if (editable && words[0] === '') return report(`${option} needs a path or URL`);
    if (!editable && option.startsWith('-')) return report(`unknown option ${option}`);

    const split = splitRequirementOptions(words);
    if ('error' in split) return report(split.error);
    const parsed = parseRequirementText(split.requirement, editable);
    if ('error' in parsed) return report(parsed.error);
    const located: LocatedRequirement = { ...parsed.requirement, source: at, hashes: split.hashes };

    if (kind === 'constraint') return void set.constraints.push(located);
    if (located.marker === null) return void set.requirements.push(located);
    const verdict = evaluateMarker(located.marker, environment);
    if ('error' in verdict) return report(`marker '${located.marker}': ${verdict.error}`);
    (verdict.value ? set.requirements : set.skipped).push(located);
  }
}

/** Joins `\` continuations and drops comments; keeps the line number a logical line starts on. */
function logicalLines(text: string): LogicalLine[] {
  const physical = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  const lines: LogicalLine[] = [];
  let start = 0;
  let joined = '';
  for (let index = 0; index < physical.length; index++) {
    const raw = physical[index] as string;
    if (joined === '') start = index + 1;
    const continued = raw.endsWith('\\') && index < physical.length - 1;
    joined += continued ? raw.slice(0, -1) : raw;
    if (continued) continue;
    const uncommented = stripComment(joined).trim();
    if (uncommented !== '') lines.push({ text: uncommented, line: start });
    joined = '';
  }
  return lines;
}

/** pip: a `#` at the start of a line or after whitespace starts a comment (a URL fragment does not). */
function stripComment(text: string): string {
  return text.replace(/(^|\s)#.*$/, '');
}

function splitWords(text: string): string[] {
  return text.split(/\s+/).filter((word) => word !== '');
}

/** `--index-url=URL` -> [`--index-url`, `URL`]; `-rfile` stays whole (pip needs a space there too). */
function splitOption(word: string): [string, string | undefined] {
  if (!word.startsWith('--')) return [word, undefined];
  const equals = word.indexOf('=');
  return equals < 0 ? [word, undefined] : [word.slice(0, equals), word.slice(equals + 1)];
}

/** Separates per-requirement options (`--hash=...`) from the requirement text before them. */
function splitRequirementOptions(words: string[]): { requirement: string; hashes: string[] } | { error: string } {
  const firstOption = words.findIndex((word) => PER_REQUIREMENT_OPTIONS.has(splitOption(word)[0]));
  if (firstOption < 0) return { requirement: words.join(' '), hashes: [] };
  const hashes: string[] = [];
  for (let index = firstOption; index < words.length; index++) {
    const [option, inline] = splitOption(words[index] as string);
    if (!PER_REQUIREMENT_OPTIONS.has(option)) return { error: `unexpected '${words[index]}' after the requirement's options` };
    const value = inline ?? words[++index];
    if (!value) return { error: `${option} needs a value` };
    if (option === '--hash') {
      if (!/^[a-z0-9]+:[0-9a-fA-F]+$/.test(value)) return { error: `--hash ${value}: expected ALGORITHM:HEXDIGEST` };
      hashes.push(value);
    }
  }
  return { requirement: words.slice(0, firstOption).join(' '), hashes };
}

/**
 * A requirement line: PEP 508 (`name[extra]>=1 ; marker`, `name @ url`), or pip's forms
 * PEP 508 lacks: a bare URL or VCS URL (`git+https://...#egg=name`) and a local path.
 */
function parseRequirementText(text: string, editable: boolean): { requirement: Requirement } | { error: string } {
  const [target = '', marker = null] = splitMarker(text);
  if (isLocation(target)) return { requirement: locationRequirement(target, marker, editable) };
  if (editable) return { error: `-e ${target}: expected a local path or a VCS URL` };
  const parsed = parseRequirement(text);
  if ('error' in parsed) return { error: `'${text}': ${parsed.error}` };
  return parsed;
}

function isLocation(text: string): boolean {
  return URL_SCHEME.test(text) || VCS_SCHEME.test(text) || /^(\.{1,2}(\/|$)|\/|file:)/.test(text);
}

/** pip allows `URL ; marker` only with a space before the `;`, since URLs may contain one. */
function splitMarker(text: string): [string, string | null] {
  const at = text.search(/\s;/);
  if (at < 0) return [text.trim(), null];
  return [text.slice(0, at).trim(), text.slice(at).replace(/^\s*;/, '').trim() || null];
}

function locationRequirement(location: string, marker: string | null, editable: boolean): Requirement {
  const name = nameFromLocation(location);
  return { name, key: name ? normaliseName(name) : '', extras: [], specifier: '', marker, url: location, editable };
}

/** The name pip would know before building: `#egg=name`, or a wheel/sdist file name. */
function nameFromLocation(location: string): string {
  const egg = /[#&]egg=([A-Za-z0-9][A-Za-z0-9._-]*)/.exec(location)?.[1];
  if (egg) return egg.replace(/\[.*$/, '');
  return WHEEL_OR_SDIST.exec(location.split('#')[0] as string)?.[1] ?? '';
}

function pushUnique(list: string[], value: string): void {
  if (!list.includes(value)) list.push(value);
}
