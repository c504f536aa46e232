import type { Node } from 'web-tree-sitter';
import { areExclusive, runsBefore, TOP_LEVEL, type Placement, type PlacedStatement } from './statement-placement.js';

/**
 * Which APIPod instance each module-level name may hold at each statement, as Python runs the
 * module's top level: a name is rebound by a later assignment (`app = APIPod(...)` twice), an
 * alias shares its instance (`api = app`, `app = service = APIPod()`), and each arm of an `if`
 * may bind it differently. From the names at the end of the import follows the app the runtime
 * serves (python/apipod/_runtime/service_loader.py, `find_app`): the module's one APIPod instance, or of
 * several the one named `app`.
 */

export interface AppInstance {
  /** The `APIPod(...)` call. */
  call: Node;
  /** 1-based. */
  line: number;
  /** The names the statement that makes it binds it to, in order. */
  names: string[];
  placement: Placement;
}

/** Bound to something the scan cannot tell is an APIPod or not (`create_app()`, an import, a `def`). */
export const UNKNOWN = 'unknown';
/** Not bound at all yet. */
export const UNBOUND = 'unbound';
export type NameValue = AppInstance | typeof UNKNOWN | typeof UNBOUND;

export type ServedApp =
  /** The one instance, or (several) the one each arm of an `if` makes. */
  | { kind: 'instances'; instances: AppInstance[]; variable: string }
  /** No name holds an APIPod instance when the import ends, as far as the scan can see. */
  | { kind: 'none' }
  /** Certainly several instances and none named `app`: the runtime refuses to choose. */
  | { kind: 'several'; names: string[] }
  /** The names hold values the scan cannot read (a factory, a rebinding it cannot follow). */
  | { kind: 'unknown' };

export interface AppTrace {
  instances: AppInstance[];
  /** What `name` may hold just before the statement at `index` runs. */
  valuesAt(name: string, index: number, placement: Placement): Set<NameValue>;
  served: ServedApp;
  /** The names that may hold a served instance at the end of the import (`app`, its aliases). */
  servedNames: Set<string>;
}

const SERVED_NAME = 'app';

interface Binding {
  name: string;
  index: number;
  placement: Placement;
  values: Set<NameValue>;
}

/** `isAppCall` tells an `APIPod(...)` call, as the toolkit's imports name it. */
export function traceAppInstances(statements: readonly PlacedStatement[], isAppCall: (call: Node) => boolean): AppTrace {
  const bindings = new Map<string, Binding[]>();
  const instances: AppInstance[] = [];

  const valuesAt = (name: string, index: number, placement: Placement): Set<NameValue> => {
    const values = new Set<NameValue>();
    const earlier = (bindings.get(name) ?? []).filter((binding) => binding.index < index);
    for (const binding of earlier.reverse()) {
      if (areExclusive(binding.placement, placement)) continue;
      binding.values.forEach((value) => values.add(value));
      // A binding that has surely run by then hides every earlier one.
      if (runsBefore(binding.placement, placement)) return values;
    }
    values.add(UNBOUND);
    return values;
  };

  statements.forEach(({ node, placement }, index) => {
    for (const { names, value } of bindingsOf(node)) {
      let values: Set<NameValue>;
      if (value?.type === 'call' && isAppCall(value)) {
        const instance: AppInstance = { call: value, line: node.startPosition.row + 1, names, placement };
        instances.push(instance);
        values = new Set([instance]);
      } else if (value?.type === 'identifier') {
        values = valuesAt(value.text, index, placement);
        // `api = app` where `app` was never bound fails on import; it binds nothing the runtime serves.
        values.delete(UNBOUND);
        if (values.size === 0) values.add(UNKNOWN);
      } else {
        values = new Set([UNKNOWN]);
      }
      for (const name of names) {
        const list = bindings.get(name) ?? [];
        list.push({ name, index, placement, values });
        bindings.set(name, list);
      }
    }
  });

  const end = statements.length;
  const atEnd = (name: string) => valuesAt(name, end, TOP_LEVEL);
  const served = chooseServed(atEnd, [...bindings.keys()]);
  const servedSet = new Set(served.kind === 'instances' ? served.instances : []);
  const servedNames = new Set([...bindings.keys()].filter((name) => [...atEnd(name)].some((value) => servedSet.has(value as AppInstance))));
  return { instances, valuesAt, served, servedNames };
}

/** The runtime's choice among the names bound when the import ends (`find_app`). */
function chooseServed(atEnd: (name: string) => Set<NameValue>, names: string[]): ServedApp {
  const named = atEnd(SERVED_NAME);
  const namedInstances = instancesIn(named);
  if (named.has(UNKNOWN)) return { kind: 'unknown' };
  // `app` bound in an `if` only: when it is bound, it is the one; when not, nothing is served.
  if (namedInstances.length > 0) return { kind: 'instances', instances: namedInstances, variable: SERVED_NAME };
  const holders = names.filter((name) => instancesIn(atEnd(name)).length > 0);
  const distinct = [...new Set(holders.flatMap((name) => instancesIn(atEnd(name))))];
  const [first] = holders;
  if (first === undefined) return { kind: 'none' };
  if (distinct.length === 1 || holders.length === 1) return { kind: 'instances', instances: distinct, variable: first };
  const everyOneCertain = holders.every((name) => atEnd(name).size === 1);
  return everyOneCertain ? { kind: 'several', names: holders } : { kind: 'unknown' };
}

/** The instances among the values, in source order. */
export function instancesIn(values: Set<NameValue>): AppInstance[] {
  return [...values].filter((value): value is AppInstance => typeof value !== 'string').sort((a, b) => a.call.startIndex - b.call.startIndex);
}

/** The names a module-level statement binds, each with the expression it binds them to (null: not an expression the scan reads). */
function bindingsOf(statement: Node): Array<{ names: string[]; value: Node | null }> {
  switch (statement.type) {
    case 'expression_statement': {
      const [expression] = partsOf(statement);
      return expression === undefined ? [] : expressionBindings(expression);
    }
    case 'decorated_definition': {
      const name = statement.childForFieldName('definition')?.childForFieldName('name')?.text;
      return name === undefined ? [] : [{ names: [name], value: null }];
    }
    case 'function_definition':
    case 'class_definition': {
      const name = statement.childForFieldName('name')?.text;
      return name === undefined ? [] : [{ names: [name], value: null }];
    }
    case 'import_statement':
    case 'import_from_statement':
      return statement.childrenForFieldName('name').flatMap((name) => {
        const local = name?.type === 'aliased_import' ? name.childForFieldName('alias')?.text : name?.text.split('.')[0];
        return local === undefined ? [] : [{ names: [local], value: null }];
      });
    default:
      return [];
  }
}

/** `a = b = value`, `a: T = value`, `(a := value)`, `a += value`, `a, b = value`. */
function expressionBindings(expression: Node): Array<{ names: string[]; value: Node | null }> {
  let node: Node | null = expression;
  while (node?.type === 'parenthesized_expression') node = partsOf(node)[0] ?? null;
  if (node?.type === 'named_expression') {
    const name = node.childForFieldName('name')?.text;
    return name === undefined ? [] : [{ names: [name], value: node.childForFieldName('value') }];
  }
  if (node?.type === 'augmented_assignment') {
    return identifiersIn(node.childForFieldName('left')).map((name) => ({ names: [name], value: null }));
  }
  const names: string[] = [];
  const unread: string[] = [];
  let value: Node | null = null;
  for (let assignment = node; assignment?.type === 'assignment'; assignment = value) {
    const target = assignment.childForFieldName('left');
    value = assignment.childForFieldName('right');
    if (target?.type === 'identifier') names.push(target.text);
    else unread.push(...identifiersIn(target));
  }
  if (value === null) return []; // `app: APIPod` annotates without binding
  return [
    ...(names.length > 0 ? [{ names, value }] : []),
    ...unread.map((name) => ({ names: [name], value: null })),
  ];
}

function identifiersIn(target: Node | null): string[] {
  if (target === null) return [];
  if (target.type === 'identifier') return [target.text];
  if (!['pattern_list', 'tuple_pattern', 'list_pattern', 'list_splat_pattern', 'parenthesized_expression', 'expression_list', 'tuple'].includes(target.type)) return [];
  return partsOf(target).flatMap(identifiersIn);
}

function partsOf(node: Node): Node[] {
  return node.namedChildren.filter((child): child is Node => child !== null && !child.isExtra);
}
