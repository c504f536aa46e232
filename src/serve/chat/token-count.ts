import type { Value } from '../../worker/protocol.js';

// A word (letters, digits, underscore, any script) or a single other visible character.
const TOKEN = /[\p{L}\p{N}_]+|[^\p{L}\p{N}_\s]/gu;

/**
 * A rough token count for `usage` when the function reports none: words and punctuation
 * marks count one each. It is not any model's tokenizer; it only has to be stable, cheap,
 * and in the right order of magnitude for clients that show or budget usage.
 */
export function countTokens(text: string): number {
  return text.match(TOKEN)?.length ?? 0;
}

/** Tokens in the prompt: each message's text (string content or the text parts of a multimodal list). */
export function countPromptTokens(messages: readonly Value[]): number {
  return messages.reduce<number>((total, message) => total + countTokens(messageText(message)), 0);
}

function messageText(message: Value): string {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return '';
  const content = message.content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) => (typeof part === 'object' && part !== null && !Array.isArray(part) && typeof part.text === 'string' ? part.text : ''))
    .join(' ');
}
