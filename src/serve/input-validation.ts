import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import type { EndpointReport, Value } from '../worker/protocol.js';
import { HttpError, type FieldProblem } from './http-error.js';

export type Arguments = { [parameter: string]: Value };

/** Checks call arguments against an endpoint's JSON Schema, the gateway's half of the contract. */
export interface InputValidator {
  (input: unknown): Arguments;
}

/**
 * Compiles one validator per endpoint. JSON bodies are checked as sent; query strings
 * (GET) and multipart form fields arrive as text, so those are coerced to the schema's
 * types first ("3" -> 3) by a second compiler with coercion on.
 */
export function compileValidators(endpoint: EndpointReport): { json: InputValidator; text: InputValidator } {
  return {
    json: validatorFrom(strict.compile(endpoint.input_schema)),
    text: validatorFrom(coercing.compile(endpoint.input_schema)),
  };
}

function createAjv(coerceTypes: boolean): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: false, coerceTypes: coerceTypes ? 'array' : false });
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
  const problems: FieldProblem[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    // anyOf reports each failed branch, then itself; the summary line is enough.
    if (errors.some((other) => other !== error && other.keyword === 'anyOf' && error.schemaPath.startsWith(other.schemaPath.replace(/\/anyOf$/, '/anyOf/')))) {
      continue;
    }
    const problem = describeProblem(error);
    const key = `${problem.field}\u0000${problem.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      problems.push(problem);
    }
  }
  return problems;
}

function describeProblem(error: ErrorObject): FieldProblem {
  const base = pathOf(error.instancePath);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return { field: join(base, String(params.missingProperty)), message: 'is required' };
    case 'additionalProperties':
      return { field: join(base, String(params.additionalProperty)), message: 'is not a parameter of this endpoint' };
    case 'type':
      return { field: base, message: `must be ${article(String(params.type))}` };
    case 'enum':
      return { field: base, message: `must be one of ${(params.allowedValues as unknown[]).map((value) => JSON.stringify(value)).join(', ')}` };
    case 'const':
      return { field: base, message: `must be ${JSON.stringify(params.allowedValue)}` };
    case 'anyOf':
      return { field: base, message: 'does not match any of the allowed types' };
    default:
      return { field: base, message: error.message ?? 'is invalid' };
  }
}

/** `/items/0/name` -> `items[0].name`. */
function pathOf(instancePath: string): string {
  return instancePath
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((path, segment) => (/^\d+$/.test(segment) ? `${path}[${segment}]` : join(path, segment)), '');
}

function join(base: string, field: string): string {
  return base ? `${base}.${field}` : field;
}

function article(types: string): string {
  return types
    .split(',')
    .map((type) => (type === 'null' ? 'null' : type === 'integer' || type === 'object' || type === 'array' ? `an ${type}` : `a ${type}`))
    .join(' or ');
}
