import { describe, expect, it } from 'vitest';
import { compileEndpointInputs, readParameters } from '../../src/serve/endpoint-inputs.js';
import type { Value } from '../../src/worker/protocol.js';

const fileUploadOf = (schema: Value) => readParameters({ properties: { p: schema } }).get('p')?.upload;
const image = { 'x-media-type': 'image', anyOf: [{ type: 'string' }, { type: 'object' }] };

describe('which parameters take multipart uploads, and how many', () => {
  it('takes one part for a media parameter, or a union with one, and a part per file for a list', () => {
    expect(fileUploadOf(image)).toEqual({ repeated: false, media: 'image' });
    expect(fileUploadOf({ anyOf: [image, { type: 'string' }] })).toEqual({ repeated: false, media: 'image' });
    expect(fileUploadOf({ type: 'array', items: image })).toEqual({ repeated: true, media: 'image' });
    expect(fileUploadOf({ type: 'string' })).toBeNull();
  });

  it('takes a part per file for one file or a list of them (ImageFile | list[ImageFile]), as FastAPI reads it', () => {
    expect(fileUploadOf({ anyOf: [image, { type: 'array', items: image }] })).toEqual({ repeated: true, media: 'image' });
  });
});

describe('what an endpoint accepts, compiled once', () => {
  it('fetches URLs for media parameters but for one that also takes text, which gets the URL as its text', () => {
    const properties = { photo: image, photos: { type: 'array', items: image }, either: { anyOf: [image, { type: 'string' }] } };
    const inputs = compileEndpointInputs({ input_schema: { type: 'object', properties }, body_parameter: null });
    expect([...inputs.mediaUrlParameters]).toEqual([['photo', false], ['photos', true]]);
  });

  it('starts for a model that refers to itself through an Optional, and takes it as no form model', () => {
    const schema: { [key: string]: Value } = { properties: { node: { $ref: '#/$defs/Loop' } }, $defs: { Loop: { anyOf: [{ $ref: '#/$defs/Loop' }, { type: 'null' }] } } };
    expect(readParameters(schema).get('node')?.formModel).toBeNull();
  });
});
