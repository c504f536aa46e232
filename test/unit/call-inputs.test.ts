import { describe, expect, it } from 'vitest';
import { typeInputs, type InputSpec } from '../../src/cli/call-inputs.js';
import { findEndpointParameters } from '../../src/cli/endpoint-parameters.js';

/** An OpenAPI document as svc serves one: a JSON endpoint with a model, a multipart one, a GET one. */
const DOCUMENT = {
  paths: {
    '/make_order': {
      post: {
        requestBody: {
          content: {
            'application/json': {
              schema: {
                type: 'object',
                properties: {
                  order: { $ref: '#/components/schemas/Order' },
                  seed: { anyOf: [{ type: 'integer' }, { type: 'null' }] },
                  mode: { enum: ['fast', 'slow'] },
                  anything: {},
                },
              },
            },
          },
        },
      },
    },
    '/inpaint': {
      post: {
        requestBody: {
          content: {
            'multipart/form-data': {
              schema: {
                type: 'object',
                properties: {
                  image: { anyOf: [{ type: 'string', format: 'binary' }, { type: 'string' }] },
                  references: { type: 'array', items: { type: 'string', format: 'binary' } },
                },
              },
            },
          },
        },
      },
    },
    '/search': { get: { parameters: [{ name: 'q', in: 'query', schema: { type: 'string' } }] } },
  },
  components: { schemas: { Order: { type: 'object', properties: { size: { type: 'string' } } } } },
};

const inputs = (...pairs: Array<[string, string]>): InputSpec[] => pairs.map(([name, text]) => ({ name, text }));

describe('typing svc call -i by the OpenAPI document', () => {
  it('finds an endpoint as written, under /v1, or as the apipod toolkit spells it', () => {
    for (const path of ['/make_order', '/v1/make_order', '/make-order', 'http://host:8000/v1/make-order/']) {
      expect(findEndpointParameters(DOCUMENT, path, 'POST').path, path).toBe('/make_order');
    }
    expect(findEndpointParameters(DOCUMENT, '/inpaint', 'POST').encoding).toBe('multipart');
    expect(findEndpointParameters(DOCUMENT, '/search', 'GET').encoding).toBe('query');
    expect(() => findEndpointParameters(DOCUMENT, '/search', 'POST')).toThrow('/search takes GET, not POST (--method GET)');
  });

  it('reads a model through its $ref as JSON, an Optional int as an int or null, an enum as its values\' type', () => {
    const endpoint = findEndpointParameters(DOCUMENT, '/make_order', 'POST');
    expect(typeInputs(inputs(['order', '{"size": "large"}'], ['seed', '7'], ['mode', 'fast'], ['anything', '[1]']), endpoint).values).toEqual({
      order: { size: 'large' },
      seed: 7,
      mode: 'fast',
      anything: [1],
    });
    expect(typeInputs(inputs(['seed', 'null'], ['anything', 'plain text']), endpoint).values).toEqual({ seed: null, anything: 'plain text' });
    expect(() => typeInputs(inputs(['order', '{"size": '], ['seed', '1']), endpoint)).toThrow('-i order: not valid JSON: {"size": ');
    expect(() => typeInputs(inputs(['seed', '1.5']), endpoint)).toThrow('-i seed=1.5: seed takes an integer or null');
  });

  it('takes @path for a file, a list of files from repeated -i, and text for a file parameter that takes it', () => {
    const endpoint = findEndpointParameters(DOCUMENT, '/inpaint', 'POST');
    const typed = typeInputs(inputs(['image', 'https://example.com/cat.png'], ['references', '@a.png'], ['references', '@b.png']), endpoint);
    expect(typed.values).toEqual({ image: 'https://example.com/cat.png' });
    expect(typed.files).toEqual(new Map([['references', ['a.png', 'b.png']]]));
    expect(() => typeInputs(inputs(['image', '@a.png'], ['image', '@b.png']), endpoint)).toThrow('-i image is given more than once');
  });
});
