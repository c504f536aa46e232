import { describe, expect, it } from 'vitest';
import { fileUploadOf } from '../../src/serve/file-parameters.js';

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
