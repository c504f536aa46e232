/**
 * A media parameter's long base64 string, decoded by the gateway: Node decodes 2 MB of base64
 * in ~1 ms (most of it making the string), Python's binascii in ~4 ms, and the worker then
 * reads the bytes as it reads an upload. Only text the worker would read the same way
 * (python/apipod/media.py, _decode_base64) is decoded here; anything else (a data URL, a
 * space, a stray character, padding the worker would refuse) is left to the worker, which
 * reads it or says what is wrong with it.
 */

const EQUALS = 0x3d;
/**
 * Decoded this many characters (a multiple of 4) at a time: a slice's string is small enough
 * for V8's young generation, where the whole text as one string (2 MB for a photo) would go
 * to its old one and bring the gateway's next full garbage collection closer.
 */
const SLICE_CHARS = 64 * 1024;
/** The `=` a run of data characters must end with, by its length modulo 4 (1 is never valid). */
const PADDING_FOR = [0, null, 2, 1] as const;

/** The bytes `text` (base64 as UTF-8 bytes) stands for, or null when the worker should read it. */
export function decodePlainBase64(text: Buffer): Buffer | null {
  let end = text.length;
  while (end > 0 && text[end - 1] === EQUALS) end -= 1;
  const padding = PADDING_FOR[end % 4];
  // The worker adds what padding is missing: the `=` sent and added together must be what the data needs.
  if (end === 0 || padding === null || text.length - end + ((4 - (text.length % 4)) % 4) !== padding) return null;
  const equals = text.indexOf(EQUALS);
  if (equals !== -1 && equals < end) return null;
  // The URL-safe alphabet, or the standard one, but not both in one text (the worker refuses that).
  const urlSafe = text.includes(0x2d) || text.includes(0x5f);
  if (urlSafe && (text.includes(0x2b) || text.includes(0x2f))) return null;
  const decoded = Buffer.allocUnsafe(Math.floor((end * 3) / 4));
  let written = 0;
  for (let start = 0; start < text.length; start += SLICE_CHARS) {
    written += decoded.write(text.toString('latin1', start, start + SLICE_CHARS), written, 'base64');
  }
  // Node skips what is not base64 where the worker refuses it: then fewer bytes come out.
  return written === decoded.length ? decoded : null;
}
