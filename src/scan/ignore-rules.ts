import ignore, { type Ignore } from 'ignore';

/**
 * Directories of tools, never of the service, at any depth: version control, package
 * managers' trees, caches. The one list both a scan and the default .dockerignore leave out.
 */
export const TOOL_DIRECTORIES: readonly string[] = [
  '.git',
  '.hg',
  '.svn',
  'node_modules',
  '__pycache__',
  '.mypy_cache',
  '.pytest_cache',
  '.ruff_cache',
  '.tox',
  '.nox',
  '.ipynb_checkpoints',
  '.cache',
];

/**
 * What a scan never looks into, whatever the ignore files say: tools' directories and svc's
 * own output. Virtualenvs are found by their `pyvenv.cfg` (PEP 405), whatever their name.
 */
export const ALWAYS_IGNORED_DIRECTORIES: ReadonlySet<string> = new Set([...TOOL_DIRECTORIES, 'apipod-deploy']);

export const VIRTUALENV_MARKER = 'pyvenv.cfg';

/** One ignore file's patterns, anchored at the directory it applies to. */
export interface IgnoreRuleSet {
  /** Project-relative directory, '' for the root. */
  base: string;
  rules: Ignore;
}

/** `.gitignore` semantics (https://git-scm.com/docs/gitignore) via the `ignore` package. */
export function gitignoreRules(base: string, text: string): IgnoreRuleSet {
  return { base, rules: ignore().add(text) };
}

/**
 * `.dockerignore` patterns are matched from the context root, not at any depth as in
 * .gitignore (https://docs.docker.com/build/concepts/context/#dockerignore-files), so each
 * pattern is anchored with a leading slash before gitignore matching.
 */
export function dockerignoreRules(text: string): IgnoreRuleSet {
  const anchored = text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const negated = line.startsWith('!');
      const pattern = (negated ? line.slice(1) : line).trim().replace(/^(\.\/|\/)+/, '');
      return `${negated ? '!' : ''}/${pattern}`;
    });
  return { base: '', rules: ignore().add(anchored) };
}

/**
 * Whether `path` (project-relative, POSIX) is excluded by the rule sets, outermost first:
 * a deeper ignore file can re-include what an outer one excluded, as in git.
 */
export function isIgnored(ruleSets: readonly IgnoreRuleSet[], path: string, isDirectory: boolean): boolean {
  let ignored = false;
  for (const { base, rules } of ruleSets) {
    if (base !== '' && !path.startsWith(`${base}/`)) continue;
    const relative = base === '' ? path : path.slice(base.length + 1);
    const verdict = rules.test(isDirectory ? `${relative}/` : relative);
    if (verdict.ignored) ignored = true;
    else if (verdict.unignored) ignored = false;
  }
  return ignored;
}
