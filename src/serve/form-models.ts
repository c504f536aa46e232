import type { Value } from '../worker/protocol.js';
import type { EndpointInputs } from './endpoint-inputs.js';

type JsonObject = { [key: string]: Value };

/**
 * A form's fields with a pydantic model parameter's fields gathered into it, as FastAPI reads
 * a form into a model (its "form models", which the apipod package serves: `def f(order:
 * Options)` takes `pam1=x&pam2=3`, and its OpenAPI document gives the model as the form's
 * schema). A field is gathered when it is no parameter of the endpoint itself and the model
 * parameter was not sent whole (as JSON text). A required model parameter whose fields all
 * have defaults, sent no field at all, gets `{}`, which the worker fills with the defaults,
 * as FastAPI does. JSON bodies are left alone: there a model is one object.
 */
export function gatherFormModels(fields: JsonObject, inputs: Pick<EndpointInputs, 'parameters' | 'required'>): JsonObject {
  const gathered: JsonObject = { ...fields };
  for (const [parameter, { formModel }] of inputs.parameters) {
    if (parameter in fields || formModel === null) continue;
    const names = formModel.fields.filter((name) => name in gathered && !inputs.parameters.has(name));
    if (names.length === 0) {
      if (inputs.required.has(parameter) && !formModel.requiresField) gathered[parameter] = {};
      continue;
    }
    gathered[parameter] = Object.fromEntries(names.map((name) => [name, gathered[name] as Value]));
    for (const name of names) delete gathered[name];
  }
  return gathered;
}
