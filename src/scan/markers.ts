import { satisfies, valid, validRange } from '@renovatebot/pep440';

/** The PEP 508 environment marker variables, as the target interpreter would report them. */
export interface MarkerEnvironment {
  python_version: string;
  python_full_version: string;
  os_name: string;
  sys_platform: string;
  platform_system: string;
  platform_machine: string;
  platform_python_implementation: string;
  implementation_name: string;
  implementation_version: string;
  platform_release: string;
  platform_version: string;
}

type EnvironmentVariable = keyof MarkerEnvironment;
type MarkerVariable = EnvironmentVariable | 'extra';
type ComparisonOperator = '===' | '~=' | '==' | '!=' | '<=' | '>=' | '<' | '>' | 'in' | 'not in';

export type MarkerOperand = { variable: MarkerVariable } | { literal: string };

/** A parsed marker: comparisons joined by `and` / `or`. */
export type MarkerNode =
  | { kind: 'compare'; left: MarkerOperand; operator: ComparisonOperator; right: MarkerOperand }
  | { kind: 'and' | 'or'; left: MarkerNode; right: MarkerNode };

export type MarkerResult = { value: boolean } | { error: string };

const VARIABLES: ReadonlySet<string> = new Set<MarkerVariable>([
  'python_version',
  'python_full_version',
  'os_name',
  'sys_platform',
  'platform_system',
  'platform_machine',
  'platform_python_implementation',
  'implementation_name',
  'implementation_version',
  'platform_release',
  'platform_version',
  'extra',
]);

// The dotted spellings from PEP 345 that pip (via `packaging`) still accepts.
const LEGACY_VARIABLES: Readonly<Record<string, EnvironmentVariable>> = {
  'os.name': 'os_name',
  'sys.platform': 'sys_platform',
  'platform.version': 'platform_version',
  'platform.machine': 'platform_machine',
  'platform.python_implementation': 'platform_python_implementation',
  python_implementation: 'platform_python_implementation',
};

// PEP 508 compares these as PEP 440 versions when both sides are valid versions; every
// other variable (and any value that is not a version) compares as a Python string.
const VERSION_VARIABLES: ReadonlySet<MarkerVariable> = new Set<MarkerVariable>([
  'python_version',
  'python_full_version',
  'implementation_version',
  'platform_release',
]);

/**
 * The environment of the image svc builds: CPython on Linux, x86_64.
 *
 * `pythonVersion` is `3.11` or `3.11.9`. Given only major.minor, python_full_version is
 * `3.11.0`: the patch level of the image is not known here, and markers on it are rare.
 * platform_release and platform_version describe the kernel of whichever host runs the
 * container, so they are unknown and left empty (comparisons with them fall back to strings).
 */
export function linuxImageEnvironment(pythonVersion: string): MarkerEnvironment {
  const match = /^(\d+)\.(\d+)(?:\.(\d+)([A-Za-z0-9.+]*))?$/.exec(pythonVersion.trim());
  if (match === null) throw new Error(`not a Python version: '${pythonVersion}'`);
  const [, major, minor, patch, suffix] = match;
  const full = `${major}.${minor}.${patch ?? '0'}${suffix ?? ''}`;
  return {
    python_version: `${major}.${minor}`,
    python_full_version: full,
    os_name: 'posix',
    sys_platform: 'linux',
    platform_system: 'Linux',
    platform_machine: 'x86_64',
    platform_python_implementation: 'CPython',
    implementation_name: 'cpython',
    implementation_version: full,
    platform_release: '',
    platform_version: '',
  };
}

/**
 * Evaluate a PEP 508 marker. `extras` are the extras requested of the package the marker
 * belongs to; as in pip, the marker holds when it holds for any one of them (with none,
 * `extra` is the empty string).
 */
export function evaluateMarker(marker: string, env: MarkerEnvironment, extras: string[] = []): MarkerResult {
  const parsed = parseMarker(marker);
  if ('error' in parsed) return parsed;
  const candidates = extras.length === 0 ? [''] : extras;
  let value = false;
  for (const extra of candidates) {
    const result = evaluateNode(parsed.marker, env, extra);
    if ('error' in result) return result;
    value ||= result.value;
  }
  return { value };
}

function evaluateNode(node: MarkerNode, env: MarkerEnvironment, extra: string): MarkerResult {
  if (node.kind === 'compare') return evaluateComparison(node, env, extra);
  // Both sides are always evaluated, so an invalid comparison is reported whatever the environment.
  const left = evaluateNode(node.left, env, extra);
  if ('error' in left) return left;
  const right = evaluateNode(node.right, env, extra);
  if ('error' in right) return right;
  return { value: node.kind === 'and' ? left.value && right.value : left.value || right.value };
}

function evaluateComparison(
  node: Extract<MarkerNode, { kind: 'compare' }>,
  env: MarkerEnvironment,
  extra: string,
): MarkerResult {
  const isExtra = isVariable(node.left, 'extra') || isVariable(node.right, 'extra');
  // PEP 685: extra names compare normalised.
  const resolve = (operand: MarkerOperand): string => {
    const value = 'literal' in operand ? operand.literal : operand.variable === 'extra' ? extra : env[operand.variable];
    return isExtra ? normaliseExtra(value) : value;
  };
  const left = resolve(node.left);
  const right = resolve(node.right);
  const { operator } = node;

  if (operator === 'in') return { value: right.includes(left) };
  if (operator === 'not in') return { value: !right.includes(left) };

  const isVersioned = [node.left, node.right].some((o) => 'variable' in o && VERSION_VARIABLES.has(o.variable));
  if (isVersioned && valid(left) !== null && validRange(operator + right)) {
    return { value: satisfies(left, operator + right, { prereleases: true }) };
  }
  switch (operator) {
    case '==':
    case '===':
      return { value: left === right };
    case '!=':
      return { value: left !== right };
    case '<':
      return { value: left < right };
    case '<=':
      return { value: left <= right };
    case '>':
      return { value: left > right };
    case '>=':
      return { value: left >= right };
    case '~=':
      return { error: `cannot compare '${left}' ~= '${right}': not versions` };
  }
}

function isVariable(operand: MarkerOperand, name: MarkerVariable): boolean {
  return 'variable' in operand && operand.variable === name;
}

// PEP 685 extra normalisation is the PEP 503 name rule (kept here to avoid an import cycle with pep508.ts).
function normaliseExtra(extra: string): string {
  return extra.toLowerCase().replace(/[-_.]+/g, '-');
}

// --- Parsing: PEP 508 marker grammar ---------------------------------------------------

type Token =
  | { kind: 'string'; value: string; text: string }
  | { kind: 'word'; text: string }
  | { kind: 'operator'; text: string }
  | { kind: 'open' | 'close'; text: string };

const TOKEN = /\s*(?:(\()|(\))|(===|~=|==|!=|<=|>=|<|>)|([A-Za-z_][A-Za-z0-9_.]*)|(['"]))/y;

function tokenize(text: string): { tokens: Token[] } | { error: string } {
  const tokens: Token[] = [];
  let at = 0;
  while (at < text.length) {
    if (/^\s*$/.test(text.slice(at))) break;
    TOKEN.lastIndex = at;
    const match = TOKEN.exec(text);
    if (match === null) {
      const rest = text.slice(at).trim();
      return { error: `unexpected '${rest.split(/\s/)[0]}'` };
    }
    at = TOKEN.lastIndex;
    const [, open, close, operator, word, quote] = match;
    if (open !== undefined) tokens.push({ kind: 'open', text: open });
    else if (close !== undefined) tokens.push({ kind: 'close', text: close });
    else if (operator !== undefined) tokens.push({ kind: 'operator', text: operator });
    else if (word !== undefined) tokens.push({ kind: 'word', text: word });
    else if (quote !== undefined) {
      // PEP 508 python_str: no escapes, ends at the matching quote.
      const end = text.indexOf(quote, at);
      if (end < 0) return { error: 'unterminated string' };
      const value = text.slice(at, end);
      tokens.push({ kind: 'string', value, text: `${quote}${value}${quote}` });
      at = end + 1;
    }
  }
  return { tokens };
}

/** Parse a PEP 508 marker (the part after `;`). */
export function parseMarker(text: string): { marker: MarkerNode } | { error: string } {
  const tokenized = tokenize(text);
  if ('error' in tokenized) return tokenized;
  const { tokens } = tokenized;
  if (tokens.length === 0) return { error: 'empty marker' };
  let at = 0;

  const peek = (): Token | undefined => tokens[at];
  const describe = (token: Token | undefined): string => (token === undefined ? 'the end' : `'${token.text}'`);
  const isWord = (token: Token | undefined, word: string): boolean => token?.kind === 'word' && token.text === word;

  type Parsed = { node: MarkerNode } | { error: string };

  // marker_or = marker_and ('or' marker_and)*
  const parseOr = (): Parsed => {
    let left = parseAnd();
    while ('node' in left && isWord(peek(), 'or')) {
      at++;
      const right = parseAnd();
      if ('error' in right) return right;
      left = { node: { kind: 'or', left: left.node, right: right.node } };
    }
    return left;
  };

  // marker_and = marker_expr ('and' marker_expr)*
  const parseAnd = (): Parsed => {
    let left = parseExpression();
    while ('node' in left && isWord(peek(), 'and')) {
      at++;
      const right = parseExpression();
      if ('error' in right) return right;
      left = { node: { kind: 'and', left: left.node, right: right.node } };
    }
    return left;
  };

  // marker_expr = marker_var marker_op marker_var | '(' marker ')'
  const parseExpression = (): Parsed => {
    if (peek()?.kind === 'open') {
      at++;
      const inner = parseOr();
      if ('error' in inner) return inner;
      if (peek()?.kind !== 'close') return { error: `expected ')' but found ${describe(peek())}` };
      at++;
      return inner;
    }
    const left = parseOperand();
    if ('error' in left) return left;
    const operator = parseOperator();
    if (operator === null) return { error: `expected a comparison operator but found ${describe(peek())}` };
    const right = parseOperand();
    if ('error' in right) return right;
    return { node: { kind: 'compare', left: left.operand, operator, right: right.operand } };
  };

  const parseOperand = (): { operand: MarkerOperand } | { error: string } => {
    const token = peek();
    if (token?.kind === 'string') {
      at++;
      return { operand: { literal: token.value } };
    }
    if (token?.kind === 'word' && !['and', 'or', 'in', 'not'].includes(token.text)) {
      at++;
      const variable = LEGACY_VARIABLES[token.text] ?? token.text;
      if (!VARIABLES.has(variable)) return { error: `unknown marker variable '${token.text}'` };
      return { operand: { variable: variable as MarkerVariable } };
    }
    return { error: `expected a marker variable or a quoted string but found ${describe(token)}` };
  };

  const parseOperator = (): ComparisonOperator | null => {
    const token = peek();
    if (token?.kind === 'operator') {
      at++;
      return token.text as ComparisonOperator;
    }
    if (isWord(token, 'in')) {
      at++;
      return 'in';
    }
    if (isWord(token, 'not') && isWord(tokens[at + 1], 'in')) {
      at += 2;
      return 'not in';
    }
    return null;
  };

  const result = parseOr();
  if ('error' in result) return result;
  if (at < tokens.length) return { error: `unexpected ${describe(peek())}` };
  return { marker: result.node };
}
