import type { Node, Tree } from 'web-tree-sitter';
import { sortDiagnostics, type Diagnostic } from './diagnostic.js';
import { describeCodePoint, findCompileErrors, isTypeParameterDefault, type TargetPython } from './python-compile-errors.js';
import { readCallArguments, readStaticValue, readStringLiteral, sourceText, type StaticValue } from './python-literals.js';
import type { PythonParser } from './python-parser.js';

/** What a static read of `service.py` found: the APIPod app, its endpoints, and what got in the way. */
export interface ServiceFile {
  /** The `APIPod(...)` instance the endpoints hang off. */
  app: AppDeclaration | null;
  /** In source order. */
  endpoints: EndpointDeclaration[];
  /** Syntax errors, unreadable decorator arguments, a missing app, duplicate routes, ... in line order. */
  diagnostics: Diagnostic[];
  /** The syntax errors among them, and what else the image's Python refuses to compile: Python would refuse to import the file. */
  syntaxErrors: Diagnostic[];
}

export interface AppDeclaration {
  variable: string;
  /** 1-based. */
  line: number;
  /** The constructor's arguments by parameter name (title, compute, provider, lifespan, ...), positional ones included. */
  arguments: Record<string, StaticValue>;
}

export interface EndpointDeclaration {
  /** Starts with "/"; null only when it cannot be read statically (a diagnostic says why). */
  path: string | null;
  /** Upper-case. */
  methods: string[];
  function: string;
  /** 1-based line of the `def`. */
  line: number;
  isAsync: boolean;
  /** The body yields (nested functions, lambdas and classes do not count). */
  isGenerator: boolean;
  parameters: ParameterDeclaration[];
  /** The return annotation as written. */
  returns: string | null;
}

export interface ParameterDeclaration {
  name: string;
  /** As written, e.g. "Optional[list[str]]". */
  annotation: string | null;
  /** Source text of the default, e.g. "20", "None", "'a'". */
  default: string | null;
  /** No default, and not *args or **kwargs. */
  required: boolean;
  /** 'keyword' is keyword-only (after `*` or `*args`). */
  kind: 'positional' | 'keyword' | 'var_positional' | 'var_keyword';
  /** The toolkit passes a JobProgress here; clients never send it. */
  injected: boolean;
}

/**
 * The toolkit's route decorators and the methods each one fixes (null: read `methods=`, else POST).
 * Source: socaity/apipod, apipod/engine/backend/fastapi/router.py (`endpoint`, `get`, `post`) and
 * apipod/engine/endpoint_config.py (`active_methods`: POST when `methods` is None).
 */
const ROUTE_DECORATORS: ReadonlyMap<string, readonly string[] | null> = new Map([
  ['endpoint', null],
  ['get', ['GET']],
  ['post', ['POST']],
]);
const DEFAULT_METHODS: readonly string[] = ['POST'];
const HTTP_METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE']);
const APP_CONSTRUCTOR = 'APIPod';
/** The parameters APIPod(...) fills from positional arguments, in order (python/apipod/app.py, `APIPod.__init__`). */
const APP_POSITIONAL_PARAMETERS: readonly string[] = ['title', 'compute', 'provider', 'backend', 'lifespan'];
const JOB_PROGRESS = 'JobProgress';
const TOOLKIT_MODULE = 'apipod';
const MAX_SYNTAX_DIAGNOSTICS = 3;

export function readServiceFile(parser: PythonParser, source: string, fileName: string, python: TargetPython): ServiceFile {
  // Python ends a line at a lone CR too (universal newlines); tree-sitter only at LF. Same length, so offsets hold.
  const text = (source.startsWith('\uFEFF') ? source.slice(1) : source).replace(/\r(?!\n)/gu, '\n');
  const trees: Tree[] = [];
  /** Parses `python` as if it began at `firstRow` of the file, so every node reports its real line. */
  const parseModule = (python: string, firstRow = 0): Node => {
    const tree = parser.parse(python);
    trees.push(tree);
    return tree.rootNodeWithOffset(0, { row: firstRow, column: 0 });
  };
  try {
    const root = parseModule(text);
    const { statements, syntaxProblems } = readRecoverableStatements(root, text, parseModule);
    const declarations = readDeclarations(statements, fileName);
    const hidden = declarations.app === null || syntaxProblems.length > 0 ? [] : findHiddenRegistrations(root, declarations, fileName);
    const syntaxErrors = firstFew(
      text.includes('\0')
        ? [{ file: fileName, line: lineOfIndex(text, text.indexOf('\0')), message: 'source code string cannot contain null bytes' }]
        : syntaxProblems.length > 0
          ? describeSyntaxErrors(syntaxProblems, fileName)
          : findCompileErrors(root, text, python).map((error) => ({ file: fileName, ...error })),
    );
    return { ...declarations, diagnostics: sortDiagnostics([...syntaxErrors, ...declarations.diagnostics, ...hidden]), syntaxErrors };
  } finally {
    // The trees live in WebAssembly memory, which the garbage collector does not reclaim.
    for (const tree of trees) tree.delete();
  }
}

// ---------------------------------------------------------------------------------------------
// Syntax errors and recovery

function describeSyntaxErrors(problems: Node[], file: string): Diagnostic[] {
  return problems.map((node): Diagnostic => {
    const character = node.isMissing ? null : strayCharacter(node);
    return {
      file,
      line: (character?.node ?? node).startPosition.row + 1,
      message: node.isMissing
        ? `syntax error: missing \`${node.type}\``
        : character !== null
          ? `syntax error: ${describeStrayCharacter(character.text)}`
          : `syntax error near \`${firstLineOf(node.text)}\``,
    };
  });
}

/**
 * A character no Python token can hold (a no-break space or a curly quote pasted from a web
 * page), which tree-sitter leaves alone in an ERROR node: Python names it, and so does svc,
 * rather than showing it between backticks, where it cannot be seen.
 */
function strayCharacter(error: Node): { node: Node; text: string } | null {
  for (const candidate of [error, ...error.descendantsOfType('ERROR')]) {
    const first = candidate?.text.replace(/^[ \t\f\r\n]+/u, '').codePointAt(0);
    if (candidate == null || first === undefined || first < 0x80) continue;
    const text = String.fromCodePoint(first);
    if (!/\p{ID_Continue}/u.test(text)) return { node: candidate, text };
  }
  return null;
}

/** Python's words (Parser/tokenizer.c): characters `str.isprintable()` refuses by code point only. */
function describeStrayCharacter(character: string): string {
  const isPrintable = !/[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u.test(character);
  return isPrintable
    ? `invalid character '${character}' (${describeCodePoint(character)})`
    : `invalid non-printable character ${describeCodePoint(character)}`;
}

/** A broken file can hold hundreds of errors; the first few say where to look. */
function firstFew(errors: Diagnostic[]): Diagnostic[] {
  const shown = errors.slice(0, MAX_SYNTAX_DIAGNOSTICS).map((error) => ({ ...error }));
  const hidden = errors.length - shown.length;
  const last = shown[shown.length - 1];
  if (last !== undefined && hidden > 0) last.message += ` (and ${hidden} more syntax error${hidden === 1 ? '' : 's'})`;
  return shown;
}

function lineOfIndex(text: string, index: number): number {
  let line = 1;
  for (let at = text.indexOf('\n'); at !== -1 && at < index; at = text.indexOf('\n', at + 1)) line += 1;
  return line;
}

/** The outermost ERROR nodes and the MISSING nodes, in source order; a PEP 696 default is left to the compile checks. */
function findSyntaxProblems(node: Node): Node[] {
  if (node.isMissing || (node.isError && !isTypeParameterDefault(node))) return [node];
  if (!node.hasError) return [];
  return childrenOf(node).flatMap(findSyntaxProblems);
}

function firstLineOf(text: string): string {
  const line = (text.split('\n')[0] ?? '').trim();
  return line.length > 40 ? `${line.slice(0, 40)}...` : line;
}

/**
 * The module-level statements worth reading, and where the syntax errors are. tree-sitter
 * recovers from errors, but an unclosed bracket can swallow every statement after it into one
 * ERROR node. So each broken region is cut again at lines that start a new top-level statement,
 * and each piece is parsed alone: the endpoints after a broken function are still found, and
 * each error is located in its own piece rather than wherever the recovery gave up.
 */
function readRecoverableStatements(
  root: Node,
  text: string,
  parseModule: (python: string, firstRow: number) => Node,
): { statements: Node[]; syntaxProblems: Node[] } {
  const { readable, brokenRows } = readModuleStatements(root, { flattenBrokenBlocks: false });
  const lines = text.split('\n');
  const pieces = mergeRowRanges(brokenRows).flatMap((range) =>
    splitIntoTopLevelChunks(lines, range).map((chunk) =>
      parseModule(lines.slice(chunk.start, chunk.end + 1).join('\n'), chunk.start),
    ),
  );
  const recovered = pieces.flatMap((piece) => readModuleStatements(piece, { flattenBrokenBlocks: true }).readable);
  const localised = [...readable, ...pieces].flatMap(findSyntaxProblems);
  return {
    statements: sortByPosition(dedupeByPosition([...readable, ...recovered])),
    // Cutting can in principle parse a broken region cleanly; the whole-file errors then still count.
    syntaxProblems: sortByPosition(localised.length > 0 ? localised : findSyntaxProblems(root)),
  };
}

function sortByPosition(nodes: Node[]): Node[] {
  return [...nodes].sort(
    (a, b) => a.startPosition.row - b.startPosition.row || a.startPosition.column - b.startPosition.column,
  );
}

interface RowRange {
  start: number;
  end: number;
}

function readModuleStatements(
  root: Node,
  options: { flattenBrokenBlocks: boolean },
): { readable: Node[]; brokenRows: RowRange[] } {
  const readable: Node[] = [];
  const brokenRows: RowRange[] = [];
  for (const statement of namedChildrenOf(root)) {
    if (statement.type === 'comment') continue;
    if (statement.hasError && !(options.flattenBrokenBlocks && BLOCK_STATEMENTS.has(statement.type))) {
      if (hasReadableSignature(statement)) readable.push(statement);
      else brokenRows.push({ start: statement.startPosition.row, end: statement.endPosition.row });
      continue;
    }
    for (const inner of flattenBlocks(statement)) {
      if (!inner.hasError || hasReadableSignature(inner)) readable.push(inner);
    }
  }
  return { readable, brokenRows };
}

/** Statements whose blocks run on import, so what they define exists when the service loads. */
const BLOCK_STATEMENTS = new Set(['if_statement', 'try_statement', 'with_statement']);
const BLOCK_CLAUSES = new Set([
  'elif_clause',
  'else_clause',
  'except_clause',
  'except_group_clause',
  'finally_clause',
]);

function flattenBlocks(statement: Node): Node[] {
  if (!BLOCK_STATEMENTS.has(statement.type)) return [statement];
  const blocks: Node[] = [];
  for (const child of namedChildrenOf(statement)) {
    if (child.type === 'block') {
      // A `__main__` guard runs only when the file is executed as a script, never when svc imports it.
      if (!isMainGuard(statement)) blocks.push(child);
    } else if (BLOCK_CLAUSES.has(child.type)) {
      blocks.push(...namedChildrenOf(child).filter((node) => node.type === 'block'));
    }
  }
  return blocks.flatMap((block) =>
    namedChildrenOf(block)
      .filter((node) => node.type !== 'comment')
      .flatMap(flattenBlocks),
  );
}

function isMainGuard(statement: Node): boolean {
  const condition = statement.childForFieldName('condition');
  if (statement.type !== 'if_statement' || condition?.type !== 'comparison_operator') return false;
  const operands = namedChildrenOf(condition);
  const operator = childrenOf(condition).find((child) => !child.isNamed)?.type;
  return (
    operator === '==' &&
    operands.length === 2 &&
    operands.some((operand) => operand.type === 'identifier' && operand.text === '__name__') &&
    operands.some((operand) => readStringLiteral(operand) === '__main__')
  );
}

/** A function whose decorators and signature parsed cleanly can be read even if its body is broken. */
function hasReadableSignature(statement: Node): boolean {
  if (statement.type !== 'decorated_definition') return false;
  const definition = statement.childForFieldName('definition');
  if (definition?.type !== 'function_definition') return false;
  const decorators = namedChildrenOf(statement).filter((node) => node.type === 'decorator');
  const signature = ['name', 'parameters', 'return_type'].map((field) => definition.childForFieldName(field));
  return (
    signature[0] != null &&
    signature[1] != null &&
    [...decorators, ...signature].every((node) => node == null || !(node.hasError || node.isMissing))
  );
}

function mergeRowRanges(ranges: RowRange[]): RowRange[] {
  const merged: RowRange[] = [];
  for (const range of [...ranges].sort((a, b) => a.start - b.start)) {
    const last = merged[merged.length - 1];
    if (last !== undefined && range.start <= last.end + 1) last.end = Math.max(last.end, range.end);
    else merged.push({ ...range });
  }
  return merged;
}

/**
 * Cuts a row range where a line starts a new top-level statement: it begins in column 0 and is
 * not a comment, a closing bracket or a clause that continues the statement above. Decorators
 * stay with the definition below them.
 */
function splitIntoTopLevelChunks(lines: string[], range: RowRange): RowRange[] {
  const chunks: RowRange[] = [];
  let start = range.start;
  let previousStarter = '';
  for (let row = range.start; row <= range.end; row += 1) {
    const line = lines[row] ?? '';
    const startsStatement = /^[^\s#)\]}]/u.test(line) && !/^(else|elif|except|finally)\b/u.test(line);
    if (!startsStatement) continue;
    if (row > start && !previousStarter.startsWith('@')) {
      chunks.push({ start, end: row - 1 });
      start = row;
    }
    previousStarter = line;
  }
  chunks.push({ start, end: range.end });
  return chunks;
}

function dedupeByPosition(nodes: Node[]): Node[] {
  const seen = new Set<string>();
  return nodes.filter((node) => {
    const key = `${node.startPosition.row}:${node.startPosition.column}:${node.type}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

// ---------------------------------------------------------------------------------------------
// The app and its endpoints

interface Declarations {
  app: AppDeclaration | null;
  endpoints: EndpointDeclaration[];
  diagnostics: Diagnostic[];
}

interface AppCandidate {
  variable: string;
  line: number;
  call: Node;
  /** False when `APIPod` is called without being imported from apipod. */
  isImported: boolean;
}

function readDeclarations(statements: Node[], file: string): Declarations {
  const diagnostics: Diagnostic[] = [];
  const report = (line: number, message: string): void => {
    diagnostics.push({ file, line, message });
  };

  const imports = readToolkitImports(statements);
  const candidates = findAppCandidates(statements, imports);
  const [chosen, ...others] = candidates;
  const app = chosen === undefined ? null : readApp(chosen, others, report);

  const endpoints: EndpointDeclaration[] = [];
  for (const statement of statements) {
    if (statement.type !== 'decorated_definition') continue;
    const definition = statement.childForFieldName('definition');
    if (definition?.type !== 'function_definition') continue;
    for (const decorator of namedChildrenOf(statement).filter((node) => node.type === 'decorator')) {
      const route = readRouteDecorator(decorator);
      if (route === null) continue;
      if (app !== null && route.variable === app.variable) {
        endpoints.push(readEndpoint(route, definition, imports.jobProgressNames, report));
      } else if (others.some((other) => other.variable === route.variable)) {
        report(route.line, `\`@${route.variable}.${route.kind}\` is on a second app; svc serves only \`${app?.variable}\``);
      } else if (route.kind === 'endpoint') {
        report(
          route.line,
          app === null
            ? `\`@${route.variable}.endpoint\` is not on an APIPod app: no \`${route.variable} = APIPod(...)\` found`
            : `\`@${route.variable}.endpoint\` is not on the APIPod app \`${app.variable}\``,
        );
      }
    }
  }
  reportDuplicateRoutes(endpoints, report);
  return { app, endpoints, diagnostics };
}

interface ToolkitImports {
  /** Local names bound to `apipod.APIPod`. */
  constructorNames: Set<string>;
  /** Local names (or dotted paths) bound to the `apipod` module or one of its submodules. */
  moduleNames: Set<string>;
  /** Local names imported from elsewhere, which therefore are not the toolkit's APIPod. */
  foreignNames: Set<string>;
  /** `JobProgress` and the local names it is imported as. */
  jobProgressNames: Set<string>;
  hasStarImport: boolean;
}

function findAppCandidates(statements: Node[], imports: ToolkitImports): AppCandidate[] {
  return statements.flatMap((statement) => {
    const candidate = readAppAssignment(statement, imports);
    return candidate === null ? [] : [candidate];
  });
}

function readApp(chosen: AppCandidate, others: AppCandidate[], report: Report): AppDeclaration {
  for (const other of others) {
    report(
      other.line,
      `a second APIPod app \`${other.variable}\` is declared; svc serves only the first, \`${chosen.variable}\` (line ${chosen.line})`,
    );
  }
  if (!chosen.isImported) {
    report(chosen.line, `\`${APP_CONSTRUCTOR}\` is not imported; add \`from apipod import APIPod\``);
  }
  return { variable: chosen.variable, line: chosen.line, arguments: readAppArguments(chosen.call, report) };
}

function readToolkitImports(statements: Node[]): ToolkitImports {
  const imports: ToolkitImports = {
    constructorNames: new Set(),
    moduleNames: new Set(),
    foreignNames: new Set(),
    jobProgressNames: new Set([JOB_PROGRESS]),
    hasStarImport: false,
  };
  for (const statement of statements) {
    if (statement.type === 'import_from_statement') {
      const isToolkit = isToolkitModule(statement.childForFieldName('module_name')?.text ?? '');
      if (isToolkit && namedChildrenOf(statement).some((node) => node.type === 'wildcard_import')) {
        imports.hasStarImport = true;
      }
      for (const name of statement.childrenForFieldName('name')) {
        const imported = name?.type === 'aliased_import' ? name.childForFieldName('name')?.text : name?.text;
        const local = name?.type === 'aliased_import' ? name.childForFieldName('alias')?.text : name?.text;
        if (local === undefined) continue;
        if (isToolkit && imported === APP_CONSTRUCTOR) imports.constructorNames.add(local);
        else if (isToolkit && imported === JOB_PROGRESS) imports.jobProgressNames.add(local);
        else imports.foreignNames.add(local);
      }
    } else if (statement.type === 'import_statement') {
      for (const name of statement.childrenForFieldName('name')) {
        if (name?.type === 'aliased_import') {
          const module = name.childForFieldName('name')?.text ?? '';
          const alias = name.childForFieldName('alias')?.text;
          if (isToolkitModule(module) && alias !== undefined) imports.moduleNames.add(alias);
        } else if (name !== null && isToolkitModule(name.text)) {
          // `import apipod.api` binds `apipod` and makes `apipod.api` reachable through it.
          imports.moduleNames.add(TOOLKIT_MODULE).add(name.text);
        }
      }
    }
  }
  return imports;
}

function isToolkitModule(dottedName: string): boolean {
  return dottedName === TOOLKIT_MODULE || dottedName.startsWith(`${TOOLKIT_MODULE}.`);
}

/** `app = APIPod(...)` or `app: APIPod = APIPod(...)`, with APIPod as imported (or aliased) from apipod. */
function readAppAssignment(statement: Node, imports: ToolkitImports): AppCandidate | null {
  if (statement.type !== 'expression_statement') return null;
  const assignment = statement.namedChildren[0];
  if (assignment?.type !== 'assignment') return null;
  const target = assignment.childForFieldName('left');
  const call = assignment.childForFieldName('right');
  if (target?.type !== 'identifier' || call?.type !== 'call') return null;
  const callee = call.childForFieldName('function');
  const candidate = { variable: target.text, line: statement.startPosition.row + 1, call };
  if (callee?.type === 'identifier') {
    if (imports.constructorNames.has(callee.text)) return { ...candidate, isImported: true };
    // An APIPod that is not imported at all is still meant as the app; one imported from elsewhere is not.
    if (callee.text === APP_CONSTRUCTOR && !imports.foreignNames.has(APP_CONSTRUCTOR)) {
      return { ...candidate, isImported: imports.hasStarImport };
    }
  }
  if (
    callee?.type === 'attribute' &&
    callee.childForFieldName('attribute')?.text === APP_CONSTRUCTOR &&
    imports.moduleNames.has(withoutWhitespace(callee.childForFieldName('object')?.text ?? ''))
  ) {
    return { ...candidate, isImported: true };
  }
  return null;
}

type Report = (line: number, message: string) => void;

function readAppArguments(call: Node, report: Report): Record<string, StaticValue> {
  const values: Record<string, StaticValue> = {};
  const args = readCallArguments(call);
  const listSplat = args.splats.find((splat) => splat.type === 'list_splat');
  args.positional.forEach((argument, index) => {
    const line = argument.startPosition.row + 1;
    const shown = sourceText(argument);
    const name = APP_POSITIONAL_PARAMETERS[index];
    if (listSplat !== undefined && argument.startIndex > listSplat.startIndex) {
      report(line, `cannot tell which APIPod(...) parameter \`${shown}\` fills: it follows \`${sourceText(listSplat)}\``);
    } else if (name === undefined) {
      report(
        line,
        `APIPod(...) takes at most ${APP_POSITIONAL_PARAMETERS.length} positional arguments (${APP_POSITIONAL_PARAMETERS.join(', ')}); ` +
          `\`${shown}\` makes the service fail on import`,
      );
    } else if (args.keywords.has(name)) {
      report(line, `APIPod(...) is given \`${name}\` by position and by keyword; the service fails on import`);
    } else {
      values[name] = readStaticValue(argument);
    }
  });
  for (const splat of args.splats) {
    report(splat.startPosition.row + 1, `cannot read APIPod(...) argument \`${sourceText(splat)}\` statically`);
  }
  for (const [name, value] of args.keywords) values[name] = readStaticValue(value);
  return values;
}

/**
 * `app.endpoint` used where the scan does not read it (in a class body, a loop or a
 * function, or called directly on a lambda): the toolkit still registers such endpoints on
 * import, so svc start serves them, but the manifest cannot list them. Registrations under
 * `if __name__ == "__main__":` are left alone: a worker never runs that block.
 */
function findHiddenRegistrations(root: Node, declarations: Declarations, file: string): Diagnostic[] {
  const variable = declarations.app?.variable;
  const found = new Map<number, string>(); // line -> `app.get`, `app.endpoint`, ...
  const pending = namedChildrenOf(root).filter((statement) => !isMainGuard(statement));
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    pending.push(...namedChildrenOf(node));
    if (node.type !== 'attribute' || node.childForFieldName('object')?.text !== variable) continue;
    if (ROUTE_DECORATORS.has(node.childForFieldName('attribute')?.text ?? '') && isOutOfReach(node)) found.set(node.startPosition.row + 1, node.text);
  }
  return [...found].map(([line, registration]) => ({
    file,
    line,
    message: `\`${registration}\` registers an endpoint here that svc cannot read without running the file (inside a class, a loop or a function, or called directly); svc start serves it, but the manifest leaves it out: decorate a top-level function instead`,
  }));
}

const HIDING_SCOPES = new Set(['function_definition', 'class_definition', 'lambda', 'for_statement', 'while_statement']);

/** Not a decorator of a function the scan reads: nested in a scope it does not enter, or no decorator at all. */
function isOutOfReach(node: Node): boolean {
  let inDecorator = false;
  for (let up = node.parent; up !== null; up = up.parent) {
    if (HIDING_SCOPES.has(up.type)) return true;
    if (up.type === 'decorator') inDecorator = true;
  }
  return !inDecorator;
}

interface RouteDecorator {
  variable: string;
  kind: string;
  /** The decorator's call, or null for a bare `@app.endpoint`. */
  call: Node | null;
  line: number;
}

/** `@x.endpoint(...)`, `@x.get(...)`, `@x.post(...)`; anything else is not a route. */
function readRouteDecorator(decorator: Node): RouteDecorator | null {
  const expression = namedChildrenOf(decorator).find((node) => node.type !== 'comment');
  const call = expression?.type === 'call' ? expression : null;
  const target = call === null ? expression : call.childForFieldName('function');
  if (target?.type !== 'attribute') return null;
  const object = target.childForFieldName('object');
  const kind = target.childForFieldName('attribute')?.text ?? '';
  if (object?.type !== 'identifier' || !ROUTE_DECORATORS.has(kind)) return null;
  return { variable: object.text, kind, call, line: decorator.startPosition.row + 1 };
}

function readEndpoint(
  route: RouteDecorator,
  definition: Node,
  jobProgressNames: ReadonlySet<string>,
  report: Report,
): EndpointDeclaration {
  const body = definition.childForFieldName('body');
  const returns = definition.childForFieldName('return_type');
  const parameters = definition.childForFieldName('parameters');
  const functionName = definition.childForFieldName('name')?.text ?? '';
  return {
    path: readRoutePath(route, functionName, report),
    methods: readRouteMethods(route, report),
    function: functionName,
    line: definition.startPosition.row + 1,
    isAsync: childrenOf(definition).some((child) => child.type === 'async'),
    isGenerator: body !== null && containsYield(body),
    parameters: parameters === null ? [] : readParameters(parameters, jobProgressNames),
    returns: returns === null ? null : sourceText(returns),
  };
}

/** The toolkit serves an endpoint declared without a path (or with `""` or `None`: `path or name`) at `/<function name>`. */
function readRoutePath(route: RouteDecorator, functionName: string, report: Report): string | null {
  const decorator = `@${route.variable}.${route.kind}`;
  const args = route.call === null ? null : readCallArguments(route.call);
  const pathNode = args?.keywords.get('path') ?? args?.positional[0];
  if (pathNode === undefined) {
    if (args === null || args.splats.length === 0) return `/${functionName}`;
    report(route.line, `\`${decorator}\` cannot read its path statically; give one as a string, e.g. \`${decorator}("/generate")\``);
    return null;
  }
  if (pathNode.type === 'none') return `/${functionName}`;
  const path = readStringLiteral(pathNode);
  if (path === '') return `/${functionName}`;
  if (path === null) {
    report(route.line, `cannot read path statically: \`${sourceText(pathNode)}\`; write it as a string literal`);
    return null;
  }
  if (/[{}]/.test(path)) {
    report(route.line, `${path}: path parameters are not supported, and the service fails on import; take them as parameters of the function`);
  }
  // The toolkit prefixes a missing "/" itself (router.py, _normalize_endpoint_path).
  return path.startsWith('/') ? path : `/${path}`;
}

function readRouteMethods(route: RouteDecorator, report: Report): string[] {
  const decorator = `@${route.variable}.${route.kind}`;
  const fixed = ROUTE_DECORATORS.get(route.kind) ?? null;
  const args = route.call === null ? null : readCallArguments(route.call);
  if (fixed !== null) {
    if (args?.keywords.has('methods')) {
      report(route.line, `\`${decorator}\` sets its own method (${fixed.join(', ')}); its \`methods=\` is ignored`);
    }
    return [...fixed];
  }
  const methodsNode = args?.keywords.get('methods') ?? args?.positional[1];
  if (methodsNode === undefined) return [...DEFAULT_METHODS];
  const value = readStaticValue(methodsNode);
  const names = typeof value === 'string' ? [value] : Array.isArray(value) ? value : null;
  if (names === null || !names.every((name): name is string => typeof name === 'string')) {
    report(
      route.line,
      `cannot read methods statically: \`${sourceText(methodsNode)}\`; assuming ${DEFAULT_METHODS.join(', ')}`,
    );
    return [...DEFAULT_METHODS];
  }
  const methods = [...new Set(names.map((name) => name.toUpperCase()))];
  for (const method of methods.filter((name) => !HTTP_METHODS.has(name))) {
    report(route.line, `unknown HTTP method \`${method}\``);
  }
  return methods;
}

/**
 * The toolkit names an endpoint by its path alone, so a second endpoint on a path is refused
 * on import whatever its methods (python/apipod/app.py, `APIPod._add`).
 */
function reportDuplicateRoutes(endpoints: EndpointDeclaration[], report: Report): void {
  const firstByPath = new Map<string, EndpointDeclaration>();
  for (const endpoint of endpoints) {
    if (endpoint.path === null) continue;
    const first = firstByPath.get(endpoint.path);
    if (first === undefined) {
      firstByPath.set(endpoint.path, endpoint);
      continue;
    }
    const failure = 'the service fails on import, since APIPod serves each path with one endpoint';
    report(
      endpoint.line,
      first.line === endpoint.line
        ? `duplicate route ${endpoint.path}: \`${endpoint.function}\` declares it twice; ${failure}: give one decorator several methods`
        : `duplicate route ${endpoint.path}: already declared by \`${first.function}\` (line ${first.line}); ${failure}: ` +
            `give \`${endpoint.function}\` another path, or one endpoint several methods`,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Function signatures

function readParameters(parameters: Node, jobProgressNames: ReadonlySet<string>): ParameterDeclaration[] {
  const declarations: ParameterDeclaration[] = [];
  let isKeywordOnly = false;
  for (const parameter of namedChildrenOf(parameters)) {
    if (parameter.type === 'keyword_separator') isKeywordOnly = true;
    const shape = readParameterShape(parameter);
    if (shape === null) continue;
    const kind =
      shape.splat === '*' ? 'var_positional' : shape.splat === '**' ? 'var_keyword' : isKeywordOnly ? 'keyword' : 'positional';
    if (kind === 'var_positional') isKeywordOnly = true;
    const annotation = shape.annotation === null ? null : sourceText(shape.annotation);
    declarations.push({
      name: shape.name,
      annotation,
      default: shape.default === null ? null : sourceText(shape.default),
      required: shape.default === null && shape.splat === null,
      kind,
      injected: shape.name === 'job_progress' || (annotation !== null && mentionsAny(annotation, jobProgressNames)),
    });
  }
  return declarations;
}

/**
 * The toolkit injects a JobProgress into a parameter named `job_progress` or whose annotation
 * mentions JobProgress (socaity/apipod, apipod/engine/signatures/analysis.py). Whole names only,
 * so `Optional[JobProgress]`, `apipod.JobProgress` and `"JobProgress"` count, `MyJobProgress` not.
 */
function mentionsAny(annotation: string, names: ReadonlySet<string>): boolean {
  return (annotation.match(/[\p{L}\p{N}_]+/gu) ?? []).some((name) => names.has(name));
}

interface ParameterShape {
  name: string;
  splat: '*' | '**' | null;
  annotation: Node | null;
  default: Node | null;
}

function readParameterShape(parameter: Node): ParameterShape | null {
  switch (parameter.type) {
    case 'identifier':
      return { name: parameter.text, splat: null, annotation: null, default: null };
    case 'list_splat_pattern':
    case 'dictionary_splat_pattern':
      return { name: splatName(parameter), splat: splatOf(parameter), annotation: null, default: null };
    case 'typed_parameter': {
      const target = namedChildrenOf(parameter).find((node) => node !== parameter.childForFieldName('type'));
      if (target === undefined) return null;
      const isSplat = target.type === 'list_splat_pattern' || target.type === 'dictionary_splat_pattern';
      return {
        name: isSplat ? splatName(target) : target.text,
        splat: isSplat ? splatOf(target) : null,
        annotation: parameter.childForFieldName('type'),
        default: null,
      };
    }
    case 'default_parameter':
    case 'typed_default_parameter':
      return {
        name: parameter.childForFieldName('name')?.text ?? '',
        splat: null,
        annotation: parameter.childForFieldName('type'),
        default: parameter.childForFieldName('value'),
      };
    default:
      return null; // `/`, `*` separators and comments
  }
}

function splatOf(pattern: Node): '*' | '**' {
  return pattern.type === 'dictionary_splat_pattern' ? '**' : '*';
}

function splatName(pattern: Node): string {
  return namedChildrenOf(pattern).find((node) => node.type === 'identifier')?.text ?? '';
}

/** Nested functions, lambdas and classes are generators (or not) on their own account. */
const OWN_SCOPES = new Set(['function_definition', 'lambda', 'class_definition']);

function containsYield(node: Node): boolean {
  return childrenOf(node).some(
    (child) => child.type === 'yield' || (!OWN_SCOPES.has(child.type) && containsYield(child)),
  );
}

function withoutWhitespace(text: string): string {
  return text.replace(/\s+/gu, '');
}

function childrenOf(node: Node): Node[] {
  return node.children.filter((child): child is Node => child !== null);
}

function namedChildrenOf(node: Node): Node[] {
  return node.namedChildren.filter((child): child is Node => child !== null);
}
