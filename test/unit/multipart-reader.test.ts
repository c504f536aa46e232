import { describe, expect, it } from 'vitest';
import { boundaryOf, MalformedMultipart, MultipartReader, type PartHead } from '../../src/serve/multipart-reader.js';

const part = (headers: string[], body: string) => `--XX\r\n${headers.join('\r\n')}\r\n\r\n${body}\r\n`;
const BODY = Buffer.from(
  'a preamble the parser ignores\r\n' +
    part(['Content-Disposition: form-data; name="image"; filename="red.png"', 'Content-Type: image/PNG'], '\x89PNG\r\n\r\n--XY not a delimiter\r\n--X') +
    part(['Content-Disposition: form-data; name="prompt"'], 'hi') +
    part(['Content-Disposition: attachment; name="skipped"'], 'not a form field') +
    part(['content-disposition: form-data; name="a; filename=x"; filename="C:\\\\photos\\\\tone.wav"'], 'RIFF....WAVE') +
    part(['Content-Disposition: form-data; name="raw"', 'Content-Type: application/octet-stream'], '') +
    part(['Content-Disposition: form-data; name="doc"; filename="plain.txt"; filename*=UTF-8\'\'n%C3%B6tes.txt'], 'text') +
    part(['Content-Disposition: form-data; name="note"', 'Content-Type: text/plain; charset=ISO-8859-1'], 'caf\xe9') +
    `--XX  \t\r\n\r\nno headers, so no form field\r\n` +
    '--XX--\r\nan epilogue\r\n--XX\r\nContent-Disposition: form-data; name="late"\r\n\r\nignored\r\n',
  'latin1',
);

interface ReadPart {
  head: PartHead;
  body: string;
}

/** The parts `body` holds, fed to the reader `size` bytes at a time. */
function read(body: Buffer, size: number, boundary = 'XX'): ReadPart[] {
  const reader = new MultipartReader(boundary);
  const parts: ReadPart[] = [];
  let open: { head: PartHead; pieces: Buffer[] } | null = null;
  for (let start = 0; start < body.length; start += size) {
    for (const event of reader.feed(body.subarray(start, start + size))) {
      if (event.kind === 'part') open = { head: event.head, pieces: [] };
      else if (event.kind === 'data') open!.pieces.push(Buffer.from(event.bytes)); // a slice of the chunk: copied, as the chunk is reused below
      else parts.push({ head: open!.head, body: Buffer.concat(open!.pieces).toString('latin1') });
    }
  }
  reader.end();
  return parts;
}

describe('reading a multipart/form-data body as it arrives', () => {
  it('gives each form field its name, file name, type and exact bytes, however the body is cut into chunks', () => {
    const expected = [
      { head: { name: 'image', fileName: 'red.png', contentType: 'image/png', charset: null, isFile: true }, body: '\x89PNG\r\n\r\n--XY not a delimiter\r\n--X' },
      { head: { name: 'prompt', fileName: null, contentType: null, charset: null, isFile: false }, body: 'hi' },
      { head: { name: 'a; filename=x', fileName: 'tone.wav', contentType: null, charset: null, isFile: true }, body: 'RIFF....WAVE' },
      { head: { name: 'raw', fileName: null, contentType: 'application/octet-stream', charset: null, isFile: true }, body: '' },
      { head: { name: 'doc', fileName: 'nötes.txt', contentType: null, charset: null, isFile: true }, body: 'text' },
      { head: { name: 'note', fileName: null, contentType: 'text/plain', charset: 'iso-8859-1', isFile: false }, body: 'caf\xe9' },
    ];
    for (const size of [1, 2, 3, 5, 7, 8, 64, BODY.length]) {
      expect([size, read(BODY, size)]).toEqual([size, expected]);
    }
  });

  it('hands on a large part as slices of the chunk it came in, not copies', () => {
    const image = Buffer.alloc(1024 * 1024, 7);
    const body = Buffer.concat([Buffer.from(part(['Content-Disposition: form-data; name="image"; filename="a.bin"'], '')).subarray(0, -2), image, Buffer.from('\r\n--XX--\r\n')]);
    const events = new MultipartReader('XX').feed(body);
    const data = events.filter((event) => event.kind === 'data');
    expect(data).toHaveLength(1);
    expect(data[0]!.kind === 'data' && data[0]!.bytes.buffer === body.buffer && data[0]!.bytes.equals(image)).toBe(true);
  });

  it('takes a browser\'s empty file input as a file part named "" and strips any directory from a file name', () => {
    const body = Buffer.from(
      part(['Content-Disposition: form-data; name="mask"; filename=""', 'Content-Type: application/octet-stream'], '') +
        part(['Content-Disposition: form-data; name="up"; filename="../../etc/passwd"'], 'x') +
        part(['Content-Disposition: form-data; name="dots"; filename=".."'], 'y') +
        '--XX--',
    );
    expect(read(body, 4).map(({ head }) => [head.name, head.fileName, head.isFile])).toEqual([
      ['mask', '', true],
      ['up', 'passwd', true],
      ['dots', '', true],
    ]);
  });

  it('refuses a body cut short, a boundary line that goes on and an empty boundary, saying so, and takes a boundary longer than RFC 2046 allows', () => {
    const cut = () => read(Buffer.from('--XX\r\nContent-Disposition: form-data; name="a"\r\n\r\nabc'), 5);
    expect(cut).toThrow(new MalformedMultipart('the body ended before its closing boundary'));
    expect(() => read(Buffer.from('--XXtra\r\n\r\n\r\n--XX--'), 3)).toThrow(/a boundary line goes on after the boundary/);
    expect(() => read(Buffer.from(''), 1)).toThrow('the body ended before its closing boundary');
    expect(() => new MultipartReader('')).toThrow('its Content-Type names an empty boundary');
    const long = 'b'.repeat(100);
    expect(read(Buffer.from(`--${long}\r\nContent-Disposition: form-data; name="a"\r\n\r\nx\r\n--${long}--`), 7, long).map((read) => read.body)).toEqual(['x']);
  });

  it('reads the first 80 KiB of a longer header block, as busboy does, and the part after it', () => {
    const headers = ['Content-Disposition: form-data; name="image"; filename="a.png"', `X-Pad: ${'a'.repeat(200 * 1024)}`, 'Content-Type: image/png'];
    const body = Buffer.from(part(headers, 'PNG') + '--XX--');
    for (const size of [1000, 64 * 1024, body.length]) {
      expect(read(body, size)).toEqual([{ head: { name: 'image', fileName: 'a.png', contentType: null, charset: null, isFile: true }, body: 'PNG' }]);
    }
  });

  it('finds the boundary in a Content-Type, quoted or not', () => {
    expect(boundaryOf('multipart/form-data; boundary=----WebKitFormBoundary7MA4YWxk')).toBe('----WebKitFormBoundary7MA4YWxk');
    expect(boundaryOf('multipart/form-data; charset=utf-8; BOUNDARY="a;b c"')).toBe('a;b c');
    expect(boundaryOf('multipart/form-data')).toBeNull();
    expect(boundaryOf(undefined)).toBeNull();
  });
});
