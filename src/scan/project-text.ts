import type { Diagnostic } from './diagnostic.js';
import { decodeText, describeEncoding, type DecodedText } from './text-decoding.js';

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
    if (decoded.firstInvalidLine !== null) {
      diagnostics.push({
        file: path,
        line: decoded.firstInvalidLine,
        message: `not valid ${describeEncoding(decoded)}: these bytes were read as U+FFFD; save the file as UTF-8`,
      });
    }
    const refusal = strictReaderRefusal(path, decoded);
    if (refusal !== null) diagnostics.push({ file: path, message: refusal });
    return decoded.text;
  }

  function strictReaderRefusal(path: string, decoded: DecodedText): string | null {
    if (path === strict.pythonSource && decoded.byteOrderMark && decoded.encoding !== 'utf-8') {
      return `saved as ${describeEncoding(decoded)}: Python reads source files as UTF-8 and will not import this one; save it as UTF-8`;
    }
    if (path === strict.toml && (decoded.byteOrderMark || decoded.encoding !== 'utf-8')) {
      return `saved as ${describeEncoding(decoded)}: TOML must be UTF-8 with no byte-order mark, and Python's tomllib rejects this file; save it as UTF-8`;
    }
    return null;
  }
}
