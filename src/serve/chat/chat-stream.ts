import { isJsonObject, type Value } from '../../worker/protocol.js';
import type { CallOutcome } from '../../worker/worker-process.js';
import { HttpError } from '../http-error.js';
import { completionFrom, usageChunkOf, usageFrom, type ChatCompletionChunk, type CompletionContext } from './chat-completion.js';
import { ChoiceAssembler, deltaFrom, deltasOf, isEmptyDelta, usageOf, type ChoiceDelta } from './chat-deltas.js';
import { countTokens } from './token-count.js';

/**
 * The chunks a running call yields, as an async iterable that ends with the call. Chunks
 * arrive from the pool's `onChunk` callback faster or slower than the client reads them;
 * they wait here in order, and come out together: all that arrived since the last batch.
 * A batch rather than a chunk at a time: each step of an async iteration is a turn through
 * the promise queue, and a quick generator's chunks arrive many to a read of its pipe.
 */
export class ChunkFeed implements AsyncIterable<Value[]> {
  private readonly items: Value[] = [];
  private isClosed = false;
  private wake: (() => void) | null = null;
  private markStarted!: () => void;
  /** Resolves at the first chunk or when the call ends without one. */
  readonly started = new Promise<void>((resolve) => (this.markStarted = resolve));

  push(value: Value): void {
    this.items.push(value);
    this.markStarted();
    this.wake?.();
  }

  close(): void {
    this.isClosed = true;
    this.markStarted();
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Value[]> {
    for (;;) {
      if (this.items.length > 0) {
        yield this.items.splice(0);
      } else if (this.isClosed) {
        return;
      } else {
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = null;
      }
    }
  }
}

export interface StreamOptions {
  context: CompletionContext;
  /** `stream_options.include_usage`: end with a chunk holding only usage, as OpenAI does. */
  includeUsage: boolean;
  /** The HTTP error an unsuccessful outcome stands for; it becomes an `error` event. */
  failureOf: (outcome: Exclude<CallOutcome, { kind: 'result' }>) => HttpError;
}

/**
 * Server-sent events for a streamed completion (the OpenAI wire format): a first chunk per
 * choice with the assistant role, one chunk per piece of text or tool-call fragment the
 * function yields, a last chunk per choice with its finish reason, then `data: [DONE]`. A
 * function that is not a generator has each choice of its whole answer sent as one chunk,
 * tool calls included. A failure after the stream began is an `{"error": ...}` event,
 * which the official clients raise as an APIError; no `[DONE]` follows it.
 */
export async function* completionEvents(feed: ChunkFeed, outcome: Promise<CallOutcome>, options: StreamOptions): AsyncGenerator<string> {
  const { context } = options;
  const chunkEvent = chunkEventsOf(context);
  const started = new Set<number>();
  const deltaEvents = function* (delta: ChoiceDelta): Generator<string> {
    if (!started.has(delta.index)) {
      started.add(delta.index);
      yield chunkEvent({ role: 'assistant', content: '' }, null, delta.index);
    }
    if (!isEmptyDelta(delta.delta) || delta.logprobs !== undefined) yield chunkEvent(delta.delta, null, delta.index, delta.logprobs);
  };
  yield* deltaEvents({ index: 0, delta: {}, finishReason: null });
  const assembler = new ChoiceAssembler();
  let streamed = false;
  let functionUsage: Value = null;
  for await (const values of feed) {
    streamed = true;
    let events = ''; // a batch's events in one piece: one step of the response's stream for them all
    for (const value of values) {
      functionUsage = usageOf(value) ?? functionUsage;
      for (const delta of deltasOf(value)) {
        assembler.add(delta);
        for (const text of deltaEvents(delta)) events += text;
      }
    }
    if (events !== '') yield events;
  }
  const ended = await outcome;
  if (ended.kind !== 'result') {
    yield event(options.failureOf(ended).toBody());
    return;
  }
  let choices: Array<{ index: number; finish_reason: string | null }> = assembler.choices();
  // Counted over the whole answer: a word split across chunks is one token, as when not streaming.
  let usage = usageFrom(functionUsage, context.promptTokens, countTokens(assembler.text));
  if (!streamed) {
    // Not a generator: the completed answer, each choice sent whole.
    let completion;
    try {
      completion = completionFrom(ended.value, context);
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
      yield event(error.toBody());
      return;
    }
    for (const choice of completion.choices) {
      const logprobs = isJsonObject(choice.logprobs) ? { logprobs: choice.logprobs } : {};
      yield* deltaEvents({ index: choice.index, delta: deltaFrom(choice.message), finishReason: null, ...logprobs });
    }
    choices = completion.choices;
    usage = completion.usage;
  }
  for (const choice of choices) yield chunkEvent({}, choice.finish_reason ?? 'stop', choice.index);
  if (options.includeUsage) yield event(usageChunkOf(context, usage));
  yield 'data: [DONE]\n\n';
}

function event(data: object): string {
  return `data: ${JSON.stringify(data)}\n\n`;
}

/**
 * The events of a completion's `chat.completion.chunk`s, one choice each, as JSON.stringify
 * writes such an object, with what every chunk of the completion shares (id, object,
 * created, model) written once: a streamed token's chunk is mostly those fields.
 */
export function chunkEventsOf(context: CompletionContext): (delta: ChatCompletionChunk['choices'][number]['delta'], finishReason: string | null, index: number, logprobs?: Value) => string {
  const head = `data: {"id":${JSON.stringify(context.id)},"object":"chat.completion.chunk","created":${JSON.stringify(context.created)},"model":${JSON.stringify(context.model)},"choices":[{"index":`;
  return (delta, finishReason, index, logprobs) =>
    `${head}${JSON.stringify(index)},"delta":${JSON.stringify(delta)},"finish_reason":${JSON.stringify(finishReason)}${logprobs === undefined ? '' : `,"logprobs":${JSON.stringify(logprobs)}`}}]}\n\n`;
}
