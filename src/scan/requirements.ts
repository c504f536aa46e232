import { posix } from 'node:path';
import type { Diagnostic } from './diagnostic.js';
import { evaluateMarker, type MarkerEnvironment } from './markers.js';
import { normaliseName, parseRequirement, type Requirement } from './pep508.js';
import { leavesProject, localPathOf } from './local-paths.js';
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
  /** pip's other options that apply to the whole install, as lines (`--pre`, `--trusted-host HOST`), in file order. */
  pipOptions: string[];
  /** Every file read, project-relative, in the order first read. */
  files: string[];
  diagnostics: Diagnostic[];
  /** The diagnostics for lines dropped because they could not be read (pip could not either). */
  unreadable: Diagnostic[];
}

interface Location {
  file: string;
  line: number;
}

interface LogicalLine {
  text: string;
  line: number;
}

// The options pip accepts in a requirements file
// (https://pip.pypa.io/en/stable/reference/requirements-file-format/#supported-options).
const INCLUDE_OPTIONS = new Map([
  ['-r', 'requirement'], ['--requirement', 'requirement'],
  ['-c', 'constraint'], ['--constraint', 'constraint'],
]);
const INDEX_OPTIONS = new Map([
  ['-i', 'index'], ['--index-url', 'index'],
  ['--extra-index-url', 'extra-index'],
  ['-f', 'find-links'], ['--find-links', 'find-links'],
]);
const GLOBAL_VALUE_OPTIONS = new Set(['--trusted-host', '--only-binary', '--no-binary', '--use-feature']);
const GLOBAL_FLAGS = new Set(['--no-index', '--pre', '--prefer-binary', '--require-hashes']);
const PER_REQUIREMENT_OPTIONS = new Set(['--hash', '--config-settings', '--global-option']);
/** Short options whose value may follow without a space, as optparse allows (`-rdev.txt`, `-e.`). */
const SHORT_OPTIONS_WITH_VALUE = new Set(['-r', '-c', '-e', '-i', '-f']);
const URL_SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;
const VCS_SCHEME = /^(git|hg|svn|bzr)\+/;
/** The schemes pip's `is_url` accepts: http, https, file, ftp and its version-control ones. */
const PIP_URL_SCHEMES = new Set([
  'http', 'https', 'file', 'ftp',
  'git+http', 'git+https', 'git+ssh', 'git+git', 'git+file',
  'hg+file', 'hg+http', 'hg+https', 'hg+ssh', 'hg+static-http',
  'svn+ssh', 'svn+http', 'svn+https', 'svn+svn', 'svn+file',
  'bzr+http', 'bzr+https', 'bzr+ssh', 'bzr+sftp', 'bzr+ftp', 'bzr+lp', 'bzr+file',
]);
const WHEEL_OR_SDIST = /(?:^|\/)([A-Za-z0-9_.]+?)-\d[^/]*\.(?:whl|tar\.gz|zip)$/;
const ARCHIVE = /\.(?:whl|zip|tar\.gz|tgz|tar\.bz2|tbz|tar\.xz|txz|tar)$/;
const TRAILING_EXTRAS = /(?<=.)\[([^\]]+)\]$/;
/** No spaces, quotes or version operators: `pkg;extra=="a/b"` is a requirement with a marker, not a path. */
const PATH_CHARACTERS = /^[^\s;<>=!~,'"]+$/;
const PEP508_URL_FORM = /^[A-Za-z0-9][A-Za-z0-9._-]*\s*(?:\[[^\]]*\])?\s*@/;

/**
 * Reads a pip requirements file the way pip does (pip's requirements file format): comments,
 * `\` continuations, `-r`/`-c` includes relative to the including file, index options,
 * URL, VCS and local-path requirements, `-e`, `--hash`, and environment markers evaluated
 * for the image. A line that cannot be parsed becomes a diagnostic and the rest is read.
 */
export function readRequirements(
  entry: string,
  readText: ReadText,
  environment: MarkerEnvironment,
  /** The project's absolute POSIX path: a path requirement inside it is recorded relative to it. */
  projectRoot: string | null = null,
  /** Why a file that is there cannot be read (a permission), for an include; else it is not found. */
  whyUnreadable: (file: string) => string | undefined = () => undefined,
): RequirementSet {
  const set: RequirementSet = {
    requirements: [], skipped: [], constraints: [], indexUrl: null, extraIndexUrls: [], findLinks: [], pipOptions: [], files: [], diagnostics: [], unreadable: [],
  };
  // pip reads a file again when it is included both ways (-r and -c), so record each way.
  const readAs = new Set<string>();
  readFile(entry, 'requirement', [], null);
  return set;

  function drop(diagnostic: Diagnostic): void {
    set.diagnostics.push(diagnostic);
    set.unreadable.push(diagnostic);
  }

  function readFile(file: string, kind: 'requirement' | 'constraint', including: string[], from: Location | null): void {
    if (including.includes(file)) {
      set.diagnostics.push({ ...(from ?? { file }), message: `${file} includes itself through ${[...including, file].join(' -> ')}; not read again` });
      return;
    }
    if (readAs.has(`${kind}:${file}`)) return;
    const text = readText(file);
    if (text === null) {
      if (from) drop({ ...from, message: `${file} ${whyUnreadable(file) ?? 'not found'}` });
      return;
    }
    readAs.add(`${kind}:${file}`);
    pushUnique(set.files, file);
    for (const logical of logicalLines(text)) {
      readLine(file, kind, logical, [...including, file]);
    }
  }

  function readLine(file: string, kind: 'requirement' | 'constraint', { text, line }: LogicalLine, including: string[]): void {
    const at = { file, line };
    const report = (message: string): void => void set.diagnostics.push({ ...at, message });
    const skip = (message: string): void => drop({ ...at, message });
    const [first = '', ...rest] = splitWords(text);
    const [option, inlineValue] = splitOption(first);

    const includeKind = INCLUDE_OPTIONS.get(option);
    if (includeKind) {
      const target = inlineValue ?? rest[0];
      if (!target) return skip(`${option} needs a file name`);
      if (URL_SCHEME.test(target)) return skip(`${option} ${target}: remote requirement files are not read; list the requirements here`);
      const resolved = posix.isAbsolute(target) ? target : posix.normalize(posix.join(posix.dirname(file), target));
      // pip: `-r` installs what it names even from inside a constraints file; `-c` only constrains.
      return readFile(resolved, includeKind === 'constraint' ? 'constraint' : 'requirement', including, at);
    }
    const indexKind = INDEX_OPTIONS.get(option);
    if (indexKind) {
      const url = inlineValue ?? rest[0];
      if (!url) return skip(`${option} needs a URL`);
      if (holdsLiteralCredential(url)) report(credentialWarning(option));
      if (indexKind === 'index') set.indexUrl = url;
      else if (indexKind === 'extra-index') pushUnique(set.extraIndexUrls, url);
      else pushUnique(set.findLinks, url);
      return;
    }
    if (GLOBAL_FLAGS.has(option)) return pushUnique(set.pipOptions, option);
    if (GLOBAL_VALUE_OPTIONS.has(option)) {
      const value = inlineValue ?? rest[0];
      if (!value) return skip(`${option} needs a value`);
      return pushUnique(set.pipOptions, `${option} ${value}`);
    }

    const editable = option === '-e' || option === '--editable';
    const words = editable ? [inlineValue ?? rest.shift() ?? '', ...rest] : [first, ...rest];
    if (editable && words[0] === '') return skip(`${option} needs a path or URL`);
    if (!editable && option.startsWith('-')) return skip(`unknown option ${option}`);

    const split = splitRequirementOptions(words);
    if ('error' in split) return skip(split.error);
    for (const option of split.unsupported) report(`${option} is not passed on to the image's pip; the requirement is installed without it`);
    const parsed = parseRequirementText(split.requirement, editable);
    if ('error' in parsed) return skip(parsed.error);
    const located: LocatedRequirement = { ...inProject(parsed.requirement, projectRoot), source: at, hashes: split.hashes };
    if (located.url !== null && holdsLiteralCredential(located.url)) report(credentialWarning('its URL'));
    const outside = outsideProjectWarning(located);
    if (outside !== null) report(outside);

    if (kind === 'constraint') return void set.constraints.push(located);
    if (located.marker === null) return void set.requirements.push(located);
    const verdict = evaluateMarker(located.marker, environment);
    if ('error' in verdict) return skip(`marker '${located.marker}': ${verdict.error}`);
    (verdict.value ? set.requirements : set.skipped).push(located);
  }
}

/**
 * Joins `\` continuations and drops comments, as pip's `join_lines` does: a comment line is
 * never continued (`# C:\temp\` does not swallow the next line) and ends a continuation.
 * Keeps the line number a logical line starts on.
 */
function logicalLines(text: string): LogicalLine[] {
  const physical = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  const lines: LogicalLine[] = [];
  let start = 0;
  let joined = '';
  for (let index = 0; index < physical.length; index++) {
    const raw = physical[index] as string;
    if (joined === '') start = index + 1;
    const isComment = /^\s*#/.test(raw);
    const continues = !isComment && raw.endsWith('\\');
    joined += isComment ? ` ${raw}` : continues ? raw.slice(0, -1) : raw;
    if (continues && index < physical.length - 1) continue;
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

/** `--index-url=URL` -> [`--index-url`, `URL`]; `-rdev.txt` -> [`-r`, `dev.txt`], as optparse reads them. */
function splitOption(word: string): [string, string | undefined] {
  if (!word.startsWith('--')) {
    const short = word.slice(0, 2);
    return word.length > 2 && SHORT_OPTIONS_WITH_VALUE.has(short) ? [short, word.slice(2)] : [word, undefined];
  }
  const equals = word.indexOf('=');
  return equals < 0 ? [word, undefined] : [word.slice(0, equals), word.slice(equals + 1)];
}

/**
 * Separates per-requirement options from the requirement text before them: `--hash` values,
 * and the options svc does not carry into the image (`--config-settings`, `--global-option`).
 */
function splitRequirementOptions(
  words: string[],
): { requirement: string; hashes: string[]; unsupported: string[] } | { error: string } {
  const firstOption = words.findIndex((word) => PER_REQUIREMENT_OPTIONS.has(splitOption(word)[0]));
  if (firstOption < 0) return { requirement: words.join(' '), hashes: [], unsupported: [] };
  const hashes: string[] = [];
  const unsupported: string[] = [];
  for (let index = firstOption; index < words.length; index++) {
    const [option, inline] = splitOption(words[index] as string);
    if (!PER_REQUIREMENT_OPTIONS.has(option)) return { error: `unexpected '${words[index]}' after the requirement's options` };
    const value = inline ?? words[++index];
    if (!value) return { error: `${option} needs a value` };
    if (option === '--hash') {
      if (!/^[a-z0-9]+:[0-9a-fA-F]+$/.test(value)) return { error: `--hash ${value}: expected ALGORITHM:HEXDIGEST` };
      hashes.push(value);
    } else {
      pushUnique(unsupported, option);
    }
  }
  return { requirement: words.slice(0, firstOption).join(' '), hashes, unsupported };
}

/**
 * A requirement line: PEP 508 (`name[extra]>=1 ; marker`, `name @ url`), or pip's forms
 * PEP 508 lacks: a bare URL or VCS URL (`git+https://...#egg=name`) and a local path or
 * archive, with extras (`.[gpu]`).
 */
function parseRequirementText(text: string, editable: boolean): { requirement: Requirement } | { error: string } {
  const [target = '', marker = null] = splitMarker(text);
  // A URL with nowhere to fetch from (`http://`, `git+https://`): pip cannot either.
  if (URL_SCHEME.test(target) && !target.startsWith('file:') && !/^[^:]+:\/\/[^/?#\s]+/.test(target)) {
    return { error: `'${text}': a URL without a host` };
  }
  if (isPipUrl(target) && /\s;/.test(target)) {
    return { error: `'${text}': pip takes a URL's marker only after '; ' (a semicolon, then a space), so it reads the marker as part of the URL and cannot fetch it; write 'URL; marker'` };
  }
  if (isLocation(target)) return { requirement: locationRequirement(target, marker, editable) };
  if (editable) return { error: `-e ${target}: expected a local path or a VCS URL` };
  const parsed = parseRequirement(marker === null ? target : `${target} ; ${marker}`);
  if ('error' in parsed) return { error: `'${text}': ${parsed.error}` };
  return parsed;
}

/**
 * pip's test (`parse_req_from_line`): a URL, or what looks like a path (a `/`, a leading `.`)
 * or names an archive, unless it is PEP 508's `name @ URL`.
 */
function isLocation(text: string): boolean {
  if (URL_SCHEME.test(text) || VCS_SCHEME.test(text) || text.startsWith('file:')) return true;
  const path = text.replace(TRAILING_EXTRAS, '');
  if (PEP508_URL_FORM.test(text) || !PATH_CHARACTERS.test(path)) return false;
  return path.includes('/') || path.startsWith('.') || ARCHIVE.test(path);
}

/**
 * Where the marker starts, as pip's `parse_req_from_line` finds it: after the first `; ` (a
 * semicolon, then a space) in a URL, whose own `;` needs no space, and after the first `;`
 * in anything else, `name @ URL; marker` included.
 */
function splitMarker(text: string): [string, string | null] {
  const separator = isPipUrl(text) ? '; ' : ';';
  const at = text.indexOf(separator);
  if (at < 0) return [text.trim(), null];
  return [text.slice(0, at).trim(), text.slice(at + separator.length).trim() || null];
}

/** pip's `is_url`: a scheme it fetches from, or one of its version-control schemes (`vcs.all_schemes`). */
function isPipUrl(text: string): boolean {
  const colon = text.indexOf(':');
  return colon > 0 && PIP_URL_SCHEMES.has(text.slice(0, colon).toLowerCase());
}

function locationRequirement(target: string, marker: string | null, editable: boolean): Requirement {
  // pip strips extras from a path (`_strip_extras`); a URL carries them in `#egg=name[extra]`.
  const extrasText = URL_SCHEME.test(target) || VCS_SCHEME.test(target) ? undefined : TRAILING_EXTRAS.exec(target)?.[1];
  const location = extrasText === undefined ? target : target.replace(TRAILING_EXTRAS, '');
  const extras = extrasText?.split(',').map((extra) => extra.trim()).filter((extra) => extra !== '') ?? [];
  const name = nameFromLocation(location);
  return { name, key: name ? normaliseName(name) : '', extras, specifier: '', marker, url: location, editable };
}

/**
 * Whether a URL carries a secret as such (`https://user:password@`, a token as the user of
 * `git+https://TOKEN@github.com`) rather than as pip's `${VARIABLE}`; `git@` of ssh is none.
 */
function holdsLiteralCredential(url: string): boolean {
  const userinfo = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/@]*)@/.exec(url)?.[1];
  if (userinfo === undefined) return false;
  const isLiteral = (text: string) => text.replace(/\$\{[A-Z_][A-Z0-9_]*\}/g, '') !== '';
  const colon = userinfo.indexOf(':');
  return colon < 0 ? userinfo !== 'git' && isLiteral(userinfo) : isLiteral(userinfo.slice(colon + 1));
}

function credentialWarning(what: string): string {
  return `${what} holds a credential, which svc build would write into the image (its requirements and svc.manifest label); ` +
    'write it as ${VARIABLE}, which pip expands, and pass svc build --image --build-arg VARIABLE=...';
}

/**
 * A path requirement given absolute (`-e /home/me/project`, as `pip freeze` writes after
 * `pip install -e .`) but inside the project, made relative to it: in the image the project
 * is elsewhere.
 */
function inProject(requirement: Requirement, projectRoot: string | null): Requirement {
  const path = requirement.url === null ? null : localPathOf(requirement.url);
  if (projectRoot === null || path === null || !posix.isAbsolute(path)) return requirement;
  const relative = posix.relative(projectRoot, path);
  if (leavesProject(relative)) return requirement;
  return { ...requirement, url: relative === '' ? '.' : `./${relative}` };
}

/**
 * A path requirement that leads out of the project (absolute, `file:///...`, `../`), or null.
 * pip reads such paths from its working directory, which in the image is the project root.
 */
/** A path requirement outside the project (a conda freeze's `file:///croot/...`): the image cannot have it. */
export function outsideProjectWarning({ url }: Requirement): string | null {
  const path = url === null ? null : localPathOf(url);
  if (path === null || !leavesProject(path)) return null;
  return `${url} is outside the project, so the image will not have it and svc build leaves it out; require the package by name and version instead`;
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
