import { describe, expect, it } from 'vitest';
import { completionFrom, textOf } from '../../src/serve/chat/chat-completion.js';
import { countPromptTokens, countTokens } from '../../src/serve/chat/token-count.js';
import { HttpError } from '../../src/serve/http-error.js';

const context = { id: 'chatcmpl-abc', created: 1700000000, model: 'echo', promptTokens: 4 };

describe('completing what a chat function returned', () => {
  it('turns a plain string into one assistant choice with counted usage', () => {
    expect(completionFrom('Hello, world!', context)).toEqual({
      id: 'chatcmpl-abc',
      object: 'chat.completion',
      created: 1700000000,
      model: 'echo',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello, world!' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 4, completion_tokens: 4, total_tokens: 8 },
    });
  });

  it("joins a generator's chunks into the answer", () => {
    expect(completionFrom(['You', ' said:', ' hi'], context).choices[0]?.message.content).toBe('You said: hi');
  });

  it('takes a returned message as the answer', () => {
    expect(completionFrom({ role: 'assistant', content: 'ok' }, context).choices[0]?.message.content).toBe('ok');
  });

  it('keeps what a ChatCompletionResponse gives and fills in what it leaves null', () => {
    const response = {
      id: 'chatcmpl-own',
      object: 'chat.completion',
      created: 1,
      model: null,
      choices: [{ message: { content: 'a b' } }, 'second'],
      usage: { completion_tokens: 9 },
    };
    expect(completionFrom(response, context)).toEqual({
      id: 'chatcmpl-own',
      object: 'chat.completion',
      created: 1,
      model: 'echo',
      choices: [
        { index: 0, message: { role: 'assistant', content: 'a b' }, finish_reason: 'stop' },
        { index: 1, message: { role: 'assistant', content: 'second' }, finish_reason: 'stop' },
      ],
      usage: { prompt_tokens: 4, completion_tokens: 9, total_tokens: 13 },
    });
  });

  it('says what it got when the function returns something that is no answer', () => {
    const failure = (() => {
      try {
        completionFrom(42, context);
      } catch (error) {
        return error;
      }
    })();
    expect(failure).toBeInstanceOf(HttpError);
    expect(failure).toMatchObject({ status: 500, code: 'invalid_chat_result', message: expect.stringContaining('returned a number') });
    // The function has run: the official clients must not run it twice more for the same answer.
    expect(failure).toMatchObject({ extra: { headers: { 'x-should-retry': 'false' } } });
  });
});

describe('the text of a streamed item', () => {
  it('reads strings, messages, deltas and OpenAI-shaped chunks', () => {
    expect(textOf('a')).toBe('a');
    expect(textOf(null)).toBe('');
    expect(textOf({ content: 'b' })).toBe('b');
    expect(textOf({ choices: [{ delta: { content: 'c' } }] })).toBe('c');
    expect(textOf(3)).toBe('3');
  });
});

describe('the simple tokenizer', () => {
  it('counts words and punctuation marks, in any script', () => {
    expect(countTokens('')).toBe(0);
    expect(countTokens("Hello, world! It's 2024.")).toBe(9); // It ' s: the apostrophe counts
    expect(countTokens('Grüße aus Köln')).toBe(3);
    expect(countPromptTokens([{ role: 'user', content: 'one two' }, { role: 'user', content: [{ type: 'text', text: 'three' }] }, { role: 'tool' }])).toBe(3);
  });
});
