import type { Node, TreeCursor } from 'web-tree-sitter';
import { childrenOf, namedChildrenOf } from './syntax-nodes.js';

/**
 * What CPython refuses to compile although tree-sitter-python's grammar accepts it: that
 * grammar also reads Python 2 (`print "x"`, `exec code`, backquotes) and every newer syntax
 * (PEP 695, PEP 701), and leaves to the compiler what CPython checks after parsing (`return`
 * outside a function, a repeated keyword argument). Each rule is exact, checked against
 * CPython 3.10 to 3.13: a file it flags is one Python refuses, and it says so in Python's words.
 * One walk over the tree, which must parse without errors.
 */

/** The Python the image runs, and where the manifest got it ("default", ".python-version", ...). */
export interface TargetPython {
  version: string;
  source: string;
}

export interface CompileError {
  /** 1-based. */
  line: number;
  message: string;
}

interface NewerSyntax {
  since: string;
  pep: string;
  /** What the older Pythons say, or what they refuse. */
  refusal: string;
}

/**
 * Syntax an older Python refuses, by the release that brought it. Python 3.10, the oldest
 * svc supports, reads everything else tree-sitter-python accepts. Source: "What's New In
 * Python" 3.11 to 3.14 (https://docs.python.org/3/whatsnew/) and the PEPs named.
 */
const NEWER_SYNTAX = {
  exceptStar: { since: '3.11', pep: 'PEP 654', refusal: '`except*` is invalid syntax' },
  starredSubscript: {
    since: '3.11',
    pep: 'PEP 646',
    refusal: 'a starred expression in a subscript or an annotation (`tuple[*Ts]`, `*args: *Ts`) is invalid syntax',
  },
  typeStatement: { since: '3.12', pep: 'PEP 695', refusal: 'the `type` statement is invalid syntax' },
  typeParameters: { since: '3.12', pep: 'PEP 695', refusal: 'type parameters (`def f[T]`, `class C[T]`) are invalid syntax' },
  fStringQuote: { since: '3.12', pep: 'PEP 701', refusal: "an f-string's own quote cannot appear inside its replacement fields" },
  fStringNewline: { since: '3.12', pep: 'PEP 701', refusal: 'a replacement field of a single-quoted f-string cannot span lines' },
  fStringBackslash: { since: '3.12', pep: 'PEP 701', refusal: 'f-string expression part cannot include a backslash' },
  fStringComment: { since: '3.12', pep: 'PEP 701', refusal: "f-string expression part cannot include '#'" },
  fStringNesting: { since: '3.12', pep: 'PEP 701', refusal: 'f-string: expressions nested too deeply' },
  typeParameterDefaults: { since: '3.13', pep: 'PEP 696', refusal: 'type parameter defaults (`[T = int]`) are invalid syntax' },
  unparenthesizedExcept: { since: '3.14', pep: 'PEP 758', refusal: 'multiple exception types must be parenthesized' },
  templateStrings: { since: '3.14', pep: 'PEP 750', refusal: 'template strings (`t"..."`) are invalid syntax' },
} as const satisfies Record<string, NewerSyntax>;

/** `from __future__` features CPython 3.10 to 3.13 know (Lib/__future__.py, `all_feature_names`). */
const FUTURE_FEATURES = new Set([
  'nested_scopes', 'generators', 'division', 'absolute_import', 'with_statement',
  'print_function', 'unicode_literals', 'barry_as_FLUFL', 'generator_stop', 'annotations',
]);

/** How Python's IndentationError names the statement whose block is missing. */
const BLOCK_HEADERS: ReadonlyMap<string, string> = new Map([
  ['function_definition', 'function definition'],
  ['class_definition', 'class definition'],
  ['if_statement', "'if' statement"],
  ['elif_clause', "'elif' statement"],
  ['else_clause', "'else' statement"],
  ['for_statement', "'for' statement"],
  ['while_statement', "'while' statement"],
  ['try_statement', "'try' statement"],
  ['except_clause', "'except' statement"],
  ['finally_clause', "'finally' statement"],
  ['with_statement', "'with' statement"],
  ['case_clause', "'case' statement"],
]);

/** The tokenizer's limit on open brackets (CPython, Parser/tokenizer.h, MAXLEVEL). */
const MAX_BRACKET_DEPTH = 200;

/** Lower-cased string prefixes Python 3 reads (Python reference, "String and Bytes literals"). */
const STRING_PREFIXES = new Set(['', 'r', 'u', 'f', 'b', 'br', 'rb', 'fr', 'rf']);
const TEMPLATE_PREFIXES = new Set(['t', 'tr', 'rt']);

/** Every integer literal Python 3 refuses (a leading zero, Python 2's `L`, a trailing `_`) and a few it reads. */
const SUSPECT_INTEGERS = /(?<![\w.])(?:0[\d_]*[1-9]\w*|\d\w*[lL_])(?![\w.])/gu;

/** Characters tree-sitter-python skips as white space and Python refuses outside strings and comments. */
const INVISIBLE_CHARACTERS = /[\u200B\u2060\uFEFF]/gu;

const COMPREHENSIONS: ReadonlyMap<string, string> = new Map([
  ['list_comprehension', 'list comprehension'],
  ['set_comprehension', 'set comprehension'],
  ['dictionary_comprehension', 'dict comprehension'],
  ['generator_expression', 'generator expression'],
]);

export function findCompileErrors(root: Node, source: string, python: TargetPython): CompileError[] {
  const errors: Array<CompileError & { index: number }> = [];
  const refuse: Refuse = (node, message, error = 'SyntaxError') => {
    errors.push({ line: node.startPosition.row + 1, message: `${error}: ${message}`, index: node.startIndex });
  };
  const refuseBefore = (node: Node, syntax: NewerSyntax): void => {
    if (isOlder(python.version, syntax.since)) {
      refuse(node, `${syntax.refusal} before Python ${syntax.since} (${syntax.pep}); the image runs Python ${python.version} (from ${python.source})`);
    }
  };
  const checks = new NodeChecks(source, python, refuse, refuseBefore);
  walk(root, checks);
  checks.checkFutureImports(root);
  // Integers are many and nearly all plain: only those the pattern finds are looked up in the tree.
  for (const match of source.matchAll(SUSPECT_INTEGERS)) {
    const node = root.descendantForIndex(match.index, match.index + match[0].length);
    if (node?.type === 'integer' && node.startIndex === match.index) checks.checkInteger(node);
  }
  for (const match of source.matchAll(INVISIBLE_CHARACTERS)) {
    const index = match.index;
    if (isInsideStringOrComment(root, index)) continue;
    const row = source.slice(0, index).split('\n').length - 1;
    refuse({ startIndex: index, startPosition: { row, column: 0 } }, describeInvalidCharacter(match[0]));
  }
  // Python stops at the first error; one a line is plenty to act on.
  const seen = new Set<number>();
  return errors
    .sort((a, b) => a.index - b.index)
    .filter((error) => !seen.has(error.line) && seen.add(error.line))
    .map(({ line, message }) => ({ line, message }));
}

/** Python's words (Parser/tokenizer.c) for a character no token can hold: `str.isprintable()` refuses some by code point only. */
export function describeInvalidCharacter(character: string): string {
  const isPrintable = !/[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u.test(character);
  return isPrintable
    ? `invalid character '${character}' (${describeCodePoint(character)})`
    : `invalid non-printable character ${describeCodePoint(character)}`;
}

/** `U+00A0`, as Python names a character it refuses. */
function describeCodePoint(character: string): string {
  return `U+${(character.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * tree-sitter-python has no rule for PEP 696 defaults and leaves `T =` (or `*Ts = *`) in an
 * ERROR node inside the type parameters of a `def`, a `class` or a `type` statement.
 */
export function isTypeParameterDefault(error: Node): boolean {
  if (!error.isError) return false;
  const tokens = childrenOf(error);
  const equals = tokens.findIndex((token) => token.type === '=');
  const rest = tokens.slice(equals + 1).map((token) => token.type);
  const target = tokens.slice(0, equals);
  if (equals < 1 || rest.some((type) => type !== '*') || target.length !== 1) return false;
  if (!['identifier', 'type', 'list_splat', 'constrained_type'].includes(target[0]?.type ?? '')) return false;
  let up = error.parent;
  while (up !== null && (up.type === 'type' || up.type === 'constrained_type')) up = up.parent;
  if (up?.type !== 'type_parameter') return false;
  const owner = up.parent;
  if (owner?.type === 'function_definition' || owner?.type === 'class_definition') {
    return owner.childForFieldName('type_parameters')?.equals(up) ?? false;
  }
  // `type Vec[T = float] = ...`: the left side is a `type` holding `generic_type` -> `type_parameter`.
  return owner?.type === 'generic_type' && owner.parent?.parent?.type === 'type_alias_statement' &&
    owner.parent.parent.childForFieldName('left')?.equals(owner.parent) === true;
}

// ---------------------------------------------------------------------------------------------
// Scopes and the walk

type ScopeKind = 'module' | 'class' | 'function' | 'lambda' | 'comprehension';

interface Scope {
  kind: ScopeKind;
  isAsync: boolean;
  /** For a comprehension: "list comprehension", ... as Python names it. */
  comprehension: string | null;
  parent: Scope | null;
  parameters: ReadonlySet<string>;
  yields: boolean;
  returnsWithValue: Node[];
}

interface Context {
  scope: Scope;
  /** Inside the body of a `for` or `while` of this scope (not its `else`). */
  inLoop: boolean;
  /** Open brackets around this node, as Python's tokenizer counts them (f-string fields restart it). */
  brackets: number;
}

interface Frame {
  type: string;
  /** The context this node's children get. */
  inner: Context;
  /** For a node that opens a scope: the context of its parts evaluated outside it (defaults, decorators, the first iterable). */
  outer: Context;
  forInClauses: number;
  isFirstForIn: boolean;
  /** The scope this node opens, closed when the walk leaves it. */
  opens: Scope | null;
}

/** What the walk keeps for a token (a keyword, a bracket): nothing, as a token has no children. */
const TOKEN: Frame = Object.freeze({
  type: '',
  inner: { scope: newScope('module', null), inLoop: false, brackets: 0 },
  outer: { scope: newScope('module', null), inLoop: false, brackets: 0 },
  forInClauses: 0,
  isFirstForIn: false,
  opens: null,
});

function newScope(kind: ScopeKind, parent: Scope | null, extra: Partial<Scope> = {}): Scope {
  return { kind, isAsync: false, comprehension: null, parent, parameters: new Set(), yields: false, returnsWithValue: [], ...extra };
}

/** Depth-first with one cursor; each node's context follows from its parent's and the field it fills. */
function walk(root: Node, checks: NodeChecks): void {
  const cursor: TreeCursor = root.walk();
  const moduleContext: Context = { scope: newScope('module', null), inLoop: false, brackets: 0 };
  const frames: Frame[] = [];
  // Each question to the cursor crosses into WebAssembly: ask one, the type's id, and look the rest up.
  const { types } = root.tree.language;
  const isNamedType = new Map<number, boolean>();
  const enter = (): void => {
    const parent = frames[frames.length - 1];
    if (parent === TOKEN) {
      frames.push(TOKEN); // the words of a token such as `not in`
      return;
    }
    const id = cursor.nodeTypeId;
    const type = types[id] ?? 'ERROR';
    let isNamed = isNamedType.get(id);
    if (isNamed === undefined) {
      isNamed = type === 'ERROR' || root.tree.language.nodeTypeIsNamed(id);
      isNamedType.set(id, isNamed);
    }
    if (parent !== undefined && !isNamed) {
      // A token: only a bracket matters, to its parent's contents.
      if ((type === '(' || type === '[' || type === '{') && parent.type !== 'interpolation' && parent.type !== 'format_expression') {
        parent.inner = { ...parent.inner, brackets: parent.inner.brackets + 1 };
        if (parent.inner.brackets === MAX_BRACKET_DEPTH + 1) checks.refuse(cursor.currentNode, 'too many nested parentheses');
      }
      frames.push(TOKEN);
      return;
    }
    const context = parent === undefined ? moduleContext : contextOfChild(parent, type, () => cursor.currentFieldName);
    const frame: Frame = { type, inner: context, outer: context, forInClauses: 0, isFirstForIn: false, opens: null };
    if (parent !== undefined && type === 'for_in_clause' && COMPREHENSIONS.has(parent.type)) {
      frame.isFirstForIn = parent.forInClauses === 0;
      parent.forInClauses += 1;
      frame.outer = parent.outer;
    }
    if (checks.wants(type)) {
      const node = cursor.currentNode;
      const opens = openedScope(node, context.scope);
      if (opens !== null) {
        frame.opens = opens;
        frame.inner = { scope: opens, inLoop: false, brackets: context.brackets };
      }
      checks.check(node, context);
    }
    frames.push(frame);
  };
  const leave = (): void => {
    const frame = frames.pop();
    if (frame?.opens != null) checks.closeScope(frame.opens);
  };
  enter();
  for (;;) {
    if (cursor.gotoFirstChild()) {
      enter();
      continue;
    }
    for (;;) {
      leave();
      if (cursor.gotoNextSibling()) {
        enter();
        break;
      }
      if (!cursor.gotoParent()) {
        cursor.delete();
        return;
      }
    }
  }
}

function openedScope(node: Node, around: Scope): Scope | null {
  switch (node.type) {
    case 'function_definition':
      return newScope('function', around, {
        isAsync: node.child(0)?.type === 'async',
        parameters: new Set(parameterNames(node.childForFieldName('parameters'))),
      });
    case 'lambda':
      return newScope('lambda', around);
    case 'class_definition':
      return newScope('class', around);
    default: {
      const comprehension = COMPREHENSIONS.get(node.type);
      return comprehension === undefined ? null : newScope('comprehension', around, { comprehension });
    }
  }
}

/** Which context a child gets: a scope's body is inside it, its other parts (defaults, bases, the first iterable) outside. */
function contextOfChild(parent: Frame, type: string, field: () => string | null): Context {
  if (type === 'interpolation') return { ...parent.inner, brackets: 0 };
  switch (parent.type) {
    case 'function_definition':
    case 'lambda':
    case 'class_definition':
      return field() === 'body' ? parent.inner : parent.outer;
    case 'for_in_clause':
      return parent.isFirstForIn && field() === 'right' ? parent.outer : parent.inner;
    case 'for_statement':
    case 'while_statement':
      return field() === 'body' ? { ...parent.inner, inLoop: true } : parent.inner;
    default:
      return parent.inner;
  }
}

function parameterNames(parameters: Node | null): string[] {
  if (parameters === null) return [];
  return namedChildrenOf(parameters).flatMap((parameter) => {
    const name = parameterName(parameter);
    return name === null ? [] : [name];
  });
}

function parameterName(parameter: Node): string | null {
  switch (parameter.type) {
    case 'identifier':
      return parameter.text;
    case 'default_parameter':
    case 'typed_default_parameter':
      return parameter.childForFieldName('name')?.text ?? null;
    case 'list_splat_pattern':
    case 'dictionary_splat_pattern':
      return namedChildrenOf(parameter).find((node) => node.type === 'identifier')?.text ?? null;
    case 'typed_parameter': {
      const target = partsOf(parameter).find((node) => node.type !== 'type');
      return target === undefined ? null : parameterName(target);
    }
    default:
      return null;
  }
}

// ---------------------------------------------------------------------------------------------
// The rules

type Located = Pick<Node, 'startIndex' | 'startPosition'>;
type Refuse = (node: Located, message: string, error?: 'SyntaxError' | 'IndentationError') => void;
type RefuseBefore = (node: Node, syntax: NewerSyntax) => void;

class NodeChecks {
  private readonly futureImports: Node[] = [];
  private readonly types: ReadonlyMap<string, (node: Node, context: Context) => void>;

  constructor(
    private readonly source: string,
    private readonly python: TargetPython,
    readonly refuse: Refuse,
    private readonly refuseBefore: RefuseBefore,
  ) {
    this.types = new Map<string, (node: Node, context: Context) => void>([
      ['print_statement', (node) => this.checkPrint(node)],
      ['exec_statement', (node) => this.refuse(node, "Missing parentheses in call to 'exec'. Did you mean exec(...)?")],
      ['comparison_operator', (node) => this.checkComparison(node)],
      ['raise_statement', (node) => this.checkRaise(node)],
      ['string', (node) => this.checkString(node)],
      ['concatenated_string', (node) => this.checkConcatenation(node)],
      ['try_statement', (node) => this.checkTry(node)],
      ['except_clause', (node) => this.checkExcept(node)],
      ['parameters', (node) => this.checkParameters(node)],
      ['lambda_parameters', (node) => this.checkParameters(node)],
      ['argument_list', (node) => this.checkArguments(node)],
      ['delete_statement', (node) => this.checkDelete(node)],
      ['assignment', (node) => this.checkStarredTargets(node.childForFieldName('left'))],
      ['for_in_clause', (node, context) => this.checkForIn(node, context)],
      ['type_alias_statement', (node) => this.checkTypeStatement(node)],
      ['function_definition', (node) => this.checkDefinition(node)],
      ['class_definition', (node) => this.checkDefinition(node)],
      ['ERROR', (node) => this.checkError(node)],
      ['splat_type', (node) => this.checkSplatType(node)],
      ['subscript', (node) => this.checkSubscript(node)],
      ['return_statement', (node, context) => this.checkReturn(node, context)],
      ['yield', (node, context) => this.checkYield(node, context)],
      ['await', (node, context) => this.checkAwait(node, context)],
      ['for_statement', (node, context) => {
        this.checkAsyncStatement(node, context, 'async for');
        this.checkStarredTargets(node.childForFieldName('left'));
      }],
      ['with_statement', (node, context) => this.checkAsyncStatement(node, context, 'async with')],
      ['break_statement', (node, context) => this.checkLoopControl(node, context, "'break' outside loop")],
      ['continue_statement', (node, context) => this.checkLoopControl(node, context, "'continue' not properly in loop")],
      ['import_from_statement', (node, context) => this.checkStarImport(node, context)],
      ['global_statement', (node, context) => this.checkDeclaration(node, context, 'global')],
      ['nonlocal_statement', (node, context) => this.checkDeclaration(node, context, 'nonlocal')],
      ['future_import_statement', (node) => this.futureImports.push(node)],
      ['block', (node) => this.checkBlock(node)],
      // Nothing to check, but the walk opens a node's scope only for the types wanted here.
      ['lambda', () => undefined],
      ...[...COMPREHENSIONS.keys()].map((type): [string, () => void] => [type, () => undefined]),
    ]);
  }

  /** The white space a node's line begins with. */
  private lineIndent(node: Node): string {
    const start = this.source.lastIndexOf('\n', node.startIndex - 1) + 1;
    return /^[ \t\f]*/u.exec(this.source.slice(start, node.startIndex))?.[0] ?? '';
  }

  wants(type: string): boolean {
    return this.types.has(type);
  }

  check(node: Node, context: Context): void {
    this.types.get(node.type)?.(node, context);
  }

  /** A function's own `return value` and `yield` are known only once the walk has seen its whole body. */
  closeScope(scope: Scope): void {
    const [first] = scope.returnsWithValue;
    if (scope.isAsync && scope.yields && first !== undefined) this.refuse(first, "'return' with value in async generator");
  }

  /** tree-sitter leaves a block empty where the lines after a `def` or an `if` are not indented. */
  private checkBlock(node: Node): void {
    if (partsOf(node).length > 0) return;
    const header = node.parent;
    const isExceptStar = header?.type === 'except_clause' && childrenOf(header).some((child) => child.type === '*');
    const what = header === null ? undefined : isExceptStar ? "'except*' statement" : BLOCK_HEADERS.get(header.type);
    if (header === null || what === undefined) return;
    let next: Node | null = null;
    for (let up: Node | null = node; up !== null && next === null; up = up.parent) {
      next = up.nextSibling;
      while (next?.isExtra === true) next = next.nextSibling;
    }
    // Where tabs indent either line, Python may find them inconsistent first (TabError); the image's build says which.
    const indents = [header, next].map((node) => (node === null ? '' : this.lineIndent(node)));
    if (indents.some((indent) => indent.includes('\t'))) return;
    const line = header.startPosition.row + 1;
    this.refuse(next ?? header, `expected an indented block after ${what} on line ${line}`, 'IndentationError');
  }

  /** Python 3 reads `print >>f, x`, `print -x` and `print (x), y` as expressions; a name or a literal after `print` it cannot. */
  private checkPrint(node: Node): void {
    const [first] = partsOf(node);
    if (first === undefined || first.type === 'chevron') return;
    if (/^(?:if|else|in|is|and|or|for|not\s+in)\b/u.test(first.text)) return;
    if (/^[\p{L}\p{N}_'"{~]/u.test(first.text)) this.refuse(node, "Missing parentheses in call to 'print'. Did you mean print(...)?");
  }

  private checkComparison(node: Node): void {
    for (const operator of node.childrenForFieldName('operators')) {
      if (operator?.type === '<>') this.refuse(operator, "invalid syntax (Python 2's `<>`: write `!=`)");
    }
  }

  private checkRaise(node: Node): void {
    if (namedChildrenOf(node).some((child) => child.type === 'expression_list')) {
      this.refuse(node, 'invalid syntax (Python 2\'s `raise E, "message"`: write `raise E("message")`)');
    }
  }

  checkInteger(node: Node): void {
    const text = node.text;
    if (/[jJ]$/u.test(text)) return;
    const base = /^0[xX]/u.test(text) ? 'hexadecimal' : /^0[oO]/u.test(text) ? 'octal' : /^0[bB]/u.test(text) ? 'binary' : 'decimal';
    if (/[lL]$/u.test(text)) {
      this.refuse(node, `invalid ${base} literal (Python 2's long suffix \`L\`: drop it)`);
    } else if (text.endsWith('_')) {
      this.refuse(node, `invalid ${base} literal`);
    } else if (base === 'decimal' && /^0[0_]*[1-9]/u.test(text)) {
      this.refuse(node, 'leading zeros in decimal integer literals are not permitted; use an 0o prefix for octal integers');
    }
  }

  private checkString(node: Node): void {
    const start = node.child(0);
    const end = node.lastChild;
    if (start?.type !== 'string_start' || end?.type !== 'string_end') return;
    if (start.text.endsWith('`')) {
      this.refuse(node, "invalid syntax (Python 2's backquotes: write `repr(...)`)");
      return;
    }
    const prefix = start.text.replace(/["']+$/u, '');
    const lower = prefix.toLowerCase();
    if (TEMPLATE_PREFIXES.has(lower)) {
      this.refuseBefore(node, NEWER_SYNTAX.templateStrings);
      return;
    }
    if (!STRING_PREFIXES.has(lower)) {
      this.refuse(node, `invalid syntax (\`${prefix}\` is no string prefix in Python 3)`);
      return;
    }
    const interpolations = lower.includes('f') ? namedChildrenOf(node).filter((child) => child.type === 'interpolation') : [];
    const body = { start: start.endIndex, end: end.startIndex };
    const segments = literalSegments(node, body, interpolations, lower.includes('f'));
    const problem = lower.includes('b') ? bytesLiteralProblem(segments, lower.includes('r')) : lower.includes('r') ? null : escapeProblem(segments, lower.includes('f'));
    if (problem !== null) this.refuse(node, problem);
    if (interpolations.length > 0) this.checkFString(node, start.text.slice(prefix.length), interpolations);
  }

  private checkFString(node: Node, quote: string, interpolations: Node[]): void {
    const fields = node.descendantsOfType(['interpolation', 'format_expression']).filter((field): field is Node => field !== null);
    for (const field of fields) {
      const conversion = field.childForFieldName('type_conversion')?.text;
      if (conversion !== undefined && !['!s', '!r', '!a'].includes(conversion)) {
        const character = isOlder(this.python.version, '3.12') ? '' : ` '${conversion.slice(1)}'`;
        this.refuse(field, `f-string: invalid conversion character${character}: expected 's', 'r', or 'a'`);
      }
      if (field.type === 'format_expression') {
        const depth = ancestorsUntil(field, 'string').filter((up) => up.type === 'format_expression').length + 1;
        if (depth >= 3) this.refuse(field, 'f-string: expressions nested too deeply');
        else if (depth === 2) this.refuseBefore(field, NEWER_SYNTAX.fStringNesting);
      }
    }
    if (!isOlder(this.python.version, '3.12')) return;
    // Before PEP 701 the tokenizer read an f-string as a plain string first: it ended at the first
    // unescaped closing quote, a single-quoted one at a line break, whatever the braces held.
    const body = node.text.slice(node.child(0)?.text.length ?? 0, node.text.length - quote.length);
    const cut = preTokenizerCut(body, quote);
    if (cut !== null) {
      this.refuseBefore(node, cut === 'quote' ? NEWER_SYNTAX.fStringQuote : NEWER_SYNTAX.fStringNewline);
    } else if (fields.some((field) => expressionText(field).includes('\\'))) {
      this.refuseBefore(node, NEWER_SYNTAX.fStringBackslash);
    } else if (interpolations.some((field) => field.descendantsOfType('comment').length > 0)) {
      this.refuseBefore(node, NEWER_SYNTAX.fStringComment);
    }
  }

  private checkConcatenation(node: Node): void {
    const kinds = new Set(
      namedChildrenOf(node)
        .filter((part) => part.type === 'string')
        .map((part) => /b/iu.test((part.child(0)?.text ?? '').replace(/["'`]+$/u, ''))),
    );
    if (kinds.size > 1) this.refuse(node, 'cannot mix bytes and nonbytes literals');
  }

  private checkTry(node: Node): void {
    const handlers = namedChildrenOf(node).filter((child) => child.type === 'except_clause' || child.type === 'except_group_clause');
    if (handlers.length === 0 && !namedChildrenOf(node).some((child) => child.type === 'finally_clause')) {
      this.refuse(node, "expected 'except' or 'finally' block");
      return;
    }
    const bare = handlers.findIndex((handler) => handler.childForFieldName('value') === null && handler.type === 'except_clause');
    const bareHandler = handlers[bare];
    if (bareHandler !== undefined && bare < handlers.length - 1) this.refuse(bareHandler, "default 'except:' must be last");
  }

  private checkExcept(node: Node): void {
    if (childrenOf(node).some((child) => child.type === '*')) this.refuseBefore(node, NEWER_SYNTAX.exceptStar);
    const values = node.childrenForFieldName('value').filter((value): value is Node => value !== null);
    if (values.length < 2) return;
    if (values.some((value) => value.type === 'as_pattern')) this.refuse(node, 'multiple exception types must be parenthesized');
    else this.refuseBefore(node, NEWER_SYNTAX.unparenthesizedExcept);
  }

  /** Python's order of parameters (Python reference, "Function definitions"), then their names, as its parser and symbol table check them. */
  private checkParameters(node: Node): void {
    const parameters = partsOf(node);
    const since311 = !isOlder(this.python.version, '3.11');
    let sawDefault = false;
    let sawStar: Node | null = null;
    let sawKeywordOnly = false;
    let sawSlash = false;
    let sawDoubleStar = false;
    let index = 0;
    for (const parameter of parameters) {
      const kind = parameterKind(parameter);
      if (sawDoubleStar) return this.refuse(parameter, since311 ? 'arguments cannot follow var-keyword argument' : 'invalid syntax');
      if (kind === 'slash') {
        if (sawSlash) return this.refuse(parameter, since311 ? '/ may appear only once' : 'invalid syntax');
        if (sawStar !== null) return this.refuse(parameter, since311 ? '/ must be ahead of *' : 'invalid syntax');
        if (index === 0) return this.refuse(parameter, since311 ? 'at least one argument must precede /' : 'invalid syntax');
        sawSlash = true;
      } else if (kind === 'star' || kind === 'args') {
        if (sawStar !== null) return this.refuse(parameter, since311 ? '* argument may appear only once' : 'invalid syntax');
        sawStar = parameter;
        sawKeywordOnly = kind === 'args';
      } else if (kind === 'kwargs') {
        if (sawStar?.type === 'keyword_separator' && !sawKeywordOnly) return this.refuse(sawStar, 'named arguments must follow bare *');
        sawDoubleStar = true;
      } else if (kind === 'plain' || kind === 'default') {
        if (sawStar !== null) sawKeywordOnly = true;
        else if (kind === 'default') sawDefault = true;
        else if (sawDefault) {
          return this.refuse(
            parameter,
            isOlder(this.python.version, '3.12') ? 'non-default argument follows default argument' : 'parameter without a default follows parameter with a default',
          );
        }
      }
      index += 1;
    }
    if (sawStar?.type === 'keyword_separator' && !sawKeywordOnly) return this.refuse(sawStar, 'named arguments must follow bare *');
    const names = new Set<string>();
    for (const parameter of parameters) {
      const name = parameterName(parameter);
      if (name === null) continue;
      if (names.has(name)) return this.refuse(parameter, `duplicate argument '${name}' in function definition`);
      names.add(name);
    }
  }

  /** Python's order of arguments (Python reference, "Calls"), then the keywords' names. */
  private checkArguments(node: Node): void {
    const args = partsOf(node);
    let sawKeyword = false;
    let sawKeywordSplat = false;
    for (const argument of args) {
      if (argument.type === 'keyword_argument') {
        sawKeyword = true;
      } else if (argument.type === 'dictionary_splat') {
        sawKeywordSplat = true;
      } else if (argument.type === 'list_splat') {
        if (sawKeywordSplat) return this.refuse(argument, 'iterable argument unpacking follows keyword argument unpacking');
      } else if (sawKeywordSplat) {
        return this.refuse(argument, 'positional argument follows keyword argument unpacking');
      } else if (sawKeyword) {
        return this.refuse(argument, 'positional argument follows keyword argument');
      }
    }
    const names = new Set<string>();
    for (const argument of args) {
      const name = argument.type === 'keyword_argument' ? argument.childForFieldName('name')?.text : undefined;
      if (name === undefined) continue;
      if (names.has(name)) return this.refuse(argument, `keyword argument repeated: ${name}`);
      names.add(name);
    }
  }

  private checkDelete(node: Node): void {
    const [target] = partsOf(node);
    const targets = target?.type === 'expression_list' ? namedChildrenOf(target) : target === undefined ? [] : [target];
    const call = targets.find((candidate) => candidate.type === 'call');
    if (call !== undefined) this.refuse(call, 'cannot delete function call');
  }

  private checkStarredTargets(target: Node | null): void {
    if (target === null || !['pattern_list', 'tuple_pattern', 'list_pattern'].includes(target.type)) return;
    const parts = namedChildrenOf(target);
    if (parts.filter((part) => part.type === 'list_splat_pattern').length > 1) {
      this.refuse(target, 'multiple starred expressions in assignment');
      return;
    }
    for (const part of parts) this.checkStarredTargets(part);
  }

  private checkForIn(node: Node, context: Context): void {
    const iterables = node.childrenForFieldName('right').filter((right): right is Node => right?.isNamed === true && !right.isExtra);
    if (iterables.length > 1) {
      // `f(x for x in a, b)`: Python reads no tuple there, as tree-sitter does.
      const comprehension = node.parent;
      const isSoleArgument = comprehension?.type === 'generator_expression' && comprehension.parent?.type === 'call';
      this.refuse(node, isSoleArgument ? 'Generator expression must be parenthesized' : 'invalid syntax');
    }
    if (childrenOf(node).some((child) => child.type === 'async')) this.checkAsyncComprehension(node, context.scope);
  }

  /** `type Name = ...` or `type Name[T] = ...`; tree-sitter also reads `type(obj).attribute = value` so, which is an assignment. */
  private checkTypeStatement(node: Node): void {
    const left = partsOf(node.childForFieldName('left') ?? node);
    const [name, parameters, ...rest] = left.length === 1 && left[0]?.type === 'generic_type' ? partsOf(left[0]) : left;
    const isAlias = name?.type === 'identifier' && (parameters === undefined || parameters.type === 'type_parameter') && rest.length === 0;
    if (isAlias) this.refuseBefore(node, NEWER_SYNTAX.typeStatement);
  }

  private checkDefinition(node: Node): void {
    if (node.childForFieldName('type_parameters') !== null) this.refuseBefore(node, NEWER_SYNTAX.typeParameters);
  }

  private checkError(node: Node): void {
    if (isTypeParameterDefault(node)) this.refuseBefore(node, NEWER_SYNTAX.typeParameterDefaults);
  }

  /** `*Ts` in an annotation; in type parameters (`def f[*Ts]`) it belongs to PEP 695 and its own rule. */
  private checkSplatType(node: Node): void {
    if (node.child(0)?.type !== '*') return;
    if (ancestorsUntil(node, 'module').some((up) => up.type === 'type_parameter' && isDeclaredTypeParameters(up))) return;
    this.refuseBefore(node, NEWER_SYNTAX.starredSubscript);
  }

  private checkSubscript(node: Node): void {
    if (node.childrenForFieldName('subscript').some((index) => index !== null && isStarred(index))) {
      this.refuseBefore(node, NEWER_SYNTAX.starredSubscript);
    }
  }

  private checkReturn(node: Node, { scope }: Context): void {
    if (scope.kind === 'module' || scope.kind === 'class') {
      this.refuse(node, "'return' outside function");
    } else if (scope.kind === 'function' && partsOf(node).length > 0) {
      scope.returnsWithValue.push(node);
    }
  }

  private checkYield(node: Node, { scope }: Context): void {
    if (scope.kind === 'module' || scope.kind === 'class') {
      this.refuse(node, "'yield' outside function");
    } else if (scope.kind === 'comprehension') {
      this.refuse(node, `'yield' inside ${scope.comprehension}`);
    } else {
      scope.yields = true;
      if (scope.isAsync && childrenOf(node).some((child) => child.type === 'from')) this.refuse(node, "'yield from' inside async function");
    }
  }

  private checkAwait(node: Node, { scope }: Context): void {
    if (scope.kind === 'module' || scope.kind === 'class') this.refuse(node, "'await' outside function");
    else if (scope.kind === 'lambda' || (scope.kind === 'function' && !scope.isAsync)) this.refuse(node, "'await' outside async function");
    else if (scope.kind === 'comprehension') this.checkAsyncComprehension(node, scope);
  }

  /**
   * `await` or `async for` in a comprehension makes it asynchronous, which only an `async def`
   * may hold. A generator expression may always be one; a comprehension inside another is left
   * alone, as Python 3.10 refuses some that 3.11 reads.
   */
  private checkAsyncComprehension(node: Node, comprehension: Scope): void {
    if (comprehension.kind !== 'comprehension' || comprehension.comprehension === 'generator expression') return;
    const around = comprehension.parent;
    if (around === null || around.kind === 'comprehension' || (around.kind === 'function' && around.isAsync)) return;
    this.refuse(node, 'asynchronous comprehension outside of an asynchronous function');
  }

  private checkAsyncStatement(node: Node, { scope }: Context, statement: string): void {
    if (node.child(0)?.type !== 'async') return;
    if (!(scope.kind === 'function' && scope.isAsync)) this.refuse(node, `'${statement}' outside async function`);
  }

  private checkLoopControl(node: Node, { inLoop }: Context, message: string): void {
    if (!inLoop) this.refuse(node, message);
  }

  private checkStarImport(node: Node, { scope }: Context): void {
    if (scope.kind !== 'module' && namedChildrenOf(node).some((child) => child.type === 'wildcard_import')) {
      this.refuse(node, 'import * only allowed at module level');
    }
  }

  private checkDeclaration(node: Node, { scope }: Context, keyword: 'global' | 'nonlocal'): void {
    if (keyword === 'nonlocal' && scope.kind === 'module') {
      this.refuse(node, 'nonlocal declaration not allowed at module level');
      return;
    }
    const parameter = namedChildrenOf(node).find((name) => name.type === 'identifier' && scope.parameters.has(name.text));
    if (parameter !== undefined) this.refuse(node, `name '${parameter.text}' is parameter and ${keyword}`);
  }

  /** A module may begin with a docstring, then `from __future__` imports; nowhere else may they be. */
  checkFutureImports(root: Node): void {
    const statements = partsOf(root);
    let leading = isDocstring(statements[0]) ? 1 : 0;
    while (statements[leading]?.type === 'future_import_statement') leading += 1;
    const allowed = new Set(statements.slice(0, leading).map((statement) => statement.startIndex));
    for (const statement of this.futureImports) {
      if (!allowed.has(statement.startIndex)) {
        this.refuse(statement, 'from __future__ imports must occur at the beginning of the file');
        continue;
      }
      for (const name of statement.childrenForFieldName('name')) {
        const feature = (name?.type === 'aliased_import' ? name.childForFieldName('name') : name)?.text ?? '';
        if (feature === 'braces') this.refuse(statement, 'not a chance');
        else if (!FUTURE_FEATURES.has(feature)) this.refuse(statement, `future feature ${feature} is not defined`);
      }
    }
  }
}

type ParameterKind = 'plain' | 'default' | 'star' | 'args' | 'kwargs' | 'slash' | 'other';

function parameterKind(parameter: Node): ParameterKind {
  switch (parameter.type) {
    case 'identifier':
      return 'plain';
    case 'default_parameter':
    case 'typed_default_parameter':
      return 'default';
    case 'keyword_separator':
      return 'star';
    case 'positional_separator':
      return 'slash';
    case 'list_splat_pattern':
      return 'args';
    case 'dictionary_splat_pattern':
      return 'kwargs';
    case 'typed_parameter': {
      const target = partsOf(parameter).find((node) => node.type !== 'type');
      return target === undefined ? 'other' : target.type === 'identifier' ? 'plain' : parameterKind(target);
    }
    default:
      return 'other';
  }
}

/** `*a`, or `*a[b]`, `*a.b`, `*a(b)`: tree-sitter reads those as a subscript, attribute or call of `*a`. */
function isStarred(expression: Node): boolean {
  let node: Node | null = expression;
  while (node?.type === 'subscript' || node?.type === 'attribute' || node?.type === 'call') {
    node = node.childForFieldName(node.type === 'subscript' ? 'value' : node.type === 'attribute' ? 'object' : 'function');
  }
  return node?.type === 'list_splat';
}

function isDeclaredTypeParameters(typeParameter: Node): boolean {
  const owner = typeParameter.parent;
  return (owner?.type === 'function_definition' || owner?.type === 'class_definition') &&
    owner.childForFieldName('type_parameters')?.equals(typeParameter) === true;
}

/** A plain string literal (implicit concatenation and parentheses allowed) as a module's first statement. */
function isDocstring(statement: Node | undefined): boolean {
  if (statement?.type !== 'expression_statement') return false;
  const parts = partsOf(statement);
  let value = parts.length === 1 ? parts[0] : undefined;
  while (value?.type === 'parenthesized_expression') value = partsOf(value)[0];
  if (value === undefined) return false;
  const strings = value.type === 'concatenated_string' ? namedChildrenOf(value).filter((child) => child.type === 'string') : value.type === 'string' ? [value] : [];
  return strings.length > 0 && strings.every((string) => /^[rRuU]*["']/u.test(string.child(0)?.text ?? ''));
}

// ---------------------------------------------------------------------------------------------
// String literals

/**
 * The literal text of a string, in the pieces Python decodes one by one: an f-string's text
 * between its replacement fields, cut again after each `{{` and `}}`.
 */
function literalSegments(node: Node, body: { start: number; end: number }, interpolations: Node[], isFString: boolean): string[] {
  const source = node.text;
  const offset = node.startIndex;
  const pieces: string[] = [];
  let from = body.start;
  for (const field of interpolations) {
    pieces.push(source.slice(from - offset, field.startIndex - offset));
    from = field.endIndex;
  }
  pieces.push(source.slice(from - offset, body.end - offset));
  // Python reads the file with universal newlines.
  const normalised = pieces.map((piece) => piece.replace(/\r\n?/gu, '\n'));
  return isFString ? normalised.flatMap((piece) => piece.split(/(?<=\{\{|\}\})/u)) : normalised;
}

/** Offsets in Python's messages count each non-ASCII character as the 10 bytes of `\UXXXXXXXX`. */
function pythonWidth(character: string): number {
  return (character.codePointAt(0) ?? 0) < 0x80 ? 1 : 10;
}

const HEX_DIGIT = /^[0-9a-fA-F]$/u;

/** The first escape Python's `unicodeescape` decoding refuses, in its words; `\N{name}` is taken on trust. */
function escapeProblem(segments: string[], isFString: boolean): string | null {
  for (const text of segments) {
    const characters = [...text];
    let position = 0;
    for (let index = 0; index < characters.length; index += 1) {
      if (characters[index] !== '\\') {
        position += pythonWidth(characters[index] as string);
        continue;
      }
      const kind = characters[index + 1];
      const failure = (end: number, why: string): string =>
        `(unicode error) 'unicodeescape' codec can't decode bytes in position ${position}-${end}: ${why}`;
      const hexWidth = kind === 'x' ? 2 : kind === 'u' ? 4 : kind === 'U' ? 8 : 0;
      if (hexWidth > 0) {
        let digits = 0;
        while (digits < hexWidth && HEX_DIGIT.test(characters[index + 2 + digits] ?? '')) digits += 1;
        if (digits < hexWidth) return failure(position + 1 + digits, `truncated \\${kind}${'X'.repeat(hexWidth)} escape`);
        if (kind === 'U' && Number.parseInt(characters.slice(index + 2, index + 10).join(''), 16) > 0x10ffff) {
          return failure(position + 9, 'illegal Unicode character');
        }
        position += 2 + hexWidth;
        index += 1 + hexWidth;
        continue;
      }
      if (kind === 'N') {
        if (characters[index + 2] !== '{') return failure(position + 1, 'malformed \\N character escape');
        const close = characters.indexOf('}', index + 3);
        // An f-string's `\N{` is left to tree-sitter, which reads it as an escape or a field.
        if (isFString) {
          if (close === -1) break;
        } else if (close === -1) {
          const rest = characters.slice(index).reduce((sum, character) => sum + pythonWidth(character), 0);
          return failure(position + rest - 1, 'malformed \\N character escape');
        } else if (close === index + 3) {
          return failure(position + 2, 'malformed \\N character escape');
        }
        position += characters.slice(index, close + 1).reduce((sum, character) => sum + pythonWidth(character), 0);
        index = close;
        continue;
      }
      position += 1 + pythonWidth(kind ?? '');
      index += 1;
    }
  }
  return null;
}

function bytesLiteralProblem(segments: string[], isRaw: boolean): string | null {
  for (const text of segments) {
    if (/[^\x00-\x7f]/u.test(text)) return 'bytes can only contain ASCII literal characters';
  }
  if (isRaw) return null;
  for (const text of segments) {
    for (let index = 0; index < text.length; index += 1) {
      if (text[index] !== '\\') continue;
      if (text[index + 1] === 'x' && !(HEX_DIGIT.test(text[index + 2] ?? '') && HEX_DIGIT.test(text[index + 3] ?? ''))) {
        return `(value error) invalid \\x escape at position ${index}`;
      }
      index += 1;
    }
  }
  return null;
}

/** Where the pre-3.12 tokenizer ended an f-string before its real end: at its quote, or a line break. */
function preTokenizerCut(body: string, quote: string): 'quote' | 'newline' | null {
  for (let index = 0; index < body.length; index += 1) {
    const character = body[index];
    if (character === '\\') {
      index += 1;
    } else if (body.startsWith(quote, index)) {
      return 'quote';
    } else if (quote.length === 1 && (character === '\n' || character === '\r')) {
      return 'newline';
    }
  }
  return null;
}

/** A replacement field's expression as written: without its format specification's literal text. */
function expressionText(field: Node): string {
  const specification = field.childForFieldName('format_specifier');
  if (specification === null) return field.text;
  return field.text.slice(0, specification.startIndex - field.startIndex) + field.text.slice(specification.endIndex - field.startIndex);
}

// ---------------------------------------------------------------------------------------------
// Trees

function isOlder(version: string, than: string): boolean {
  const minor = (text: string): number => Number(text.split('.')[1] ?? 0);
  return minor(version) < minor(than);
}

function isInsideStringOrComment(root: Node, index: number): boolean {
  for (let node = root.descendantForIndex(index); node !== null; node = node.parent) {
    if (node.type === 'string' || node.type === 'comment') return true;
  }
  return false;
}

function ancestorsUntil(node: Node, type: string): Node[] {
  const found: Node[] = [];
  for (let up = node.parent; up !== null && up.type !== type; up = up.parent) found.push(up);
  return found;
}

/** Named children without comments and line continuations, which tree-sitter lets in anywhere. */
function partsOf(node: Node): Node[] {
  return namedChildrenOf(node).filter((child) => !child.isExtra);
}
