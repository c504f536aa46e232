import { isJsonObject, type Value } from '../../worker/protocol.js';

type JsonObject = { [key: string]: Value };

/**
 * Text fields of a message besides its content, which OpenAI-compatible servers stream as
 * deltas too: a model's reasoning (vLLM's reasoning parsers, DeepSeek) and a refusal.
 */
const TEXT_FIELDS = ['reasoning_content', 'reasoning', 'refusal'] as const;
type TextField = (typeof TEXT_FIELDS)[number];

/** What one streamed piece adds to a choice: text, tool-call fragments (each with its `index`), reasoning or refusal text. */
export type Delta = {
  content?: string;
  tool_calls?: JsonObject[];
} & Partial<Record<TextField, string>>;

export interface ChoiceDelta {
  index: number;
  delta: Delta;
  finishReason: string | null;
  /** The choice's log probabilities for this piece, as the function's chunk gave them. */
  logprobs?: Value;
}

/** One assembled choice of a chat completion. */
export interface AssembledChoice {
  index: number;
  message: { role: string; content: string | null; tool_calls?: JsonObject[] } & Partial<Record<TextField, string>>;
  finish_reason: string;
  logprobs?: Value;
}

/**
 * What one item a chat function yields (or returns) stands for, choice by choice: text; a
 * message or delta object (`{"content": ...}`, `{"tool_calls": [...]}`); or a whole
 * chat.completion.chunk (`{"choices": [{"index", "delta", "finish_reason"}]}`). Anything
 * else is sent as its JSON text, as a generator yielding numbers would expect.
 */
export function deltasOf(item: Value): ChoiceDelta[] {
  if (item === null) return [];
  if (typeof item === 'string') return [{ index: 0, delta: { content: item }, finishReason: null }];
  if (isJsonObject(item) && Array.isArray(item.choices)) {
    return item.choices.filter(isJsonObject).map((choice, position) => ({
      index: typeof choice.index === 'number' ? choice.index : position,
      delta: deltaFrom(isJsonObject(choice.delta) ? choice.delta : isJsonObject(choice.message) ? choice.message : {}),
      finishReason: typeof choice.finish_reason === 'string' ? choice.finish_reason : null,
      ...(isJsonObject(choice.logprobs) ? { logprobs: choice.logprobs } : {}),
    }));
  }
  if (isMessageLike(item)) return [{ index: 0, delta: deltaFrom(item), finishReason: null }];
  return [{ index: 0, delta: { content: JSON.stringify(item) }, finishReason: null }];
}

/** A message or delta object: what a chat function may return whole, besides text and a response. */
export function isMessageLike(value: Value): value is JsonObject {
  return isJsonObject(value) && ('content' in value || 'tool_calls' in value || typeof value.text === 'string');
}

export function isEmptyDelta(delta: Delta): boolean {
  return !delta.content && !delta.tool_calls?.length && TEXT_FIELDS.every((field) => !delta[field]);
}

/** The usage a function's own chunk reports (a backend's count), if it is one that does. */
export function usageOf(item: Value): JsonObject | null {
  return isJsonObject(item) && Array.isArray(item.choices) && isJsonObject(item.usage) ? item.usage : null;
}

/**
 * Folds deltas into one message per choice, as a client assembling a stream does: text
 * joined, tool-call fragments of one `index` merged (their `function.arguments` joined).
 */
interface ChoiceSoFar {
  text: string;
  toolCalls: Map<number, JsonObject>;
  finishReason: string | null;
  texts: Partial<Record<TextField, string>>;
  logprobs: Value[];
}

export class ChoiceAssembler {
  private readonly byIndex = new Map<number, ChoiceSoFar>();

  add({ index, delta, finishReason, logprobs }: ChoiceDelta): void {
    const choice: ChoiceSoFar = this.byIndex.get(index) ?? { text: '', toolCalls: new Map(), finishReason: null, texts: {}, logprobs: [] };
    this.byIndex.set(index, choice);
    choice.text += delta.content ?? '';
    for (const field of TEXT_FIELDS) if (delta[field]) choice.texts[field] = `${choice.texts[field] ?? ''}${delta[field]}`;
    for (const fragment of delta.tool_calls ?? []) {
      const position = fragment.index as number;
      choice.toolCalls.set(position, mergeToolCall(choice.toolCalls.get(position), fragment));
    }
    choice.finishReason = finishReason ?? choice.finishReason;
    if (isJsonObject(logprobs) && Array.isArray(logprobs.content)) choice.logprobs.push(...logprobs.content);
  }

  /** Every choice seen, by index; at least choice 0. */
  choices(): AssembledChoice[] {
    if (this.byIndex.size === 0) this.add({ index: 0, delta: {}, finishReason: null });
    return [...this.byIndex.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, { text, toolCalls, finishReason, texts, logprobs }]) => {
        const calls = [...toolCalls.entries()].sort(([a], [b]) => a - b).map(([, call]) => withoutIndex(call));
        const content = text === '' && (calls.length > 0 || texts.refusal) ? null : text;
        return {
          index,
          message: { role: 'assistant', content, ...texts, ...(calls.length ? { tool_calls: calls } : {}) },
          finish_reason: finishReason ?? (calls.length > 0 ? 'tool_calls' : 'stop'),
          ...(logprobs.length ? { logprobs: { content: logprobs } } : {}),
        };
      });
  }

  /** All text of all choices, for counting tokens. */
  get text(): string {
    return [...this.byIndex.values()].map((choice) => choice.text).join('');
  }
}

/** Tool calls as stream fragments, each numbered with its `index`. */
function toolCallDeltas(calls: Value | undefined): JsonObject[] | undefined {
  if (!Array.isArray(calls)) return undefined;
  return calls.filter(isJsonObject).map((call, position) => ({ index: typeof call.index === 'number' ? call.index : position, ...call }));
}

/** The text, tool calls, reasoning and refusal of a message or delta object, as one delta. */
export function deltaFrom(object: JsonObject): Delta {
  const content = contentText(object);
  const toolCalls = toolCallDeltas(object.tool_calls);
  const texts = Object.fromEntries(TEXT_FIELDS.flatMap((field) => (typeof object[field] === 'string' && object[field] !== '' ? [[field, object[field]]] : [])));
  return { ...(content !== '' ? { content } : {}), ...texts, ...(toolCalls?.length ? { tool_calls: toolCalls } : {}) };
}

function contentText(object: JsonObject): string {
  const { content } = object;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => (typeof part === 'string' ? part : isJsonObject(part) ? contentText(part) : '')).join('');
  return typeof object.text === 'string' ? object.text : '';
}

function mergeToolCall(known: JsonObject | undefined, fragment: JsonObject): JsonObject {
  if (known === undefined) return { ...fragment, function: isJsonObject(fragment.function) ? { ...fragment.function } : fragment.function ?? null };
  const merged: JsonObject = { ...known, ...fragment };
  if (isJsonObject(known.function) && isJsonObject(fragment.function)) {
    const joined = `${stringOr(known.function.arguments)}${stringOr(fragment.function.arguments)}`;
    merged.function = { ...known.function, ...fragment.function, arguments: joined };
  }
  return merged;
}

function withoutIndex(call: JsonObject): JsonObject {
  const { index: _index, ...rest } = call;
  return rest;
}

function stringOr(value: Value | undefined): string {
  return typeof value === 'string' ? value : '';
}
