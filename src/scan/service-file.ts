import type { Node, Tree } from 'web-tree-sitter';
import { COMPUTE_VALUES, DEFAULT_TARGET, PROVIDER_VALUES } from '../deployment-target.js';
import { HTTP_METHODS } from '../http-methods.js';
import { instancesIn, traceAppInstances, UNBOUND, type AppInstance, type AppTrace } from './app-instances.js';
import { sortDiagnostics, type Diagnostic } from './diagnostic.js';
import { describeInvalidCharacter, findCompileErrors, isTypeParameterDefault, type TargetPython } from './python-compile-errors.js';
import { parsePython } from './python-grammar-gaps.js';
import { readCallArguments, readStaticValue, readStringLiteral, sourceText, type CallArguments, type StaticValue } from './python-literals.js';
import type { PythonParser } from './python-parser.js';
import { findRouteProblems, type PlacedRoute } from './route-rules.js';
import { isCertain, placementInside, TOP_LEVEL, type Placement, type PlacedStatement } from './statement-placement.js';

/** What a static read of `service.py` found: the APIPod app, its endpoints, and what got in the way. */
export interface ServiceFile {
  /** The `APIPod(...)` instance the endpoints hang off. */
  app: AppDeclaration | null;
  /** In source order. */
  endpoints: EndpointDeclaration[];
  /** Syntax errors, unreadable decorator arguments, a missing app, duplicate routes, ... in line order. */
  diagnostics: Diagnostic[];
  /**
   * Among them, what certainly stops the service: syntax errors and what else the image's
   * Python refuses to compile, what fails the import (a bad APIPod argument, route or method),
   * and routes svc start refuses.
   */
  serviceErrors: Diagnostic[];
  /**
   * Registrations svc start serves that the scan cannot list (a decorator inside a function, the
   * app handed to another function, `add_api_route`, ...): each has a warning among `diagnostics`.
   */
  unreadRegistrations: number;
}

export interface AppDeclaration {
  variable: string;
  /** 1-based. */
  line: number;
  /** The constructor's arguments by parameter name (title, compute, provider, lifespan, ...), positional ones included. */
  arguments: Record<string, StaticValue>;
  /**
   * When each arm of an `if` makes the app: the arguments whose value depends on the arm, with
   * every arm's value in source order (APIPod's default where one leaves it out); `arguments`
   * holds those they agree on.
   */
  branch_arguments: Record<string, StaticValue[]>;
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
 * apipod/engine/endpoint_config.py (`active_methods`: POST when `methods` is None); `put`,
 * `patch` and `delete` are FastAPI's APIRouter's, which upstream's APIPod is (svc's app has them).
 */
const ROUTE_DECORATORS: ReadonlyMap<string, readonly string[] | null> = new Map([
  ['endpoint', null],
  ['get', ['GET']],
  ['post', ['POST']],
  ['put', ['PUT']],
  ['patch', ['PATCH']],
  ['delete', ['DELETE']],
]);
/**
 * The app's other ways to register endpoints (FastAPI's APIRouter's, which upstream's APIPod is;
 * python/apipod/app.py), which the scan does not read: `api_route(path, methods)` as a decorator,
 * `add_api_route(path, function)`, `include_router(other_app, prefix=...)`.
 */
const UNREAD_REGISTRATIONS: ReadonlySet<string> = new Set(['api_route', 'add_api_route', 'include_router']);
/** Builtins that take the app without registering anything on it. */
const NON_REGISTERING_CALLS: ReadonlySet<string> = new Set(['print', 'isinstance', 'id', 'type', 'repr', 'str', 'hasattr', 'getattr', 'dir', 'vars']);
const DEFAULT_METHODS: readonly string[] = ['POST'];
const APP_CONSTRUCTOR = 'APIPod';
/** The parameters APIPod(...) fills from positional arguments, in order (python/apipod/app.py, `APIPod.__init__`). */
const APP_POSITIONAL_PARAMETERS: readonly string[] = ['title', 'compute', 'provider', 'backend', 'lifespan'];
const JOB_PROGRESS = 'JobProgress';
const TOOLKIT_MODULE = 'apipod';
const MAX_SYNTAX_DIAGNOSTICS = 3;

export function readServiceFile(parser: PythonParser, source: string, fileName: string, python: TargetPython): ServiceFile {
  // Python ends a line at a lone CR too (universal newlines); tree-sitter only at LF. Same length, so offsets hold.
  const code = (source.startsWith('\uFEFF') ? source.slice(1) : source).replace(/\r(?!\n)/gu, '\n');
  const trees: Tree[] = [];
  /** Parses `python` as if it began at `firstRow` of the file, so every node reports its real line; with the text it read. */
  const parseModule = (python: string, firstRow = 0): { root: Node; text: string } => {
    const { tree, text } = parsePython(parser, python);
    trees.push(tree);
    return { root: tree.rootNodeWithOffset(0, { row: firstRow, column: 0 }), text };
  };
  try {
    const { root, text } = parseModule(code);
    const { statements, syntaxProblems } = readRecoverableStatements(root, text, (python, firstRow) => parseModule(python, firstRow).root);
    const { errors, servedNames, ...declarations } = readDeclarations(root, statements, text, fileName);
    const hidden = declarations.app === null || syntaxProblems.length > 0 ? [] : findHiddenRegistrations(root, servedNames, fileName);
    const compileErrors = firstFew(
      text.includes('\0')
        ? [{ file: fileName, line: lineOfIndex(text, text.indexOf('\0')), message: 'source code string cannot contain null bytes' }]
        : syntaxProblems.length > 0
          ? describeSyntaxErrors(syntaxProblems, fileName)
          : findCompileErrors(root, text, python).map((error) => ({ file: fileName, ...error })),
    );
    // A file that does not parse is read as well as it can be, which is not well enough to be sure of more.
    const serviceErrors = [...compileErrors, ...(syntaxProblems.length > 0 ? [] : errors)];
    return {
      ...declarations,
      diagnostics: sortDiagnostics([...compileErrors, ...declarations.diagnostics, ...hidden]),
      serviceErrors: sortDiagnostics(serviceErrors),
      unreadRegistrations: hidden.length,
    };
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
          ? `syntax error: ${describeInvalidCharacter(character.text)}`
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
): { statements: PlacedStatement[]; syntaxProblems: Node[] } {
  const { readable, brokenRows } = readModuleStatements(root, { flattenBrokenBlocks: false });
  const lines = text.split('\n');
  const pieces = mergeRowRanges(brokenRows).flatMap((range) =>
    splitIntoTopLevelChunks(lines, range).map((chunk) =>
      parseModule(lines.slice(chunk.start, chunk.end + 1).join('\n'), chunk.start),
    ),
  );
  const recovered = pieces.flatMap((piece) => readModuleStatements(piece, { flattenBrokenBlocks: true }).readable);
  const localised = [...readable.map((statement) => statement.node), ...pieces].flatMap(findSyntaxProblems);
  return {
    statements: dedupeByPosition([...readable, ...recovered]).sort((a, b) => comparePositions(a.node, b.node)),
    // Cutting can in principle parse a broken region cleanly; the whole-file errors then still count.
    syntaxProblems: sortByPosition(localised.length > 0 ? localised : findSyntaxProblems(root)),
  };
}

function sortByPosition(nodes: Node[]): Node[] {
  return [...nodes].sort(comparePositions);
}

function comparePositions(a: Node, b: Node): number {
  return a.startPosition.row - b.startPosition.row || a.startPosition.column - b.startPosition.column;
}

interface RowRange {
  start: number;
  end: number;
}

function readModuleStatements(
  root: Node,
  options: { flattenBrokenBlocks: boolean },
): { readable: PlacedStatement[]; brokenRows: RowRange[] } {
  const readable: PlacedStatement[] = [];
  const brokenRows: RowRange[] = [];
  for (const statement of namedChildrenOf(root)) {
    if (statement.type === 'comment') continue;
    if (statement.hasError && !(options.flattenBrokenBlocks && BLOCK_STATEMENTS.has(statement.type))) {
      if (hasReadableSignature(statement)) readable.push({ node: statement, placement: TOP_LEVEL });
      else brokenRows.push({ start: statement.startPosition.row, end: statement.endPosition.row });
      continue;
    }
    for (const inner of flattenBlocks(statement, TOP_LEVEL)) {
      if (!inner.node.hasError || hasReadableSignature(inner.node)) readable.push(inner);
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

/** The statements of an `if`, `try` or `with` block, each placed among the arms around it (statement-placement.ts). */
function flattenBlocks(statement: Node, placement: Placement): PlacedStatement[] {
  if (!BLOCK_STATEMENTS.has(statement.type)) return [{ node: statement, placement }];
  const blocks: Array<{ block: Node; placement: Placement }> = [];
  const add = (holder: Node, where: Placement): void => {
    for (const block of namedChildrenOf(holder).filter((node) => node.type === 'block')) blocks.push({ block, placement: where });
  };
  const clauses = namedChildrenOf(statement).filter((child) => child.type === 'block' || BLOCK_CLAUSES.has(child.type));
  if (statement.type === 'if_statement') {
    // A worker imports the file under another name than `__main__`: a guard decides its arm before it runs.
    const guard = mainGuardSense(statement);
    if (guard === 'runs-body') {
      add(statement, placement);
    } else {
      const arms = guard === 'skips-body' ? clauses.filter((clause) => clause.type !== 'block') : clauses;
      const isOnlyElse = arms.length === 1 && arms[0]?.type === 'else_clause';
      arms.forEach((clause, arm) => add(clause.type === 'block' ? statement : clause, isOnlyElse ? placement : placementInside(placement, statement, { arm })));
    }
  } else if (statement.type === 'try_statement') {
    // Handlers that re-raise let no exception go by: the body then runs whenever the import gets past it.
    const handlers = clauses.filter((clause) => clause.type === 'except_clause' || clause.type === 'except_group_clause');
    const swallows = handlers.some((handler) => lastStatementOf(handler)?.type !== 'raise_statement');
    let handler = 0;
    for (const clause of clauses) {
      if (clause.type === 'block') add(statement, placementInside(placement, statement, { guarded: swallows }));
      else if (handlers.includes(clause)) add(clause, placementInside(placement, statement, { arm: (handler += 1) }));
      else if (clause.type === 'else_clause') add(clause, placementInside(placement, statement, { guarded: handlers.length > 0 }));
      else add(clause, placement);
    }
  } else {
    add(statement, placement);
  }
  return blocks.flatMap(({ block, placement: inner }) =>
    namedChildrenOf(block)
      .filter((node) => !node.isExtra)
      .flatMap((node) => flattenBlocks(node, inner)),
  );
}

function lastStatementOf(clause: Node): Node | undefined {
  const block = namedChildrenOf(clause).find((node) => node.type === 'block');
  return block === undefined ? undefined : namedChildrenOf(block).filter((node) => !node.isExtra).at(-1);
}

/**
 * `if __name__ == "__main__":` runs its body only when the file is executed as a script,
 * never when svc imports it ('skips-body'); `!=` the other way round ('runs-body').
 */
function mainGuardSense(statement: Node): 'skips-body' | 'runs-body' | null {
  const condition = statement.childForFieldName('condition');
  if (statement.type !== 'if_statement' || condition?.type !== 'comparison_operator') return null;
  const operands = namedChildrenOf(condition);
  const operator = childrenOf(condition).find((child) => !child.isNamed)?.type;
  const isGuard =
    operands.length === 2 &&
    operands.some((operand) => operand.type === 'identifier' && operand.text === '__name__') &&
    operands.some((operand) => readStringLiteral(operand) === '__main__');
  if (!isGuard) return null;
  return operator === '==' ? 'skips-body' : operator === '!=' ? 'runs-body' : null;
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

function dedupeByPosition(statements: PlacedStatement[]): PlacedStatement[] {
  const seen = new Set<string>();
  return statements.filter(({ node }) => {
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
  /** Among the diagnostics, what certainly stops the service: the import fails, or svc start refuses its routes. */
  errors: Diagnostic[];
  /** The names that hold the served app when the import ends (`app`, its aliases). */
  servedNames: Set<string>;
}

/** Records a diagnostic; with `failure`, one that fails the import or svc start, an error too when that is `certain`. */
type Report = (line: number | undefined, message: string, failure?: { certain: boolean }) => void;

function readDeclarations(root: Node, statements: readonly PlacedStatement[], source: string, file: string): Declarations {
  const diagnostics: Diagnostic[] = [];
  const errors: Diagnostic[] = [];
  const report: Report = (line, message, failure) => {
    const diagnostic = { file, line, message };
    diagnostics.push(diagnostic);
    if (failure?.certain === true) errors.push(diagnostic);
  };

  const imports = readToolkitImports(statements.map((statement) => statement.node));
  const trace = traceAppInstances(statements, (call) => appCallKind(call, imports) !== null);
  const argumentsOf = new Map(trace.instances.map((instance) => [instance, readAppArguments(instance, imports, source, report)]));
  const { app, chosen } = describeServedApp(trace, argumentsOf, report);
  const servedInstances = new Set(chosen);
  reportUnservedInstances(trace, app, includedApps(statements, trace.servedNames), report);

  const endpoints: EndpointDeclaration[] = [];
  const routes: PlacedRoute[] = [];
  statements.forEach(({ node: statement, placement }, index) => {
    if (statement.type !== 'decorated_definition') return;
    const definition = statement.childForFieldName('definition');
    if (definition?.type !== 'function_definition') return;
    for (const decorator of namedChildrenOf(statement).filter((node) => node.type === 'decorator')) {
      const route = readRouteDecorator(decorator);
      if (route === null) continue;
      const holds = trace.valuesAt(route.variable, index, placement);
      const instances = instancesIn(holds);
      const isAnApp = instances.length > 0 && instances.length === holds.size;
      // The toolkit refuses a bad path or method on any APIPod, served or not, and so fails the import.
      const registration = { certain: isAnApp && isCertain(placement) };
      const isServed = instances.some((instance) => servedInstances.has(instance));
      if (!isServed && instances.length === 0) {
        if (holds.size === 1 && holds.has(UNBOUND)) reportUnboundApp(route, decorator, source, imports, placement, report);
        else if (route.kind === 'endpoint') report(route.line, unknownAppMessage(route, app));
        continue;
      }
      const endpoint = readEndpoint(route, definition, imports.jobProgressNames, report, registration);
      if (endpoint.path !== null) {
        const onServedApp = isAnApp && instances.every((instance) => servedInstances.has(instance));
        routes.push({ ...endpoint, path: endpoint.path, placement, instance: isAnApp ? instanceKey(instances) : null, onServedApp });
      }
      if (!isServed) {
        report(route.line, `\`@${route.variable}.${route.kind}\` registers on ${describeInstances(instances)}, which svc start does not serve (it serves ${describeApp(app)}): the manifest leaves it out`);
        continue;
      }
      endpoints.push(endpoint);
      if (!isCertain(placement)) {
        report(route.line, `${endpoint.path ?? `\`${endpoint.function}\``} is declared inside an \`if\` or \`try\`: svc start serves it only when the import runs that far, and the manifest lists it all the same`);
      }
    }
  });
  for (const problem of findRouteProblems(routes)) {
    report(problem.line, problem.message, { certain: problem.isCertain });
  }
  reportMissingApp(trace, root, statements, imports, file, report);
  return { app, endpoints, diagnostics, errors, servedNames: trace.servedNames };
}

/**
 * The manifest's app: the served instance, or what the instances of every branch share; when
 * the scan cannot tell, the first instance in the file.
 */
function describeServedApp(
  trace: AppTrace,
  argumentsOf: ReadonlyMap<AppInstance, Record<string, StaticValue>>,
  report: Report,
): { app: AppDeclaration | null; chosen: AppInstance[] } {
  const { served } = trace;
  if (served.kind === 'several') {
    const [first, second] = trace.instances.filter((instance) => served.names.some((name) => instance.names.includes(name)));
    report(
      second?.line ?? first?.line ?? 1,
      `the module makes several APIPod apps (${served.names.join(', ')}) and none is named \`app\`, so svc start cannot choose and the import fails: name the one to serve \`app\``,
      { certain: true },
    );
  }
  const chosen = served.kind === 'instances' ? served.instances : trace.instances.slice(0, 1);
  const [first] = chosen;
  if (first === undefined) return { app: null, chosen };
  const variable = served.kind === 'instances' ? served.variable : (first.names[0] ?? '');
  if (served.kind === 'unknown') {
    report(first.line, `svc cannot tell without running the file which APIPod app svc start serves; the manifest describes \`${variable}\` (line ${first.line})`);
  }
  const [shared, differing] = splitArguments(chosen.map((instance) => argumentsOf.get(instance) ?? {}));
  if (Object.keys(differing).length > 0) {
    const differences = Object.entries(differing).map(([name, values]) => `${name} (${values.map(pythonRepr).join(' or ')})`);
    report(
      first.line,
      `\`${variable}\` is the APIPod of line ${chosen.map((instance) => instance.line).join(' or ')}, whichever branch runs, and its ` +
        `${differences.join(', ')} differ${differences.length === 1 ? 's' : ''} between them: the image leaves ` +
        `${differences.length === 1 ? 'it' : 'them'} to the app rather than fix one`,
    );
  }
  return { app: { variable, line: first.line, arguments: shared, branch_arguments: differing }, chosen };
}

/** APIPod's defaults (python/apipod/app.py, `APIPod.__init__`), against which two branches' arguments compare. */
const APP_DEFAULTS: Readonly<Record<string, StaticValue>> = { title: null, compute: DEFAULT_TARGET.compute, provider: DEFAULT_TARGET.provider, backend: null, lifespan: null };

/** The arguments every branch's APIPod gives alike, and each other one with every branch's value. */
function splitArguments(all: Record<string, StaticValue>[]): [Record<string, StaticValue>, Record<string, StaticValue[]>] {
  const shared: Record<string, StaticValue> = {};
  const differing: Record<string, StaticValue[]> = {};
  for (const name of new Set(all.flatMap((values) => Object.keys(values)))) {
    const values = all.map((values) => (name in values ? (values[name] as StaticValue) : (APP_DEFAULTS[name] ?? null)));
    if (values.every((value) => JSON.stringify(value) === JSON.stringify(values[0]))) {
      if (all.some((values) => name in values)) shared[name] = values[0] as StaticValue;
    } else {
      differing[name] = values;
    }
  }
  return [shared, differing];
}

/** A value as Python writes it: `'serverless'`, `None`, `True`; an expression as written. */
function pythonRepr(value: StaticValue): string {
  if (typeof value === 'string') return `'${value.replace(/\\/gu, '\\\\').replace(/'/gu, "\\'")}'`;
  if (value === null) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'object' && 'expression' in value) return String(value.expression);
  return JSON.stringify(value);
}

/** The names handed to the served app's `include_router(...)` at the module's top level: apps whose endpoints it serves. */
function includedApps(statements: readonly PlacedStatement[], servedNames: ReadonlySet<string>): Set<string> {
  const included = new Set<string>();
  for (const { node } of statements) {
    const call = node.type === 'expression_statement' ? namedChildrenOf(node)[0] : null;
    const callee = call?.type === 'call' ? call.childForFieldName('function') : null;
    if (callee?.type !== 'attribute' || callee.childForFieldName('attribute')?.text !== 'include_router') continue;
    if (!servedNames.has(callee.childForFieldName('object')?.text ?? '')) continue;
    const first = namedChildrenOf(call?.childForFieldName('arguments') ?? node)[0];
    if (first?.type === 'identifier') included.add(first.text);
  }
  return included;
}

/**
 * Instances svc start will not serve: a second app, or one whose name is bound again later.
 * One the served app includes (`app.include_router(core)`) is served through it, which the
 * include_router warning says.
 */
function reportUnservedInstances(trace: AppTrace, app: AppDeclaration | null, included: ReadonlySet<string>, report: Report): void {
  if (trace.served.kind !== 'instances' || app === null) return;
  const served = new Set(trace.served.instances);
  for (const instance of trace.instances.filter((candidate) => !served.has(candidate))) {
    const stillNamed = instance.names.filter((name) => instancesIn(trace.valuesAt(name, Infinity, TOP_LEVEL)).includes(instance));
    if (stillNamed.some((name) => included.has(name))) continue;
    report(
      instance.line,
      stillNamed.length > 0
        ? `\`${stillNamed[0]}\` is another APIPod app: svc start serves only ${describeApp(app)}, as of several it serves the one named \`app\``
        : `the APIPod made here as \`${instance.names.join('`, `')}\` is replaced before the import ends: svc start serves ${describeApp(app)}`,
    );
  }
}

function describeApp(app: AppDeclaration | null): string {
  return app === null ? 'no app' : `\`${app.variable}\` (line ${app.line})`;
}

function describeInstances(instances: readonly AppInstance[]): string {
  return instances.map((instance) => `the APIPod of line ${instance.line}`).join(' or ');
}

/** A key that is the same for the same instance, or the same set of branch alternatives. */
function instanceKey(instances: readonly AppInstance[]): string {
  return instances.map((instance) => instance.call.startIndex).sort((a, b) => a - b).join(',');
}

/**
 * A decorator on a name nothing has bound yet: NameError on import. Certain where the name
 * appears nowhere above it (a `for`, `with ... as` or `except ... as` could bind it unseen)
 * and no star import could bring it in.
 */
function reportUnboundApp(route: RouteDecorator, decorator: Node, source: string, imports: ToolkitImports, placement: Placement, report: Report): void {
  const mentionedAbove = new RegExp(`\\b${route.variable}\\b`, 'u').test(source.slice(0, decorator.startIndex));
  const certain = !mentionedAbove && !imports.foreignNames.has('*') && isCertain(placement);
  report(
    route.line,
    certain
      ? `\`${route.variable}\` is not defined yet here, so the import fails (NameError: name '${route.variable}' is not defined): make the app above its endpoints`
      : `\`@${route.variable}.${route.kind}\` is on \`${route.variable}\`, which is not an APIPod app here as far as svc can see`,
    { certain },
  );
}

function unknownAppMessage(route: RouteDecorator, app: AppDeclaration | null): string {
  return app === null
    ? `\`@${route.variable}.endpoint\` is not on an APIPod app: no \`${route.variable} = APIPod(...)\` found`
    : `\`@${route.variable}.endpoint\` is not on the APIPod app \`${app.variable}\``;
}

/**
 * No APIPod at all: the runtime refuses the module (`find_app`). Certain only where nothing
 * could bring one in: no call of APIPod outside the `__main__` guard, and no name imported
 * from elsewhere (a `from lib import app` could be one).
 */
function reportMissingApp(trace: AppTrace, root: Node, statements: readonly PlacedStatement[], imports: ToolkitImports, file: string, report: Report): void {
  if (trace.served.kind !== 'none' || trace.instances.length > 0) return;
  const importsOthers = statements.some(({ node }) => node.type === 'import_from_statement' && !isToolkitModule(node.childForFieldName('module_name')?.text ?? ''));
  const names = [APP_CONSTRUCTOR, ...imports.constructorNames].join('|');
  const mightMakeOne = new RegExp(`\\b(?:${names})\\b|\\b(?:globals|setattr|exec|eval|vars|__import__)\\s*\\(|__dict__|\\bimportlib\\b`, 'u');
  const certain = !importsOthers && !imports.hasStarImport && !runsOnImport(root).some((node) => mightMakeOne.test(node.text));
  report(
    undefined,
    `${file} creates no APIPod app, so the import fails${certain ? '' : ' unless it gets one in a way svc cannot read'}: add \`app = APIPod()\` and decorate endpoints with @app.endpoint("/path")`,
    { certain },
  );
}

/** The module's statements but its imports, and of an `if __name__ == "__main__":` only the clauses that may run on import. */
function runsOnImport(root: Node): Node[] {
  return namedChildrenOf(root).flatMap((statement) => {
    if (statement.type === 'import_statement' || statement.type === 'import_from_statement' || statement.type === 'future_import_statement') return [];
    if (mainGuardSense(statement) !== 'skips-body') return [statement];
    return namedChildrenOf(statement).filter((clause) => clause.type === 'elif_clause' || clause.type === 'else_clause');
  });
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
      if (namedChildrenOf(statement).some((node) => node.type === 'wildcard_import')) {
        // Only apipod's star brings APIPod in for sure; another module's may bring anything.
        if (isToolkit) imports.hasStarImport = true;
        else imports.foreignNames.add('*');
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

/**
 * `APIPod(...)` as imported (or aliased) from apipod, or `apipod.APIPod(...)`: 'imported'; a
 * bare `APIPod(...)` nothing imports, still meant as the app: 'not imported'; else null.
 */
function appCallKind(call: Node, imports: ToolkitImports): 'imported' | 'not imported' | null {
  const callee = call.childForFieldName('function');
  if (callee?.type === 'identifier') {
    if (imports.constructorNames.has(callee.text)) return 'imported';
    if (callee.text === APP_CONSTRUCTOR && !imports.foreignNames.has(APP_CONSTRUCTOR)) {
      return imports.hasStarImport ? 'imported' : 'not imported';
    }
  }
  const isModuleAttribute =
    callee?.type === 'attribute' &&
    callee.childForFieldName('attribute')?.text === APP_CONSTRUCTOR &&
    imports.moduleNames.has(withoutWhitespace(callee.childForFieldName('object')?.text ?? ''));
  return isModuleAttribute ? 'imported' : null;
}

/**
 * The constructor's arguments by parameter name, and what the toolkit refuses when it runs
 * (python/apipod/app.py, `APIPod.__init__`): a TypeError for an argument too many or given
 * twice, a ValueError for a compute or provider it does not know.
 */
function readAppArguments(instance: AppInstance, imports: ToolkitImports, source: string, report: Report): Record<string, StaticValue> {
  const runs = { certain: isCertain(instance.placement) };
  if (appCallKind(instance.call, imports) === 'not imported') {
    // Certain only when nothing else in the file could bind the name: every mention of it is a call.
    const mentions = source.match(new RegExp(`\\b${APP_CONSTRUCTOR}\\b`, 'gu'))?.length ?? 0;
    const calls = source.match(new RegExp(`\\b${APP_CONSTRUCTOR}\\s*\\(`, 'gu'))?.length ?? 0;
    const certain = runs.certain && mentions === calls && !imports.foreignNames.has('*');
    report(instance.line, `\`${APP_CONSTRUCTOR}\` is not imported${certain ? ", so the import fails (NameError: name 'APIPod' is not defined)" : ''}: add \`from apipod import APIPod\``, { certain });
  }
  const values: Record<string, StaticValue> = {};
  const args = readCallArguments(instance.call);
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
          `\`${shown}\` makes the import fail (TypeError)`,
        runs,
      );
    } else if (args.keywords.has(name)) {
      report(line, `APIPod(...) is given \`${name}\` by position and by keyword, and the import fails (TypeError)`, runs);
    } else {
      values[name] = readStaticValue(argument);
    }
  });
  for (const splat of args.splats) {
    report(splat.startPosition.row + 1, `cannot read APIPod(...) argument \`${sourceText(splat)}\` statically`);
  }
  for (const [name, value] of args.keywords) values[name] = readStaticValue(value);
  for (const [option, allowed] of [['compute', COMPUTE_VALUES], ['provider', PROVIDER_VALUES]] as const) {
    const value = values[option];
    if (typeof value === 'string' && !(allowed as readonly string[]).includes(value)) {
      report(instance.line, `APIPod(${option}='${value}'): ${option} must be one of ${allowed.join(', ')}, and the import fails (ValueError)`, runs);
    }
  }
  return values;
}

/**
 * Endpoints the toolkit registers on import that the scan cannot list, so svc start serves
 * them but the manifest leaves them out; one warning each, saying so:
 * - `app.endpoint` (or `get`, `post`, ...) used where the scan does not read it: in a class
 *   body, a loop or a function, or called directly (`app.endpoint("/x")(predict)`);
 * - a route decorator on a parameter of the function it is in (`def register(pod):
 *   @pod.endpoint(...)`), the app handed in by a call the scan does not follow;
 * - the app handed to a function not defined in this file (`routes.register(app)`);
 * - `app.api_route`, `app.add_api_route` and `app.include_router`, which the scan does not read.
 * Registrations under `if __name__ == "__main__":` are left alone: a worker never runs that block.
 */
function findHiddenRegistrations(root: Node, appNames: ReadonlySet<string>, file: string): Diagnostic[] {
  const found = new Map<number, string>(); // line -> message
  const localFunctions = new Set(
    namedChildrenOf(root)
      .map((statement) => (statement.type === 'decorated_definition' ? statement.childForFieldName('definition') : statement))
      .filter((statement) => statement?.type === 'function_definition')
      .map((definition) => definition?.childForFieldName('name')?.text ?? ''),
  );
  const unread = ' svc cannot read without running the file; svc start serves them, but the manifest leaves them out';
  const pending = namedChildrenOf(root).filter((statement) => mainGuardSense(statement) !== 'skips-body');
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    pending.push(...namedChildrenOf(node));
    const line = node.startPosition.row + 1;
    if (node.type === 'attribute') {
      const object = node.childForFieldName('object')?.text ?? '';
      const method = node.childForFieldName('attribute')?.text ?? '';
      if (appNames.has(object) && UNREAD_REGISTRATIONS.has(method)) {
        found.set(line, `\`${node.text}\` registers endpoints here in a way${unread}: decorate top-level functions with @${object}.endpoint("/path") for the manifest to list them`);
      } else if (appNames.has(object) && ROUTE_DECORATORS.has(method) && isOutOfReach(node)) {
        found.set(
          line,
          `\`${node.text}\` registers an endpoint here that svc cannot read without running the file (inside a class, a loop or a function, or called directly); svc start serves it, but the manifest leaves it out: decorate a top-level function instead`,
        );
      } else if (!appNames.has(object) && ROUTE_DECORATORS.has(method) && isDecorator(node) && isParameterOfEnclosingFunction(node, object)) {
        found.set(line, `\`@${node.text}\` registers an endpoint on \`${object}\`, a parameter of the function it is in: endpoints the app gets that way${unread}`);
      }
    } else if (node.type === 'call') {
      const callee = node.childForFieldName('function');
      const handsOverApp = namedChildrenOf(node.childForFieldName('arguments') ?? node).some(
        (argument) => appNames.has((argument.type === 'keyword_argument' ? argument.childForFieldName('value') : argument)?.text ?? ''),
      );
      const isLocalOrBuiltin = callee?.type === 'identifier' && (localFunctions.has(callee.text) || NON_REGISTERING_CALLS.has(callee.text));
      const onTheApp = callee?.type === 'attribute' && appNames.has(callee.childForFieldName('object')?.text ?? '');
      if (handsOverApp && !isLocalOrBuiltin && !onTheApp) {
        found.set(line, `\`${firstLineOf(node.text)}\` hands the app to a function defined elsewhere, which may register endpoints${unread}`);
      }
    }
  }
  return [...found].map(([line, message]) => ({ file, line, message }));
}

/** `@x.endpoint` or `@x.endpoint(...)`. */
function isDecorator(attribute: Node): boolean {
  const parent = attribute.parent;
  return parent?.type === 'decorator' || (parent?.type === 'call' && parent.parent?.type === 'decorator');
}

/** `name` is a parameter of a function that `node` is inside. */
function isParameterOfEnclosingFunction(node: Node, name: string): boolean {
  for (let up = node.parent; up !== null; up = up.parent) {
    if (up.type !== 'function_definition') continue;
    const parameters = namedChildrenOf(up.childForFieldName('parameters') ?? up);
    const names = parameters.map((parameter) => (parameter.type === 'identifier' ? parameter : parameter.childForFieldName('name') ?? namedChildrenOf(parameter)[0])?.text);
    if (names.includes(name)) return true;
  }
  return false;
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
  const expression = namedChildrenOf(decorator).find((node) => !node.isExtra);
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
  registration: { certain: boolean },
): EndpointDeclaration {
  const body = definition.childForFieldName('body');
  const returns = definition.childForFieldName('return_type');
  const parameters = definition.childForFieldName('parameters');
  const functionName = definition.childForFieldName('name')?.text ?? '';
  const args = route.call === null ? null : readCallArguments(route.call);
  checkRouteArguments(route, args, report, registration);
  return {
    path: readRoutePath(route, args, functionName, report, registration),
    methods: readRouteMethods(route, args, report, registration),
    function: functionName,
    line: definition.startPosition.row + 1,
    isAsync: childrenOf(definition).some((child) => child.type === 'async'),
    isGenerator: body !== null && containsYield(body),
    parameters: parameters === null ? [] : readParameters(parameters, jobProgressNames),
    returns: returns === null ? null : sourceText(returns),
  };
}

/**
 * The decorator's own signature (python/apipod/app.py): `endpoint(path, methods, **options)`,
 * `get(path, **options)` and `post(path, **options)`, which set `methods` themselves. Python
 * raises TypeError for an argument given twice or one too many.
 */
function checkRouteArguments(route: RouteDecorator, args: CallArguments | null, report: Report, registration: { certain: boolean }): void {
  if (args === null || args.splats.length > 0) return;
  const decorator = `@${route.variable}.${route.kind}`;
  const fixed = ROUTE_DECORATORS.get(route.kind) ?? null;
  const positional = fixed === null ? ['path', 'methods'] : ['path'];
  if (args.positional.length > positional.length) {
    report(route.line, `\`${decorator}\` takes at most ${positional.length} positional argument${positional.length === 1 ? '' : 's'} (${positional.join(', ')}), and the import fails (TypeError)`, registration);
  }
  for (const name of positional.slice(0, args.positional.length).filter((name) => args.keywords.has(name))) {
    report(route.line, `\`${decorator}\` is given \`${name}\` by position and by keyword, and the import fails (TypeError: got multiple values for argument '${name}')`, registration);
  }
  if (fixed !== null && args.keywords.has('methods')) {
    report(
      route.line,
      `\`${decorator}\` sets its own method (${fixed.join(', ')}), so its \`methods=\` fails the import (TypeError: got multiple values for keyword argument 'methods'): ` +
        `use \`@${route.variable}.endpoint(..., methods=[...])\``,
      registration,
    );
  }
}

/** The toolkit serves an endpoint declared without a path (or with `""` or `None`: `path or name`) at `/<function name>`. */
function readRoutePath(route: RouteDecorator, args: CallArguments | null, functionName: string, report: Report, registration: { certain: boolean }): string | null {
  const decorator = `@${route.variable}.${route.kind}`;
  const pathNode = args?.positional[0] ?? args?.keywords.get('path');
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
    report(route.line, `${path}: path parameters are not supported, and the import fails (ValueError); take them as parameters of the function`, registration);
  }
  // The toolkit prefixes a missing "/" itself (python/apipod/app.py, `_normalise_path`).
  return path.startsWith('/') ? path : `/${path}`;
}

/** As the toolkit reads `methods=` (python/apipod/app.py, `_normalise_methods`): upper-cased, each once, refused when unknown or none. */
function readRouteMethods(route: RouteDecorator, args: CallArguments | null, report: Report, registration: { certain: boolean }): string[] {
  const fixed = ROUTE_DECORATORS.get(route.kind) ?? null;
  if (fixed !== null) return [...fixed];
  const methodsNode = args?.positional[1] ?? args?.keywords.get('methods');
  if (methodsNode === undefined) return [...DEFAULT_METHODS];
  const value = readStaticValue(methodsNode);
  const names = typeof value === 'string' ? [value] : Array.isArray(value) ? value : null;
  if (names === null || names.some((name) => typeof name === 'object' && name !== null)) {
    report(route.line, `cannot read methods statically: \`${sourceText(methodsNode)}\`; assuming ${DEFAULT_METHODS.join(', ')}`);
    return [...DEFAULT_METHODS];
  }
  const methods: string[] = [];
  for (const name of names) {
    const method = typeof name === 'string' ? name.toUpperCase() : name;
    const isFirstRefused = methods.every((known) => (HTTP_METHODS as readonly string[]).includes(known));
    if (isFirstRefused && (typeof method !== 'string' || !(HTTP_METHODS as readonly string[]).includes(method))) {
      const several = typeof name === 'string' && name.includes(',') ? ' (several are a list: methods=["GET", "POST"])' : '';
      report(route.line, `methods: ${pythonRepr(name)} is not an HTTP method svc serves (${HTTP_METHODS.join(', ')})${several}, and the import fails (ValueError)`, registration);
    }
    const written = typeof method === 'string' ? method : pythonRepr(method);
    if (!methods.includes(written)) methods.push(written);
  }
  if (methods.length === 0) {
    report(route.line, 'methods: the list is empty, and the import fails (ValueError): name at least one HTTP method, or leave methods out for POST', registration);
  }
  return methods;
}

// ---------------------------------------------------------------------------------------------
// Function signatures

/** FastAPI's parameter markers, which the toolkit reads as defaults (python/apipod/_runtime/signature.py, `_default_of`). */
const FASTAPI_MARKERS: ReadonlySet<string> = new Set(['File', 'Form', 'Body', 'Query', 'Header', 'Cookie', 'Path']);

/** `File(...)`, `fastapi.Form(...)`: a marker whose default is `...`, which a client must send. */
function isRequiredFastApiMarker(node: Node): boolean {
  if (node.type !== 'call') return false;
  const callee = node.childForFieldName('function')?.text ?? '';
  const first = namedChildrenOf(node.childForFieldName('arguments') ?? node)[0];
  return FASTAPI_MARKERS.has(callee.split('.').at(-1) ?? '') && first?.type === 'ellipsis';
}

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
      required: (shape.default === null || isRequiredFastApiMarker(shape.default)) && shape.splat === null,
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
