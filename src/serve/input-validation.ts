import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { isJsonObject, type Value } from '../worker/protocol.js';
import { fieldPath, HttpError, type FieldProblem } from './http-error.js';

export type Arguments = { [parameter: string]: Value };

/** Checks call arguments against an endpoint's JSON Schema, the gateway's half of the contract. */
export interface InputValidator {
  (input: unknown): Arguments;
}

/**
 * Compiles an endpoint's input schema once. JSON bodies are checked as sent; query strings
 * (GET) and form fields arrive as text, so those are coerced to the schema's types first
 * ("3" -> 3) by a second compiler with coercion on (boolean words: endpoint-inputs.ts).
 * That one is compiled on its first use: most services are called with JSON alone, and each
 * compile is a few milliseconds of every start (the schema compiled as JSON already, so it
 * cannot fail later).
 */
export function compileValidators(inputSchema: { [key: string]: Value }): { json: InputValidator; text: InputValidator } {
  const schema = boundIntegers(inputSchema) as { [key: string]: Value };
  let text: InputValidator | null = null;
  return { json: validatorFrom(strict.compile(schema)), text: (input) => (text ??= validatorFrom(coercing.compile(schema)))(input) };
}

/** Keys whose values are data, not schemas. */
const DATA_KEYWORDS = new Set(['default', 'examples', 'const', 'enum']);

/**
 * The schema with every integer bounded by ±(2^53 - 1): past that, a JSON number loses
 * digits as the gateway reads it, and a seed or an id would reach the function changed.
 */
function boundIntegers(schema: Value): Value {
  if (Array.isArray(schema)) return schema.map(boundIntegers);
  if (!isJsonObject(schema)) return schema;
  const bounded: { [key: string]: Value } = {};
  for (const [key, value] of Object.entries(schema)) bounded[key] = DATA_KEYWORDS.has(key) ? value : boundIntegers(value);
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.includes('integer')) {
    bounded.maximum = typeof schema.maximum === 'number' ? Math.min(schema.maximum, Number.MAX_SAFE_INTEGER) : Number.MAX_SAFE_INTEGER;
    bounded.minimum = typeof schema.minimum === 'number' ? Math.max(schema.minimum, Number.MIN_SAFE_INTEGER) : Number.MIN_SAFE_INTEGER;
  }
  return bounded;
}

function createAjv(coerceTypes: boolean): Ajv2020 {
  // verbose: an anyOf error then carries its branches, which describeAnyOf counts.
  // validateFormats: false: a string's format (a date, a UUID, a pydantic model's email) is
  // checked where the value is converted, in the worker, which answers 422 naming the field;
  // Ajv without its formats would log "unknown format ignored" for each.
  // validateSchema: false: the schemas are svc's own (the worker's endpoint descriptions), and
  // checking them against JSON Schema's meta-schema compiled that too: ~25 ms of every start.
  const ajv = new Ajv2020({ allErrors: true, verbose: true, strict: false, validateFormats: false, validateSchema: false, coerceTypes: coerceTypes ? 'array' : false });
  ajv.addKeyword('x-media-type');
  return ajv;
}

const strict = createAjv(false);
const coercing = createAjv(true);

function validatorFrom(validate: ValidateFunction): InputValidator {
  return (input) => {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) {
      throw new HttpError(422, 'validation_error', 'invalid_input', 'the input must be a JSON object of parameters', {
        detail: [{ field: '', message: 'expected an object' }],
      });
    }
    if (validate(input)) return input as Arguments;
    const detail = describeProblems(validate.errors ?? []);
    const summary = detail.map((problem) => (problem.field ? `${problem.field}: ${problem.message}` : problem.message));
    throw new HttpError(422, 'validation_error', 'invalid_input', `invalid input: ${summary.join('; ')}`, { detail });
  };
}

/** One problem per field, in words, with the field's path as `a.b[0]`. */
export function describeProblems(errors: readonly ErrorObject[]): FieldProblem[] {
  const branchesByAnyOf = new Map(errors.filter((error) => error.keyword === 'anyOf').map((anyOf) => [anyOf, branchesOf(anyOf, errors)]));
  const toldWithAnAnyOf = new Set([...branchesByAnyOf.values()].flat(2));
  const problems: FieldProblem[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    if (toldWithAnAnyOf.has(error)) continue;
    const branches = branchesByAnyOf.get(error);
    for (const problem of branches ? describeAnyOf(error, branches) : [describeProblem(error)]) {
      const key = `${problem.field}\u0000${problem.message}`;
      if (!seen.has(key)) {
        seen.add(key);
        problems.push(problem);
      }
    }
  }
  return problems;
}

/**
 * The errors each branch of an anyOf reported: ajv lists them just before the anyOf.
 * Errors inside a referenced schema ($ref, a pydantic model) carry that schema's path, not
 * the branch's; they belong to the one branch that reported nothing under its own path.
 */
function branchesOf(anyOf: ErrorObject, errors: readonly ErrorObject[]): ErrorObject[][] {
  const branches: ErrorObject[][] = Array.from({ length: Array.isArray(anyOf.schema) ? anyOf.schema.length : 0 }, () => []);
  const referenced: ErrorObject[] = [];
  for (let index = errors.indexOf(anyOf) - 1; index >= 0; index--) {
    const error = errors[index]!;
    if (error.instancePath !== anyOf.instancePath && !error.instancePath.startsWith(`${anyOf.instancePath}/`)) break;
    if (error.schemaPath.startsWith(`${anyOf.schemaPath}/`)) {
      branches[Number(error.schemaPath.slice(anyOf.schemaPath.length + 1).split('/')[0])]?.unshift(error);
    } else {
      referenced.unshift(error);
    }
  }
  const silent = branches.filter((branch) => branch.length === 0);
  if (silent.length === 1) silent[0]!.push(...referenced);
  return branches;
}

/**
 * An anyOf (Optional[X], a Union) that no branch matched. When the value's type fits no
 * branch: "must be an integer or null". When it fits one branch's type, that branch's own
 * problems (`stop[0]: must be a string` for Optional[list[str]]). Otherwise it says so plainly.
 */
function describeAnyOf(anyOf: ErrorObject, branches: ErrorObject[][]): FieldProblem[] {
  const field = pathOf(anyOf.instancePath);
  const isWrongType = (branch: ErrorObject[]) =>
    branch.length > 0 && branch.every((error) => error.keyword === 'type' && error.instancePath === anyOf.instancePath);
  const wrongType = branches.filter(isWrongType);
  if (branches.length > 0 && wrongType.length === branches.length) {
    const types = wrongType.flatMap((branch) => branch.map((error) => String((error.params as { type: string }).type)));
    return [{ field, message: `must be ${article([...new Set(types)].join(','))}` }];
  }
  const fitting = branches.filter((branch) => !isWrongType(branch));
  if (fitting.length === 1 && fitting[0]!.length > 0) return describeProblems(fitting[0]!);
  return [{ field, message: 'does not match any of the allowed types' }];
}

function describeProblem(error: ErrorObject): FieldProblem {
  const base = pathOf(error.instancePath);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return { field: fieldPath([String(params.missingProperty)], base), message: 'is required' };
    case 'additionalProperties':
      return { field: fieldPath([String(params.additionalProperty)], base), message: 'is not a parameter of this endpoint' };
    case 'type':
      return { field: base, message: `must be ${article(String(params.type))}` };
    case 'enum':
      return { field: base, message: `must be one of ${(params.allowedValues as unknown[]).map((value) => JSON.stringify(value)).join(', ')}` };
    case 'const':
      return { field: base, message: `must be ${JSON.stringify(params.allowedValue)}` };
    case 'maximum':
    case 'minimum':
      if (Math.abs(params.limit as number) === Number.MAX_SAFE_INTEGER) {
        return { field: base, message: `is beyond ${params.limit as number}, past which JSON numbers lose digits; take it as a str parameter` };
      }
      return { field: base, message: error.message ?? 'is out of range' };
    case 'minItems':
      return { field: base, message: params.limit === 1 ? 'must not be empty' : `must have at least ${String(params.limit)} items` };
    default:
      return { field: base, message: error.message ?? 'is invalid' };
  }
}

/** `/items/0/name` -> `items[0].name`. */
function pathOf(instancePath: string): string {
  const keys = instancePath
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
  return fieldPath(keys.map((key) => (/^\d+$/.test(key) ? Number(key) : key)));
}

function article(types: string): string {
  return types
    .split(',')
    .map((type) => (type === 'null' ? 'null' : type === 'integer' || type === 'object' || type === 'array' ? `an ${type}` : `a ${type}`))
    .join(' or ');
}
