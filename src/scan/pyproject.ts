import { parse as parseToml, TomlError } from 'smol-toml';
import type { Diagnostic } from './diagnostic.js';
import { normaliseName, parseRequirement, type Requirement } from './pep508.js';
import type { LocatedRequirement } from './requirements.js';
import { poetryToPep440 } from './poetry-constraint.js';

export interface Pyproject {
  /** `[project] dependencies` (PEP 621) and `[tool.poetry.dependencies]`, markers not yet evaluated. */
  requirements: LocatedRequirement[];
  requiresPython: string | null;
  poetryPython: string | null;
  /** The file builds a package (a `[build-system]`, and not Poetry's `package-mode = false`). */
  buildsPackage: boolean;
  diagnostics: Diagnostic[];
  /**
   * What declares dependencies but could not be read (the file is not TOML, an entry is no
   * requirement), also among the diagnostics: the image would lack what it names.
   */
  unreadable: Diagnostic[];
}

type Table = Record<string, unknown>;

/** Reads what svc needs from a pyproject.toml; a broken file is a diagnostic, not a failure. */
export function readPyproject(text: string, file = 'pyproject.toml'): Pyproject {
  const result: Pyproject = { requirements: [], requiresPython: null, poetryPython: null, buildsPackage: false, diagnostics: [], unreadable: [] };
  const drop = (diagnostic: Diagnostic): void => {
    result.diagnostics.push(diagnostic);
    result.unreadable.push(diagnostic);
  };
  let data: Table;
  try {
    data = parseToml(text) as Table;
  } catch (error) {
    const line = error instanceof TomlError ? error.line : undefined;
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    drop({ file, line, message: `not valid TOML: ${reason}` });
    return result;
  }
  const lines = new LineFinder(text);
  result.buildsPackage = asTable(data['build-system']) !== null && asTable(asTable(data.tool)?.poetry)?.['package-mode'] !== false;

  const project = asTable(data.project);
  if (project) {
    const requiresPython = project['requires-python'];
    if (typeof requiresPython === 'string') result.requiresPython = requiresPython;
    else if (requiresPython !== undefined) {
      result.diagnostics.push({ file, line: lines.findKey('requires-python', 'project'), field: 'project.requires-python', message: 'must be a string, such as ">=3.10"; ignored' });
    }
    const dependencies = project.dependencies;
    if (dependencies !== undefined && !Array.isArray(dependencies)) {
      drop({ file, line: lines.findKey('dependencies', 'project'), field: 'project.dependencies', message: 'must be a list of strings' });
    }
    for (const entry of Array.isArray(dependencies) ? dependencies : []) {
      const line = (typeof entry === 'string' ? lines.find(entry) : undefined) ?? lines.findKey('dependencies', 'project');
      if (typeof entry !== 'string') {
        drop({ file, line, field: 'project.dependencies', message: 'entries must be strings' });
        continue;
      }
      const parsed = parseRequirement(entry);
      if ('error' in parsed) {
        drop({ file, line, field: 'project.dependencies', message: parsed.error });
        continue;
      }
      result.requirements.push(locate(parsed.requirement, file, line));
    }
  }

  const poetry = asTable(asTable(asTable(data.tool)?.poetry)?.dependencies);
  for (const [name, spec] of Object.entries(poetry ?? {})) {
    const line = lines.findKey(name, 'tool.poetry.dependencies');
    if (name.toLowerCase() === 'python') {
      if (typeof spec === 'string') result.poetryPython = spec;
      continue;
    }
    const field = `tool.poetry.dependencies.${name}`;
    // A list is Poetry's multiple-constraint form: one declaration per Python or platform.
    for (const declaration of Array.isArray(spec) ? spec : [spec]) {
      const converted = poetryDependency(name, declaration);
      if ('error' in converted) {
        drop({ file, line, field, message: converted.error });
        continue;
      }
      if (converted.requirement) result.requirements.push(locate(converted.requirement, file, line));
      if (converted.source) {
        result.diagnostics.push({ file, line, field, message: `source '${converted.source}' is not read by svc; the image installs ${name} from PyPI or the index options in requirements.txt` });
      }
    }
  }

  for (const name of Object.keys(asTable(asTable(asTable(data.tool)?.uv)?.sources) ?? {})) {
    result.diagnostics.push({
      file,
      line: lines.findKey(name, 'tool.uv.sources'),
      field: `tool.uv.sources.${name}`,
      message: `uv's sources are not read by svc; the image installs ${name} from PyPI or the index options in requirements.txt`,
    });
  }
  return result;
}

function locate(requirement: Requirement, file: string, line: number | undefined): LocatedRequirement {
  return { ...requirement, source: { file, line: line ?? 1 }, hashes: [] };
}

/**
 * One Poetry dependency declaration as a PEP 508 requirement. Optional dependencies are
 * installed only with an extra, so they are left out (requirement null). A constraint with
 * `||` alternatives has no single PEP 440 form and keeps no specifier. `source` names a
 * package source svc does not read.
 */
function poetryDependency(
  name: string,
  spec: unknown,
): { requirement: Requirement | null; source?: string } | { error: string } {
  const declaration = typeof spec === 'string' ? { version: spec } : asTable(spec);
  if (!declaration) return { error: 'expected a version string, a table, or a list of tables' };
  if (declaration.optional === true) return { requirement: null };
  let specifier = '';
  if (typeof declaration.version === 'string') {
    const converted = poetryToPep440(declaration.version);
    if ('error' in converted) return converted;
    specifier = converted.alternatives.length === 1 ? (converted.alternatives[0] as string) : '';
  }
  const markers: string[] = [];
  if (typeof declaration.markers === 'string') markers.push(`(${declaration.markers})`);
  if (typeof declaration.python === 'string') {
    const converted = poetryToPep440(declaration.python);
    if ('error' in converted) return converted;
    const clauses = converted.alternatives.map((range) =>
      range.split(',').map((clause) => pythonVersionClause(clause)).join(' and '),
    );
    markers.push(`(${clauses.map((clause) => `(${clause})`).join(' or ')})`);
  }
  const url = ['url', 'path'].map((field) => declaration[field]).find((value) => typeof value === 'string');
  const extras = Array.isArray(declaration.extras) ? declaration.extras.filter((e) => typeof e === 'string') : [];
  return {
    requirement: {
      name,
      key: normaliseName(name),
      extras: extras.map((extra) => normaliseName(extra)).sort(),
      specifier,
      marker: markers.length ? markers.join(' and ') : null,
      url: typeof declaration.git === 'string' ? gitUrl(declaration.git, declaration) : ((url as string | undefined) ?? null),
      editable: declaration.develop === true,
    },
    ...(typeof declaration.source === 'string' ? { source: declaration.source } : {}),
  };
}

/** pip's VCS URL for a Poetry git dependency: the revision after `@`, the subdirectory in the fragment. */
function gitUrl(repository: string, declaration: Table): string {
  const revision = ['rev', 'tag', 'branch'].map((field) => declaration[field]).find((value) => typeof value === 'string');
  const subdirectory = typeof declaration.subdirectory === 'string' ? `#subdirectory=${declaration.subdirectory}` : '';
  return `git+${repository}${revision === undefined ? '' : `@${revision as string}`}${subdirectory}`;
}

function pythonVersionClause(clause: string): string {
  const match = /^(===|==|!=|<=|>=|~=|<|>)(.+)$/.exec(clause);
  return match ? `python_full_version ${match[1]} "${match[2]}"` : 'python_version >= "0"';
}

function asTable(value: unknown): Table | null {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Table) : null;
}

/** 1-based line numbers for values in the TOML text, so diagnostics can point at them. */
class LineFinder {
  private readonly lines: string[];

  constructor(text: string) {
    this.lines = text.split(/\r?\n/);
  }

  find(value: string): number | undefined {
    const spellings = [`"${value}"`, `'${value}'`, JSON.stringify(value)];
    const index = this.lines.findIndex((line) => spellings.some((spelling) => line.includes(spelling)));
    return index === -1 ? undefined : index + 1;
  }

  /** The line of `key = ...` inside the `[table]` header's section. */
  findKey(key: string, table: string): number | undefined {
    const header = this.lines.findIndex((line) => line.trim() === `[${table}]`);
    const escaped = key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const pattern = new RegExp(`^\\s*["']?${escaped}["']?\\s*=`);
    const index = this.lines.findIndex((line, at) => at > header && pattern.test(line));
    return index === -1 ? undefined : index + 1;
  }
}
