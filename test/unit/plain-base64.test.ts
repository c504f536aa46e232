import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodePlainBase64 } from '../../src/serve/plain-base64.js';
import { REPO_ROOT } from '../support/svc.js';

/** What the worker's own decoder (python/apipod/media.py) makes of each text: base64 of the bytes, or null for an error. */
function workerReads(texts: string[]): (string | null)[] {
  const script = [
    'import json, sys',
    `sys.path.insert(0, ${JSON.stringify(join(REPO_ROOT, 'python'))})`,
    'import base64',
    'from apipod.media import _decode_base64',
    'def read(text):',
    '    try:',
    '        return base64.b64encode(_decode_base64(text)).decode()',
    '    except ValueError:',
    '        return None',
    'print(json.dumps([read(text) for text in json.load(sys.stdin)]))',
  ].join('\n');
  return JSON.parse(execFileSync('python3', ['-c', script], { input: JSON.stringify(texts), encoding: 'utf8' })) as (string | null)[];
}

describe('base64 the gateway decodes for a media parameter', () => {
  it('decodes exactly what the worker would, and leaves to the worker whatever it would read otherwise or refuse', () => {
    const bytes = Buffer.from(Array.from({ length: 300 }, (_, index) => (index * 37) % 256));
    const standard = bytes.toString('base64');
    const texts = [
      standard,
      standard.replace(/=+$/, ''),
      bytes.subarray(0, 299).toString('base64'),
      bytes.subarray(0, 298).toString('base64').replace(/=+$/, ''),
      bytes.toString('base64url'),
      `${standard.slice(0, 8)}-${standard.slice(9)}`, // both alphabets
      `${standard.slice(0, 8)} ${standard.slice(9)}`,
      `${standard.slice(0, 8)}=${standard.slice(9)}`,
      `${standard.slice(0, 8)}*${standard.slice(9)}`,
      `${standard.slice(0, 8)}é${standard.slice(10)}`,
      `${standard}=`,
      `${standard}==`,
      `${standard}a`,
      `${standard.slice(0, -4)}ab===`,
      `data:image/png;base64,${standard}`,
      'https://example.com/image.png',
      '====',
    ];
    const worker = workerReads(texts);
    const decoded = texts.map((text) => decodePlainBase64(Buffer.from(text))?.toString('base64') ?? null);
    // Decoded here only to the bytes the worker reads; anything else is left to the worker (null).
    texts.forEach((text, index) => {
      if (decoded[index] !== null) expect([text, decoded[index]]).toEqual([text, worker[index]]);
    });
    // The forms clients send: padded or not, either alphabet.
    expect(decoded.slice(0, 5).every((bytes) => bytes !== null)).toBe(true);
    expect(decoded.slice(5).filter((bytes) => bytes !== null)).toEqual([]);
  });

  it('decodes a photo-sized text to the same bytes, and leaves it to the worker for a stray character anywhere in it', () => {
    // Decoded in slices of 64 Ki characters: the strays sit on and around their edges.
    const bytes = Buffer.from(Array.from({ length: 200_001 }, (_, index) => (index * 131) % 251));
    const standard = bytes.toString('base64');
    const stray = (at: number, character: string) => `${standard.slice(0, at)}${character}${standard.slice(at + 1)}`;
    expect(decodePlainBase64(Buffer.from(standard))?.equals(bytes)).toBe(true);
    expect(decodePlainBase64(Buffer.from(bytes.toString('base64url')))?.equals(bytes)).toBe(true);
    const texts = [stray(65_535, '*'), stray(65_536, ' '), stray(131_073, '.'), stray(standard.length - 3, '='), `${standard}a`];
    expect(texts.map((text) => decodePlainBase64(Buffer.from(text)))).toEqual(texts.map(() => null));
  });
});
