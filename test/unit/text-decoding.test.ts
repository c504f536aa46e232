import { describe, expect, it } from 'vitest';
import type { Diagnostic } from '../../src/scan/diagnostic.js';
import { projectTextReader } from '../../src/scan/project-text.js';
import { decodeText, describeEncoding } from '../../src/scan/text-decoding.js';

const REQUIREMENTS = 'torch==2.4.1\nnumpy\n';

function utf16(text: string, littleEndian: boolean): Uint8Array {
  const bytes = new Uint8Array(2 + text.length * 2);
  const view = new DataView(bytes.buffer);
  view.setUint16(0, 0xfeff, littleEndian);
  for (let index = 0; index < text.length; index += 1) view.setUint16(2 + index * 2, text.charCodeAt(index), littleEndian);
  return bytes;
}

function utf32(text: string, littleEndian: boolean): Uint8Array {
  const codePoints = [0xfeff, ...[...text].map((character) => character.codePointAt(0) as number)];
  const bytes = new Uint8Array(codePoints.length * 4);
  const view = new DataView(bytes.buffer);
  codePoints.forEach((codePoint, index) => view.setUint32(index * 4, codePoint, littleEndian));
  return bytes;
}

const utf8 = (text: string) => new TextEncoder().encode(text);
const withUtf8Mark = (text: string) => new Uint8Array([0xef, 0xbb, 0xbf, ...utf8(text)]);

describe('decoding project text files as pip does', () => {
  it.each([
    ['UTF-8', utf8(REQUIREMENTS), 'utf-8', false],
    ['UTF-8 with a mark (Set-Content -Encoding UTF8)', withUtf8Mark(REQUIREMENTS), 'utf-8', true],
    ['UTF-16 LE (PowerShell 5.1 `>`)', utf16(REQUIREMENTS, true), 'utf-16le', true],
    ['UTF-16 BE', utf16(REQUIREMENTS, false), 'utf-16be', true],
    ['UTF-32 LE', utf32(REQUIREMENTS, true), 'utf-32le', true],
    ['UTF-32 BE', utf32(REQUIREMENTS, false), 'utf-32be', true],
  ] as const)('reads %s to the same text, without the mark', (_, bytes, encoding, byteOrderMark) => {
    expect(decodeText(bytes)).toEqual({ text: REQUIREMENTS, encoding, byteOrderMark, firstInvalidLine: null, codingComment: null });
  });

  it('names the line of the first bytes that are not UTF-8, and keeps the rest', () => {
    const latin1 = new Uint8Array([...utf8('torch\n# caf'), 0xe9, ...utf8('\nnumpy\n')]);
    const decoded = decodeText(latin1);
    expect(decoded.firstInvalidLine).toBe(2);
    expect(decoded.text).toBe('torch\n# caf\ufffd\nnumpy\n');
  });

  it('honours a coding comment in the first two lines, in Python\'s spellings, as Python and pip do', () => {
    const latin1 = (text: string) => Uint8Array.from(text, (character) => character.charCodeAt(0));
    expect(decodeText(latin1('#!/usr/bin/env python\n# -*- coding: latin-1 -*-\nTITLE = "caf\u00e9"\n'))).toMatchObject({
      text: '#!/usr/bin/env python\n# -*- coding: latin-1 -*-\nTITLE = "caf\u00e9"\n',
      encoding: 'windows-1252',
      firstInvalidLine: null,
    });
    expect(decodeText(latin1('# vim: set fileencoding=iso_8859_15 :\nx = "\u00e9"\n')).encoding).toBe('iso-8859-15');
    expect(decodeText(latin1('\n\n# coding: latin-1\nx = "\u00e9"\n'))).toMatchObject({ encoding: 'utf-8', firstInvalidLine: 4 });
    expect(decodeText(utf8('# coding: no-such-codec\nx = 1\n')).encoding).toBe('utf-8');
  });

  it('does not take a U+FFFD written in the file for bad bytes', () => {
    expect(decodeText(utf8('# \ufffd is the replacement character\ntorch\n')).firstInvalidLine).toBeNull();
  });

  it('finds an unpaired surrogate in UTF-16 and a code point beyond Unicode in UTF-32', () => {
    const brokenUtf16 = utf16('a\nb', true);
    new DataView(brokenUtf16.buffer).setUint16(6, 0xd800, true);
    expect(decodeText(brokenUtf16).firstInvalidLine).toBe(2);
    const brokenUtf32 = utf32('a\nb', false);
    new DataView(brokenUtf32.buffer).setUint32(4, 0x110000, false);
    expect(decodeText(brokenUtf32)).toMatchObject({ text: '\ufffd\nb', firstInvalidLine: 1 });
  });

  it('describes encodings the way editors name them', () => {
    expect(describeEncoding({ encoding: 'utf-16le', byteOrderMark: true })).toBe('UTF-16 LE with a byte-order mark');
    expect(describeEncoding({ encoding: 'utf-8', byteOrderMark: false })).toBe('UTF-8');
  });
});

describe('reading a project text file once, with the warnings its own reader would give', () => {
  function reader(files: Record<string, Uint8Array>) {
    const diagnostics: Diagnostic[] = [];
    const undecodable: Diagnostic[] = [];
    const reads: string[] = [];
    const readText = projectTextReader(
      (path) => {
        reads.push(path);
        return files[path] ?? null;
      },
      { pythonSource: 'service.py', toml: 'pyproject.toml' },
      diagnostics,
      new Map(),
      undecodable,
    );
    return { readText, diagnostics, reads, undecodable };
  }

  it('accepts any mark in files pip and pyenv read, warning once however often it is read', () => {
    const { readText, diagnostics, reads } = reader({
      'requirements.txt': utf16(REQUIREMENTS, true),
      'extra.txt': new Uint8Array([...utf8('pillow\n'), 0xff]),
    });
    expect(readText('requirements.txt')).toBe(REQUIREMENTS);
    expect(readText('requirements.txt')).toBe(REQUIREMENTS);
    expect(readText('extra.txt')).toBe('pillow\n\ufffd');
    expect(readText('extra.txt')).toBe('pillow\n\ufffd');
    expect(readText('missing.txt')).toBeNull();
    expect(reads).toEqual(['requirements.txt', 'extra.txt', 'missing.txt']);
    expect(diagnostics).toEqual([
      { file: 'extra.txt', line: 2, message: 'not valid UTF-8: these bytes were read as U+FFFD; save the file as UTF-8' },
    ]);
  });

  it('says that Python will not import UTF-16 source, but still reads it', () => {
    const { readText, diagnostics, undecodable } = reader({ 'service.py': utf16('import apipod\n', true), 'other.py': utf16('x = 1\n', true) });
    expect(readText('service.py')).toBe('import apipod\n');
    expect(readText('other.py')).toBe('x = 1\n');
    const refusal = {
      file: 'service.py',
      message: 'saved as UTF-16 LE with a byte-order mark: Python reads source files as UTF-8 and will not import this one; save it as UTF-8',
    };
    expect([diagnostics, undecodable]).toEqual([[refusal], [refusal]]);
  });

  it('says where Python will not decode Python source, and only there: bytes that are not UTF-8 where no coding comment names another, a mark beside one', () => {
    const latin1 = (text: string) => Uint8Array.from(text, (character) => character.charCodeAt(0));
    const refusals = (source: Uint8Array) => {
      const { readText, undecodable } = reader({ 'service.py': source });
      readText('service.py');
      return undecodable.map((diagnostic) => `${diagnostic.line}: ${diagnostic.message}`);
    };
    expect(refusals(latin1('import apipod\nNAME = "caf\u00e9"\n'))).toEqual([
      "2: not valid UTF-8, and Python will not import the file (SyntaxError: (unicode error) 'utf-8' codec can't decode it); save it as UTF-8, or name its encoding in a `# -*- coding: ... -*-` comment on its first line",
    ]);
    // Python reads a coding comment on the second line only below a comment or a blank line.
    expect(refusals(latin1('import apipod\n# -*- coding: latin-1 -*-\nNAME = "caf\u00e9"\n'))).toHaveLength(1);
    expect(refusals(latin1('#!/usr/bin/env python\n# -*- coding: latin-1 -*-\nNAME = "caf\u00e9"\n'))).toEqual([]);
    expect(refusals(latin1('# -*- coding: cp437 -*-\nNAME = "\u00e9"\n'))).toEqual([]);
    expect(refusals(withUtf8Mark('# -*- coding: latin-1 -*-\nx = 1\n'))).toEqual([
      '1: a UTF-8 byte-order mark and a coding comment naming latin-1: Python will not import the file (SyntaxError: encoding problem: iso-8859-1 with BOM); save it as UTF-8 without the comment',
    ]);
    expect(refusals(withUtf8Mark('# -*- coding: UTF_8 -*-\nx = 1\n'))).toEqual([]);
  });

  it('says that svc cannot decode an encoding a coding comment names, rather than that the file is not UTF-8', () => {
    const { readText, diagnostics } = reader({ 'service.py': Uint8Array.from('# -*- coding: cp437 -*-\nNAME = "\u0082"\n', (character) => character.charCodeAt(0)) });
    readText('service.py');
    expect(diagnostics).toEqual([
      { file: 'service.py', line: 2, message: 'its coding comment names cp437, which svc cannot decode: it read the file as UTF-8, and these bytes as U+FFFD' },
    ]);
  });

  it('lets Python source carry a UTF-8 mark, which Python accepts, but not TOML, which tomllib rejects', () => {
    const { readText, diagnostics } = reader({
      'service.py': withUtf8Mark('import apipod\n'),
      'pyproject.toml': withUtf8Mark('[project]\n'),
    });
    expect(readText('service.py')).toBe('import apipod\n');
    expect(readText('pyproject.toml')).toBe('[project]\n');
    expect(diagnostics.map((diagnostic) => diagnostic.file)).toEqual(['pyproject.toml']);
    expect(diagnostics[0]?.message).toMatch(/^saved as UTF-8 with a byte-order mark: TOML must be UTF-8 with no byte-order mark/);
  });
});
