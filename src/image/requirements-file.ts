import { posix } from 'node:path';
import type { ManifestDependencies, ManifestRequirement } from '../scan/manifest.js';
import { leavesProject, localPathOf } from '../scan/local-paths.js';
import { normaliseName } from '../scan/pep508.js';
import { isToolkitDistribution } from '../scan/toolkit-distributions.js';
import { SvcError } from '../svc-error.js';
import { RUNTIME_DIR_IN_IMAGE } from './runtime-images.js';

/**
 * The requirements the image installs, rewritten from the manifest into pip's
 * requirements-file format (https://pip.pypa.io/en/stable/reference/requirements-file-format/)
 * rather than copied: that takes in pyproject.toml dependencies, leaves `apipod` out (svc's
 * runtime provides the toolkit), and re-checks every value against PEP 508 so that no
 * line can smuggle in a pip option (a newline, a ` --option`, a `\` continuation).
 */
export interface RequirementFiles {
  /** requirements.txt: index options, then one requirement a line; null when nothing to install. */
  requirements: string | null;
  /** constraints.txt (from `-c` files), referenced from requirements.txt; null when none. */
  constraints: string | null;
  /** Requirements that are paths into the project: installed after the code is copied. */
  local: string | null;
  /**
   * Requirements that compile CUDA code against the installed torch (flash-attn, ...):
   * installed after the others, without build isolation, as their own docs say; null when none.
   */
  compiled: string | null;
  /**
   * The index options alone (index URLs, find-links, --no-index, --trusted-host), without
   * hashes, constraints or build choices: what svc's own installs (the CUDA build tools, the provider's library) go
   * through, so an offline or private-index build never reaches PyPI for them; null when none.
   */
  pipOptions: string | null;
  /** Where the project asked for `apipod`, which the image leaves out. */
  omittedApipod: string | null;
  /** Path requirements outside the project (`file:///croot/...` from a conda freeze), left out: the image has no such path. */
  outsideProject: string[];
  /**
   * `--find-links` directories inside the project (a wheelhouse): copied into the image
   * before pip runs, at `target`, which the files name instead (pip would otherwise look
   * for them beside the requirements file in /opt/svc, where they are not).
   */
  findLinksDirectories: Array<{ source: string; target: string }>;
  /**
   * The `${NAME}` variables the files use (pip expands them, e.g. a token in an index URL):
   * the Dockerfile declares each as a build argument before pip runs, for `--build-arg NAME=...`.
   */
  variables: string[];
}

export const CONSTRAINTS_FILE = 'constraints.txt';

const NAME = /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/;
const SPECIFIER = /^(?:(?:~=|===|==|!=|<=|>=|<|>)\s*[A-Za-z0-9_.*+!-]+\s*)(?:,\s*(?:~=|===|==|!=|<=|>=|<|>)\s*[A-Za-z0-9_.*+!-]+\s*)*$/;
/** PEP 508 markers: names, operators, quoted strings, parentheses; no backslash, `#` or control characters. */
const MARKER = /^[A-Za-z0-9_.'"<>=!~ (),+*/:@-]+$/;
const URL = /^[^\s\\#'"]+(?:#[^\s\\'"]*)?$/;
const HASH = /^[a-z0-9]+:[0-9a-fA-F]+$/;
const PROJECT_PATH = /^[A-Za-z0-9._/-]+$/;
const FIND_LINKS_DIR_IN_IMAGE = `${RUNTIME_DIR_IN_IMAGE}/find-links`;
/** pip's environment-variable references in requirement files: `${NAME}`, POSIX names only. */
const PIP_VARIABLE = /\$\{([A-Z_][A-Z0-9_]*)\}/g;
/** pip's whole-install options a requirements file may carry, with a value where they take one. */
const PIP_OPTION = /^--(?:no-index|pre|prefer-binary|require-hashes|(?:trusted-host|only-binary|no-binary|use-feature) [A-Za-z0-9:._,+[\]-]+)$/;

/**
 * Throws what svc build throws for these dependencies (a line pip cannot read, a value that
 * would break out of its line, a find-links directory outside the project): svc scan calls
 * it after writing the manifest, so both commands give one verdict, from this one code path.
 */
export function checkDependencies(dependencies: ManifestDependencies): void {
  renderRequirementFiles(dependencies);
}

export function renderRequirementFiles(dependencies: ManifestDependencies, compilerPackages: readonly string[] = []): RequirementFiles {
  refuseUnreadableLines(dependencies.unreadable);
  const remote: string[] = [];
  const compiled: string[] = [];
  const local: string[] = [];
  const outsideProject: string[] = [];
  const findLinksDirectories: RequirementFiles['findLinksDirectories'] = [];
  for (const requirement of dependencies.requirements) {
    if (isToolkitDistribution(requirement.name)) continue;
    const path = requirement.url === null ? null : localPathOf(requirement.url);
    if (path !== null && leavesProject(path)) {
      outsideProject.push(`${requirement.source} (${requirement.url})`);
      continue;
    }
    const line = requirementLine(requirement);
    if (isLocal(requirement)) local.push(line);
    else if (compilerPackages.includes(normaliseName(requirement.name))) compiled.push(line);
    else remote.push(line);
  }
  const constraints = dependencies.constraints.map(requirementLine);
  const pipOptions = dependencies.pip_options.map((option) => check(option, PIP_OPTION, 'dependencies.pip_options', 'is not a pip option svc passes on'));
  const options = [
    ...(dependencies.index_url ? [`--index-url ${checkUrl(dependencies.index_url, 'index_url')}`] : []),
    ...dependencies.extra_index_urls.map((url) => `--extra-index-url ${checkUrl(url, 'extra_index_urls')}`),
    ...dependencies.find_links.map((url) => `--find-links ${findLinksLocation(url, findLinksDirectories)}`),
    ...pipOptions,
    ...(constraints.length ? [`-c ${CONSTRAINTS_FILE}`] : []),
  ];
  const header = '# Written by svc build from apipod-deploy/apipod.json; edit requirements.txt or pyproject.toml instead.';
  const file = (lines: string[]) => `${[header, ...lines].join('\n')}\n`;
  const requirements = remote.length ? file([...options, ...remote]) : null;
  const constraintsFile = constraints.length ? file(constraints) : null;
  const compiledFile = compiled.length ? file([...options, ...compiled]) : null;
  // Paths have no hashes to check, and constraints were applied with the remote requirements.
  const localFile = local.length ? file([...options.filter((option) => option !== '--require-hashes' && !option.startsWith('-c ')), ...local]) : null;
  // svc's own packages go where the project's come from, and no further: not built from
  // source for its --no-binary, nor a pre-release for its --pre.
  const indexOptions = options.filter((option) => /^--(?:index-url|extra-index-url|find-links|no-index|trusted-host)\b/.test(option));
  const pipOptionsFile = indexOptions.length ? file(indexOptions) : null;
  return {
    requirements,
    constraints: constraintsFile,
    local: localFile,
    compiled: compiledFile,
    pipOptions: pipOptionsFile,
    omittedApipod: dependencies.apipod_requirement,
    outsideProject,
    findLinksDirectories,
    variables: variablesIn([requirements, constraintsFile, localFile, compiledFile, pipOptionsFile]),
  };
}

/**
 * One requirement as pip reads it: `-e PATH[extras]`, `./path[extras] ; marker`, a bare URL
 * when pip learns the name only by building it, `name[extras] @ URL ; marker`, or
 * `name[extras]specifier ; marker`; then its `--hash` options.
 */
export function requirementLine(requirement: ManifestRequirement): string {
  const field = `dependencies: ${requirement.source}`;
  const extras = requirement.extras.map((extra) => check(extra, NAME, field, 'is not an extra name'));
  const extrasSuffix = extras.length ? `[${extras.join(',')}]` : '';
  const marker = requirement.marker === null ? '' : ` ; ${check(requirement.marker, MARKER, field, 'is not an environment marker')}`;
  const hashes = requirement.hashes.map((hash) => ` --hash=${check(hash, HASH, field, 'is not ALGORITHM:HEXDIGEST')}`).join('');
  const url = requirement.url === null ? null : checkUrl(requirement.url, field);
  if (url !== null) {
    if (requirement.editable) return `-e ${url}${isLocal(requirement) ? extrasSuffix : ''}`;
    if (isLocal(requirement)) return `${url}${extrasSuffix}${marker}${hashes}`;
    if (requirement.name === '') return `${url}${marker}${hashes}`;
  }
  const withExtras = `${check(requirement.name, NAME, field, 'is not a package name')}${extrasSuffix}`;
  if (url !== null) return `${withExtras} @ ${url}${marker}${hashes}`;
  const specifier = requirement.specifier === '' ? '' : check(requirement.specifier, SPECIFIER, field, 'is not a version specifier');
  return `${withExtras}${specifier}${marker}${hashes}`;
}

/** A remote find-links URL as it is; a path inside the project becomes where the image will have it. */
function findLinksLocation(location: string, directories: RequirementFiles['findLinksDirectories']): string {
  const path = localPathOf(location);
  if (path === null) return checkUrl(location, 'find_links');
  const source = posix.normalize(path).replace(/\/+$/, '');
  if (!PROJECT_PATH.test(source) || leavesProject(source)) {
    fail(location, 'find_links', 'is not a directory inside the project that svc can copy into the image (letters, digits, ".", "_", "-" and "/")');
  }
  const target = `${FIND_LINKS_DIR_IN_IMAGE}/${directories.length}`;
  directories.push({ source, target });
  return target;
}

function variablesIn(files: ReadonlyArray<string | null>): string[] {
  const names = files.flatMap((text) => [...(text ?? '').matchAll(PIP_VARIABLE)].map((match) => match[1] as string));
  return [...new Set(names)].sort();
}

/** A line pip cannot read fails pip's install too: building without it would leave a package out unnoticed. */
function refuseUnreadableLines([first, ...more]: readonly string[]): void {
  if (first === undefined) return;
  const others = more.length === 0 ? '' : ` (and ${more.length} more unreadable line${more.length === 1 ? '' : 's'}: svc scan lists them)`;
  throw new SvcError('invalid-project', `${first}${others}; pip cannot read it either, so the image would lack it: fix it and build again`);
}

/** A path into the project (`./pkg`, `file:...`): it exists in the image only once the code is copied. */
function isLocal(requirement: ManifestRequirement): boolean {
  return requirement.url !== null && localPathOf(requirement.url) !== null;
}

function checkUrl(url: string, field: string): string {
  return check(url, URL, field, 'is not a URL or path pip can read on one line').startsWith('-')
    ? fail(url, field, 'looks like an option, not a URL')
    : url;
}

function check(value: string, grammar: RegExp, field: string, why: string): string {
  // `\s-` would start a pip option inside the line; a trailing `\` would join the next one.
  if (!grammar.test(value) || /\s-/.test(value) || /[\u0000-\u001f\u007f]/.test(value)) fail(value, field, why);
  return value;
}

function fail(value: string, field: string, why: string): never {
  const shown = JSON.stringify(value.length > 120 ? `${value.slice(0, 120)}…` : value);
  throw new SvcError('invalid-project', `${shown} ${why}`, { field });
}
