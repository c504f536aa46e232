import type { Node } from 'web-tree-sitter';
import { sourceText } from './python-literals.js';
import { childrenOf, namedChildrenOf } from './syntax-nodes.js';

/** An endpoint function's parameters as the toolkit reads them, and whether it is a generator. */

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

/** FastAPI's parameter markers, which the toolkit reads as defaults (python/apipod/_runtime/signature.py, `_default_of`). */
const FASTAPI_MARKERS: ReadonlySet<string> = new Set(['File', 'Form', 'Body', 'Query', 'Header', 'Cookie', 'Path']);

/** `File(...)`, `fastapi.Form(...)`: a marker whose default is `...`, which a client must send. */
function isRequiredFastApiMarker(node: Node): boolean {
  if (node.type !== 'call') return false;
  const callee = node.childForFieldName('function')?.text ?? '';
  const first = namedChildrenOf(node.childForFieldName('arguments') ?? node)[0];
  return FASTAPI_MARKERS.has(callee.split('.').at(-1) ?? '') && first?.type === 'ellipsis';
}

export function readParameters(parameters: Node, jobProgressNames: ReadonlySet<string>): ParameterDeclaration[] {
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

export function containsYield(node: Node): boolean {
  return childrenOf(node).some(
    (child) => child.type === 'yield' || (!OWN_SCOPES.has(child.type) && containsYield(child)),
  );
}
