import { describe, expect, it } from 'vitest';
import { compileEndpointInputs } from '../../src/serve/endpoint-inputs.js';
import { gatherFormModels } from '../../src/serve/form-models.js';
import type { Value } from '../../src/worker/protocol.js';

const schema: { [key: string]: Value } = {
  type: 'object',
  properties: {
    order: { $ref: '#/$defs/MoreParams' },
    maybe: { anyOf: [{ $ref: '#/$defs/Needs' }, { type: 'null' }], default: null },
    count: { type: 'integer' },
  },
  required: ['order', 'count'],
  $defs: {
    MoreParams: { type: 'object', properties: { pam1: { type: 'string' }, pam2: { type: 'integer' } } },
    Needs: { type: 'object', properties: { size: { type: 'integer' }, count: { type: 'integer' } }, required: ['size'] },
  },
};

const inputs = compileEndpointInputs({ input_schema: schema, body_parameter: null });

describe('a form read into pydantic model parameters, as FastAPI form models read it', () => {
  it('gathers the fields of a model parameter sent field by field, as the apipod package takes them', () => {
    expect(gatherFormModels({ pam1: 'x', pam2: '3', count: '1' }, inputs)).toEqual({ order: { pam1: 'x', pam2: '3' }, count: '1' });
  });

  it('gives a required model whose fields all have defaults an empty object when none is sent, so its defaults apply', () => {
    expect(gatherFormModels({ count: '1' }, inputs)).toEqual({ order: {}, count: '1' });
  });

  it('leaves a model sent whole, an endpoint parameter of the same name as a field, and an Optional model not sent, as they are', () => {
    expect(gatherFormModels({ order: '{"pam1": "x"}', pam1: 'y', count: '1' }, inputs)).toEqual({ order: '{"pam1": "x"}', pam1: 'y', count: '1' });
    expect(gatherFormModels({ size: '2', count: '1' }, inputs)).toEqual({ order: {}, maybe: { size: '2' }, count: '1' });
  });
});
