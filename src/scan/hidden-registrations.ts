import type { Node } from 'web-tree-sitter';
import { mainGuardSense } from './block-flattening.js';
import type { Diagnostic } from './diagnostic.js';
import { ROUTE_DECORATORS } from './endpoint-decorators.js';
import { firstLineOf } from './python-literals.js';
import { namedChildrenOf } from './syntax-nodes.js';

/**
 * The app's other ways to register endpoints (FastAPI's APIRouter's, which upstream's APIPod is;
 * python/apipod/app.py), which the scan does not read: `api_route(path, methods)` as a decorator,
 * `add_api_route(path, function)`, `include_router(other_app, prefix=...)`.
 */
const UNREAD_REGISTRATIONS: ReadonlySet<string> = new Set(['api_route', 'add_api_route', 'include_router']);
/** Builtins that take the app without registering anything on it. */
const NON_REGISTERING_CALLS: ReadonlySet<string> = new Set(['print', 'isinstance', 'id', 'type', 'repr', 'str', 'hasattr', 'getattr', 'dir', 'vars']);

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
export function findHiddenRegistrations(root: Node, appNames: ReadonlySet<string>, file: string): Diagnostic[] {
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
