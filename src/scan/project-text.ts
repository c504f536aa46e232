import type { Diagnostic } from './diagnostic.js';
import { decodeText, describeEncoding, pythonEncodingName, type DecodedText } from './text-decoding.js';

/** A project file's bytes; null when there is no such file; `unreadable` says why one that is there cannot be read. */
export type ReadBytes = (path: string) => Uint8Array | null | { unreadable: string };
export type ReadText = (path: string) => string | null;

/** The files whose readers accept less than pip does: Python's import system and TOML parsers. */
export interface StrictTextFiles {
  pythonSource: string;
  toml: string;
}

/**
 * Reads each project file once, decoded as pip would decode it (a byte-order mark names the
 * encoding), and warns where the file's own reader will disagree: bytes that are not valid
 * in their encoding, Python source in UTF-16 or UTF-32, TOML with a byte-order mark. The text
 * is still read, so a scan reports what it can.
 */
export function projectTextReader(
  readBytes: ReadBytes,
  strict: StrictTextFiles,
  diagnostics: Diagnostic[],
  /** Filled with each file that is there but cannot be read, and why. */
  unreadable: Map<string, string> = new Map(),
  /** Filled with the Python source's diagnostic when Python certainly refuses to decode it. */
  undecodable: Diagnostic[] = [],
): ReadText {
  const read = new Map<string, string | null>();
  return (path) => {
    if (!read.has(path)) read.set(path, decodeOnce(path));
    return read.get(path) ?? null;
  };

  function decodeOnce(path: string): string | null {
    const bytes = readBytes(path);
    if (bytes === null) return null;
    if ('unreadable' in bytes) {
      unreadable.set(path, bytes.unreadable);
      diagnostics.push({ file: path, message: `${bytes.unreadable}; the scan goes on without it` });
      return null;
    }
    const decoded = decodeText(bytes);
    const pythonRefusal = path === strict.pythonSource ? pythonDecodingRefusal(decoded) : null;
    if (pythonRefusal !== null) {
      const diagnostic = { file: path, ...pythonRefusal };
      diagnostics.push(diagnostic);
      undecodable.push(diagnostic);
      return decoded.text;
    }
    if (decoded.firstInvalidLine !== null) {
      const unknownCoding = decoded.codingComment !== null && decoded.encoding === 'utf-8' && pythonEncodingName(decoded.codingComment) !== 'utf-8';
      diagnostics.push({
        file: path,
        line: decoded.firstInvalidLine,
        message: unknownCoding
          ? `its coding comment names ${decoded.codingComment}, which svc cannot decode: it read the file as UTF-8, and these bytes as U+FFFD`
          : `not valid ${describeEncoding(decoded)}: these bytes were read as U+FFFD; save the file as UTF-8`,
      });
    }
    const refusal = tomlReaderRefusal(path, decoded);
    if (refusal !== null) diagnostics.push({ file: path, message: refusal });
    return decoded.text;
  }

  function tomlReaderRefusal(path: string, decoded: DecodedText): string | null {
    if (path === strict.toml && (decoded.byteOrderMark || decoded.encoding !== 'utf-8')) {
      return `saved as ${describeEncoding(decoded)}: TOML must be UTF-8 with no byte-order mark, and Python's tomllib rejects this file; save it as UTF-8`;
    }
    return null;
  }
}

/**
 * What makes Python refuse to decode a source file (Parser/tokenizer.c): a byte-order mark
 * other than UTF-8's, UTF-8's beside a coding comment naming another encoding, or bytes
 * that are not UTF-8 where no coding comment names another.
 */
function pythonDecodingRefusal(decoded: DecodedText): { line?: number; message: string } | null {
  if (decoded.byteOrderMark && decoded.encoding !== 'utf-8') {
    return { message: `saved as ${describeEncoding(decoded)}: Python reads source files as UTF-8 and will not import this one; save it as UTF-8` };
  }
  const declared = decoded.codingComment === null ? null : pythonEncodingName(decoded.codingComment);
  if (decoded.byteOrderMark && declared !== null && declared !== 'utf-8') {
    return {
      line: 1,
      message: `a UTF-8 byte-order mark and a coding comment naming ${decoded.codingComment}: Python will not import the file (SyntaxError: encoding problem: ${declared} with BOM); save it as UTF-8 without the comment`,
    };
  }
  if (decoded.firstInvalidLine !== null && (declared === null || declared === 'utf-8')) {
    return {
      line: decoded.firstInvalidLine,
      message: "not valid UTF-8, and Python will not import the file (SyntaxError: (unicode error) 'utf-8' codec can't decode it); save it as UTF-8, or name its encoding in a `# -*- coding: ... -*-` comment on its first line",
    };
  }
  return null;
}
