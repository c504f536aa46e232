import { describe, expect, it } from 'vitest';
import { chunkEventsOf } from '../../src/serve/chat/chat-stream.js';

describe('chunkEventsOf', () => {
  it("writes each chunk's event as JSON.stringify writes the chunk object OpenAI's clients read", () => {
    const context = { id: 'chatcmpl-1f', created: 1_790_000_000, model: 'qwen "2.5" \u2028 7b', promptTokens: 3 };
    const chunkEvent = chunkEventsOf(context);
    const cases = [
      { delta: { role: 'assistant', content: '' }, finish: null, index: 0 },
      { delta: { content: ' token "é"\n' }, finish: null, index: 1 },
      { delta: {}, finish: 'stop', index: 0 },
      { delta: { content: 'x' }, finish: null, index: 2, logprobs: { content: [{ token: 'x', logprob: -0.25 }] } },
      { delta: { tool_calls: [{ index: 0, function: { arguments: '{"a":' } }] }, finish: null, index: 0, logprobs: null },
    ];
    for (const { delta, finish, index, logprobs } of cases) {
      const choice = { index, delta, finish_reason: finish, ...(logprobs !== undefined ? { logprobs } : {}) };
      const chunk = { id: context.id, object: 'chat.completion.chunk', created: context.created, model: context.model, choices: [choice] };
      expect(chunkEvent(delta, finish, index, logprobs)).toBe(`data: ${JSON.stringify(chunk)}\n\n`);
    }
  });
});
