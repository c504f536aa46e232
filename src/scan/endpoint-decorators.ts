import type { Node } from 'web-tree-sitter';
import { HTTP_METHODS } from '../http-methods.js';
import { instancesIn, UNBOUND, type AppInstance } from './app-instances.js';
import { describeApp, type AppDeclaration, type AppResolution } from './app-resolution.js';
import type { Report } from './diagnostic.js';
import { containsYield, readParameters, type ParameterDeclaration } from './function-signature.js';
import { pythonRepr, readCallArguments, readStaticValue, readStringLiteral, sourceText, type CallArguments } from './python-literals.js';
import type { PlacedRoute } from './route-rules.js';
import { isCertain, type Placement, type PlacedStatement } from './statement-placement.js';
import { childrenOf, namedChildrenOf } from './syntax-nodes.js';
import type { ToolkitImports } from './toolkit-imports.js';

/** The endpoints the route decorators on top-level functions declare, and what the toolkit refuses in their arguments. */

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

/**
 * The toolkit's route decorators and the methods each one fixes (null: read `methods=`, else POST).
 * Source: socaity/apipod, apipod/engine/backend/fastapi/router.py (`endpoint`, `get`, `post`) and
 * apipod/engine/endpoint_config.py (`active_methods`: POST when `methods` is None); `put`,
 * `patch` and `delete` are FastAPI's APIRouter's, which upstream's APIPod is (svc's app has them).
 */
export const ROUTE_DECORATORS: ReadonlyMap<string, readonly string[] | null> = new Map([
  ['endpoint', null],
  ['get', ['GET']],
  ['post', ['POST']],
  ['put', ['PUT']],
  ['patch', ['PATCH']],
  ['delete', ['DELETE']],
]);
const DEFAULT_METHODS: readonly string[] = ['POST'];

/**
 * The served app's endpoints, in source order, and every route the file registers on an APIPod
 * (served or not, for route-rules.ts); a route on something else, or on another app, is reported.
 */
export function readEndpoints(
  statements: readonly PlacedStatement[],
  { app, trace, servedInstances, imports }: AppResolution,
  source: string,
  report: Report,
): { endpoints: EndpointDeclaration[]; routes: PlacedRoute[] } {
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
  return { endpoints, routes };
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
