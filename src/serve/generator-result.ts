import type { Value } from '../worker/protocol.js';

/**
 * A generator endpoint's answer, when it is not streamed, as the apipod toolkit gives it (and
 * so its clients read it): its chunks joined into one string when every chunk is text (an
 * LLM's tokens), else the list of its chunks. The chunks themselves stream as they come.
 */
export function generatorResult(chunks: Value): Value {
  if (!Array.isArray(chunks) || chunks.length === 0 || !chunks.every((chunk) => typeof chunk === 'string')) return chunks;
  return chunks.join('');
}
