import { describe, expect, it } from 'vitest';
import { PartContentTypes } from '../../src/serve/multipart-part-types.js';

const part = (headers: string[], body: string) => `--XX\r\n${headers.join('\r\n')}\r\n\r\n${body}\r\n`;
const BODY = Buffer.from(
  'a preamble the parser ignores\r\n' +
    part(['Content-Disposition: form-data; name="image"; filename="red.png"', 'Content-Type: image/png'], '\x89PNG\r\n\r\n--XY not a delimiter') +
    part(['Content-Disposition: form-data; name="prompt"'], 'hi') +
    part(['content-disposition: form-data; name="a; filename=x"; filename="tone.wav"'], 'RIFF....WAVE') +
    part(['Content-Disposition: form-data; name="raw"', 'Content-Type: application/octet-stream'], '') +
    part(['Content-Disposition: form-data; name="doc"; filename*=UTF-8\'\'n%C3%B6tes.txt'], 'text') +
    '--XX--\r\nan epilogue\r\n\r\nContent-Disposition: form-data; filename="no"\r\n\r\n',
  'latin1',
);

describe('which file parts of a multipart body gave a Content-Type', () => {
  it('tells, for each file part in order, whether its headers named a type, however the body is cut into chunks', () => {
    for (const size of [1, 2, 3, 7, 64, BODY.length]) {
      const types = new PartContentTypes('XX');
      for (let start = 0; start < BODY.length; start += size) types.write(BODY.subarray(start, start + size));
      expect([size, [0, 1, 2, 3].map((index) => types.gaveContentType(index))]).toEqual([size, [true, false, true, false]]);
    }
  });

  it('says a type was given for a part it could not read, so a given type is never dropped', () => {
    const types = new PartContentTypes('XX');
    types.write(Buffer.from(`--XX\r\nContent-Disposition: form-data; name="a"; filename="a"\r\n${'X-Long: y\r\n'.repeat(10_000)}`));
    expect(types.gaveContentType(0)).toBe(true);
  });
});
