/**
 * Decodes a project's text files the way pip reads requirement files (pip's `auto_decode`)
 * and uv reads `.python-version`: a byte-order mark names the encoding, else a PEP 263
 * coding comment in the first two lines (`# -*- coding: latin-1 -*-`), else UTF-8.
 * Windows PowerShell 5.1 writes UTF-16 LE with a mark for `>` (`pip freeze > requirements.txt`)
 * and UTF-8 with a mark for `Set-Content -Encoding UTF8`; read as plain UTF-8 either gives
 * nonsense in place of every requirement.
 */
type MarkedEncoding = 'utf-8' | 'utf-16le' | 'utf-16be' | 'utf-32le' | 'utf-32be';

export interface DecodedText {
  /** The text, without its byte-order mark. */
  text: string;
  /** The WHATWG name of the encoding used: `utf-8`, `utf-16le`, `windows-1252`, ... */
  encoding: string;
  /** Whether the bytes began with a byte-order mark. */
  byteOrderMark: boolean;
  /** 1-based line of the first bytes that are not valid in `encoding` (read as U+FFFD), or null. */
  firstInvalidLine: number | null;
  /** The encoding a coding comment in the first two lines names, as written, whether or not the platform knows it. */
  codingComment: string | null;
}

// Longest first: the UTF-32 LE mark begins with the UTF-16 LE one.
const BYTE_ORDER_MARKS: ReadonlyArray<readonly [MarkedEncoding, readonly number[]]> = [
  ['utf-32le', [0xff, 0xfe, 0x00, 0x00]],
  ['utf-32be', [0x00, 0x00, 0xfe, 0xff]],
  ['utf-8', [0xef, 0xbb, 0xbf]],
  ['utf-16le', [0xff, 0xfe]],
  ['utf-16be', [0xfe, 0xff]],
];

// Python's own pattern (PEP 263), on each of the first two lines.
const CODING_COMMENT = /^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)/;

export function decodeText(bytes: Uint8Array): DecodedText {
  const marked = BYTE_ORDER_MARKS.find(([, mark]) => mark.every((byte, index) => bytes[index] === byte));
  const codingComment = codingCommentOf(bytes.subarray(marked?.[1].length ?? 0));
  const [encoding, mark] = marked ?? [(codingComment === null ? null : platformEncoding(codingComment)) ?? 'utf-8', []];
  const body = bytes.subarray(mark.length);
  const text = encoding.startsWith('utf-32') ? decodeUtf32(body, encoding === 'utf-32le') : new TextDecoder(encoding, { ignoreBOM: true }).decode(body);
  return { text, encoding, byteOrderMark: marked !== undefined, firstInvalidLine: firstInvalidLine(body, encoding, text), codingComment };
}

/** Python reads the second line's only when the first is blank or a comment (Lib/tokenize.py, `detect_encoding`). */
function codingCommentOf(bytes: Uint8Array): string | null {
  const [first = '', second = ''] = new TextDecoder('latin1').decode(bytes.subarray(0, 400)).split('\n', 2);
  return CODING_COMMENT.exec(first)?.[1] ?? (/^[ \t\f]*(?:#.*)?\r?$/u.test(first) ? (CODING_COMMENT.exec(second)?.[1] ?? null) : null);
}

/**
 * The name Python's tokenizer gives a coding comment's encoding (Parser/tokenizer.c,
 * `get_normal_name`): `utf-8` and `iso-8859-1` for their common spellings, else as written.
 */
export function pythonEncodingName(name: string): string {
  const folded = name.slice(0, 12).toLowerCase().replaceAll('_', '-');
  if (folded === 'utf-8' || folded.startsWith('utf-8-')) return 'utf-8';
  if (['latin-1', 'iso-8859-1', 'iso-latin-1'].some((spelling) => folded === spelling || folded.startsWith(`${spelling}-`))) return 'iso-8859-1';
  return name;
}

/** The encoding a coding comment names, when the platform knows it under that name or Python's spelling of it. */
function platformEncoding(name: string): string | null {
  const spellings = [name, name.replace(/_/g, '-'), name.replace(/[-_]/g, '')];
  for (const spelling of spellings) {
    try {
      return new TextDecoder(spelling).encoding;
    } catch {
      // not a WHATWG label: try Python's other spellings of it
    }
  }
  return null;
}

/** A name for messages: "UTF-16 LE with a byte-order mark". */
export function describeEncoding({ encoding, byteOrderMark }: Pick<DecodedText, 'encoding' | 'byteOrderMark'>): string {
  const name = encoding.toUpperCase().replace(/^UTF-(\d+)(LE|BE)$/, 'UTF-$1 $2');
  return byteOrderMark ? `${name} with a byte-order mark` : name;
}

/** WHATWG's TextDecoder knows no UTF-32, which pip accepts; code units outside Unicode become U+FFFD. */
function decodeUtf32(bytes: Uint8Array, littleEndian: boolean): string {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const characters: string[] = [];
  for (let offset = 0; offset + 4 <= bytes.byteLength; offset += 4) {
    const codePoint = view.getUint32(offset, littleEndian);
    const valid = codePoint <= 0x10ffff && (codePoint < 0xd800 || codePoint > 0xdfff);
    characters.push(valid ? String.fromCodePoint(codePoint) : '\ufffd');
  }
  if (bytes.byteLength % 4 !== 0) characters.push('\ufffd');
  return characters.join('');
}

/**
 * The line of the first U+FFFD, when decoding had to substitute one: a strict decode tells
 * substitutes from U+FFFD written in the file. (One written above the first bad bytes
 * would be named instead of them; the file still gets its warning.)
 */
function firstInvalidLine(body: Uint8Array, encoding: string, text: string): number | null {
  if (!text.includes('\ufffd')) return null;
  if (!encoding.startsWith('utf-32') && decodesStrictly(body, encoding)) return null;
  let line = 1;
  for (const character of text) {
    if (character === '\ufffd') return line;
    if (character === '\n') line += 1;
  }
  return null;
}

function decodesStrictly(body: Uint8Array, encoding: string): boolean {
  try {
    new TextDecoder(encoding, { fatal: true, ignoreBOM: true }).decode(body);
    return true;
  } catch {
    return false;
  }
}
