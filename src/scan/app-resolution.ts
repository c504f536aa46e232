import type { Node } from 'web-tree-sitter';
import { COMPUTE_VALUES, DEFAULT_TARGET, PROVIDER_VALUES } from '../deployment-target.js';
import { instancesIn, traceAppInstances, type AppInstance, type AppTrace } from './app-instances.js';
import { mainGuardSense } from './block-flattening.js';
import type { Report } from './diagnostic.js';
import { pythonRepr, readCallArguments, readStaticValue, sourceText, type StaticValue } from './python-literals.js';
import { isCertain, TOP_LEVEL, type PlacedStatement } from './statement-placement.js';
import { namedChildrenOf } from './syntax-nodes.js';
import { APP_CONSTRUCTOR, appCallKind, isToolkitModule, readToolkitImports, type ToolkitImports } from './toolkit-imports.js';

/**
 * The APIPod app svc start serves (app-instances.ts traces the names), its constructor's
 * arguments and what the toolkit refuses in them, and the apps it does not serve.
 */

/** The parameters APIPod(...) fills from positional arguments, in order (python/apipod/app.py, `APIPod.__init__`). */
const APP_POSITIONAL_PARAMETERS: readonly string[] = ['title', 'compute', 'provider', 'backend', 'lifespan'];

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

/** Which APIPod instance each name holds where, the one svc start serves, and what the file imports to make them. */
export interface AppResolution {
  /** The manifest's app. */
  app: AppDeclaration | null;
  trace: AppTrace;
  servedInstances: ReadonlySet<AppInstance>;
  imports: ToolkitImports;
}

/** Traces the module's APIPod instances and reads the served one; reports bad constructor arguments and apps svc start leaves out. */
export function resolveServedApp(statements: readonly PlacedStatement[], source: string, report: Report): AppResolution {
  const imports = readToolkitImports(statements.map((statement) => statement.node));
  const trace = traceAppInstances(statements, (call) => appCallKind(call, imports) !== null);
  const argumentsOf = new Map(trace.instances.map((instance) => [instance, readAppArguments(instance, imports, source, report)]));
  const { app, chosen } = describeServedApp(trace, argumentsOf, report);
  reportUnservedInstances(trace, app, includedApps(statements, trace.servedNames), report);
  return { app, trace, servedInstances: new Set(chosen), imports };
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

export function describeApp(app: AppDeclaration | null): string {
  return app === null ? 'no app' : `\`${app.variable}\` (line ${app.line})`;
}

/**
 * No APIPod at all: the runtime refuses the module (`find_app`). Certain only where nothing
 * could bring one in: no call of APIPod outside the `__main__` guard, and no name imported
 * from elsewhere (a `from lib import app` could be one).
 */
export function reportMissingApp(trace: AppTrace, root: Node, statements: readonly PlacedStatement[], imports: ToolkitImports, file: string, report: Report): void {
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
