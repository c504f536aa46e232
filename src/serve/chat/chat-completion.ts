import { isJsonObject, type Value } from '../../worker/protocol.js';
import { HttpError } from '../http-error.js';
import { ChoiceAssembler, deltasOf, isMessageLike, usageOf, type Delta } from './chat-deltas.js';
import { countTokens } from './token-count.js';

/** What svc knows about a completion before the function answers. */
export interface CompletionContext {
  /** `chatcmpl-` + hex. */
  id: string;
  /** Unix seconds. */
  created: number;
  /** The request's `model`, else the service's first model name. */
  model: string;
  promptTokens: number;
}

export type Usage = {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
};

export interface ChatChoice {
  index: number;
  message: { role: string; content: Value; [field: string]: Value };
  finish_reason: string | null;
  [field: string]: Value;
}

/** The OpenAI Chat Completions response object. */
export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: ChatChoice[];
  usage: Usage;
  [field: string]: Value;
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: { index: number; delta: Delta & { role?: string }; finish_reason: string | null; logprobs?: Value }[];
  usage?: Usage;
}

/**
 * Completes what a chat endpoint returned into a `chat.completion`. The function may
 * return a plain string, a ChatCompletionResponse (or a dict with its fields), one
 * message (`{"role", "content", "tool_calls"}`), or, as a generator, the list of what it
 * yielded (text, deltas, chunks), assembled as a client assembles a stream. svc fills in
 * whatever it left out: id, created, model, each choice's index, role and finish reason,
 * and usage counted by the simple tokenizer.
 */
export function completionFrom(value: Value, context: CompletionContext): ChatCompletion {
  const given = isJsonObject(value) && Array.isArray(value.choices) ? value : null;
  const choices = given ? (given.choices as Value[]).map(choiceFrom) : assembleChoices(value);
  const completionTokens = choices.reduce((total, choice) => total + countTokens(textOf(choice.message.content)), 0);
  // A generator's chunks may carry the backend's own count, the last one the whole.
  const chunkUsage = Array.isArray(value) ? value.map(usageOf).findLast((usage) => usage !== null) ?? null : null;
  return {
    ...given,
    id: typeof given?.id === 'string' ? given.id : context.id,
    object: 'chat.completion',
    created: typeof given?.created === 'number' ? given.created : context.created,
    model: typeof given?.model === 'string' ? given.model : context.model,
    choices,
    usage: usageFrom(given?.usage ?? chunkUsage, context.promptTokens, completionTokens),
  };
}

/** The text of one streamed item: a string, a message or delta object, or anything else as JSON. */
export function textOf(value: Value): string {
  if (typeof value === 'string') return value;
  if (value === null) return '';
  if (isJsonObject(value)) {
    if (typeof value.content === 'string' || value.content === null) return value.content ?? '';
    if (Array.isArray(value.content)) return value.content.map(textOf).join('');
    if (typeof value.text === 'string') return value.text;
    const choice = Array.isArray(value.choices) ? value.choices[0] : undefined;
    if (isJsonObject(choice)) return textOf(choice.delta ?? choice.message ?? null);
  }
  return JSON.stringify(value);
}

/** The closing chunk clients ask for with `stream_options.include_usage`: no choices, only usage. */
export function usageChunkOf(context: CompletionContext, usage: Usage): ChatCompletionChunk {
  return { id: context.id, object: 'chat.completion.chunk', created: context.created, model: context.model, choices: [], usage };
}

export function usageFrom(given: Value, promptTokens: number, completionTokens: number): Usage {
  const reported = isJsonObject(given) ? given : {};
  const prompt = typeof reported.prompt_tokens === 'number' ? reported.prompt_tokens : promptTokens;
  const completion = typeof reported.completion_tokens === 'number' ? reported.completion_tokens : completionTokens;
  const total = typeof reported.total_tokens === 'number' ? reported.total_tokens : prompt + completion;
  return { ...reported, prompt_tokens: prompt, completion_tokens: completion, total_tokens: total };
}

function assembleChoices(value: Value): ChatChoice[] {
  if (typeof value === 'string' || value === null || Array.isArray(value) || isMessageLike(value)) {
    const assembler = new ChoiceAssembler();
    for (const item of Array.isArray(value) ? value : [value]) for (const delta of deltasOf(item)) assembler.add(delta);
    return assembler.choices() as ChatChoice[];
  }
  throw new HttpError(
    500,
    'endpoint_error',
    'invalid_chat_result',
    `a chat endpoint returns a string, a ChatCompletionResponse, a dict with "choices", or yields text; this one returned ${describe(value)}`,
    // The function ran: the official clients' retries would run it again for the same answer.
    { headers: { 'x-should-retry': 'false' } },
  );
}

function choiceFrom(choice: Value, index: number): ChatChoice {
  if (typeof choice === 'string') return { index, message: { role: 'assistant', content: choice }, finish_reason: 'stop' };
  const given = isJsonObject(choice) ? choice : {};
  const message = isJsonObject(given.message) ? given.message : isJsonObject(given.delta) ? given.delta : {};
  return {
    ...given,
    index: typeof given.index === 'number' ? given.index : index,
    message: { ...message, role: typeof message.role === 'string' ? message.role : 'assistant', content: message.content ?? null },
    finish_reason: typeof given.finish_reason === 'string' ? given.finish_reason : 'stop',
  };
}

function describe(value: Value): string {
  if (isJsonObject(value)) return `an object with ${Object.keys(value).length === 0 ? 'no fields' : `fields ${Object.keys(value).join(', ')}`}`;
  return `a ${typeof value}`;
}
