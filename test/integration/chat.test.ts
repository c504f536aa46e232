import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson, startSvc, type RunningSvc } from '../support/server.js';
import { REPO_ROOT } from '../support/svc.js';

const KEY = 'chat-test-key-1';
const MESSAGES: OpenAI.Chat.ChatCompletionMessageParam[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Hello there, svc' },
];

function clientAt(baseURL: string, apiKey = KEY): OpenAI {
  return new OpenAI({ baseURL, apiKey, maxRetries: 0 });
}

async function streamedText(client: OpenAI, model = 'echo'): Promise<{ text: string; chunks: OpenAI.Chat.ChatCompletionChunk[] }> {
  const stream = await client.chat.completions.create({ model, messages: MESSAGES, stream: true, stream_options: { include_usage: true } });
  const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return { text: chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join(''), chunks };
}

describe('the official openai Node client against svc start examples/chat with SERVICE_API_KEY', () => {
  let server: RunningSvc;
  beforeAll(async () => {
    server = await startSvc([join(REPO_ROOT, 'examples/chat')], { SERVICE_API_KEY: KEY });
  });
  afterAll(async () => {
    await server?.stop();
  });

  const baseUrls = {
    '/v1': (url: string) => `${url}/v1`,
    "the endpoint's path": (url: string) => `${url}/chat`,
    'the server root': (url: string) => url,
  };

  for (const [name, baseUrl] of Object.entries(baseUrls)) {
    it(`completes a chat with the base URL at ${name}`, async () => {
      const completion = await clientAt(baseUrl(server.url)).chat.completions.create({ model: 'echo', messages: MESSAGES });
      expect(completion).toMatchObject({
        object: 'chat.completion',
        model: 'echo',
        choices: [{ index: 0, message: { role: 'assistant', content: 'You said: Hello there, svc' }, finish_reason: 'stop' }],
        // The simple tokenizer: words and punctuation marks; 3 + 4 prompt, 7 completion.
        usage: { prompt_tokens: 7, completion_tokens: 7, total_tokens: 14 },
      });
      expect(completion.id).toMatch(/^chatcmpl-[0-9a-f]+$/);
      expect(Math.abs(completion.created - Date.now() / 1000)).toBeLessThan(60);
    });

    it(`streams a chat word by word with the base URL at ${name}`, async () => {
      const { text, chunks } = await streamedText(clientAt(baseUrl(server.url)));
      expect(text).toBe('You said: Hello there, svc');
      expect(chunks.every((chunk) => chunk.object === 'chat.completion.chunk' && chunk.model === 'echo')).toBe(true);
      expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1);
      expect(chunks[0]?.choices[0]?.delta.role).toBe('assistant');
      // One chunk per word, between the role chunk and the finish chunk, then the usage chunk.
      expect(chunks.filter((chunk) => chunk.choices[0]?.delta.content).length).toBe(5);
      expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe('stop');
      expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 7, completion_tokens: 7, total_tokens: 14 } });
    });
  }

  it('ends the event stream with data: [DONE]', async () => {
    const response = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'echo', messages: MESSAGES, stream: true }),
    });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = (await response.text()).split('\n\n').filter(Boolean);
    expect(events.at(-1)).toBe('data: [DONE]');
    expect(events.slice(0, -1).every((event) => event.startsWith('data: {'))).toBe(true);
  });

  it('answers another method at a chat URL with 405 and Allow: POST, as at any endpoint', async () => {
    for (const path of ['/chat', '/v1/chat/completions']) {
      const response = await fetch(`${server.url}${path}`, { method: 'PUT', headers: { authorization: `Bearer ${KEY}` } });
      expect([path, response.status, response.headers.get('allow')]).toEqual([path, 405, 'POST']);
    }
  });

  it('lists the service title as its model', async () => {
    const models = [];
    for await (const model of clientAt(`${server.url}/v1`).models.list()) models.push(model.id);
    expect(models).toEqual(['echo']);
    expect((await clientAt(`${server.url}/v1`).models.retrieve('echo')).id).toBe('echo');
  });

  it('documents the chat endpoint with the chat request as its body', async () => {
    const document: any = await (await fetch(`${server.url}/openapi.json`)).json();
    const schema = document.paths['/chat'].post.requestBody.content['application/json'].schema;
    expect(schema.properties).toHaveProperty('messages');
    expect(document.paths['/v1/chat/completions'].post.operationId).toBe('chat_completions');
  });

  it('echoes whatever model the client names', async () => {
    const completion = await clientAt(`${server.url}/v1`).chat.completions.create({ model: 'gpt-4o-mini', messages: MESSAGES });
    expect(completion.model).toBe('gpt-4o-mini');
  });

  it('accepts fields it does not know and ignores them', async () => {
    const completion = await clientAt(`${server.url}/v1`).chat.completions.create({
      model: 'echo',
      messages: MESSAGES,
      temperature: 0.1,
      top_p: 0.5,
      n: 1,
      stop: ['\n'],
      user: 'ada',
      response_format: { type: 'text' },
      // @ts-expect-error a field no client knows yet
      not_a_chat_field: { any: 'thing' },
    });
    expect(completion.choices[0]?.message.content).toBe('You said: Hello there, svc');
  });

  it('raises AuthenticationError for a wrong key, plain or streaming', async () => {
    const wrong = clientAt(`${server.url}/v1`, 'not-the-key');
    const plain = await wrong.chat.completions.create({ model: 'echo', messages: MESSAGES }).catch((error: unknown) => error);
    expect(plain).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(plain).toMatchObject({ status: 401, type: 'authentication_error' });
    const streaming = await wrong.chat.completions.create({ model: 'echo', messages: MESSAGES, stream: true }).catch((error: unknown) => error);
    expect(streaming).toBeInstanceOf(OpenAI.AuthenticationError);
    await expect(wrong.models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });

  it('raises BadRequestError with svc message when the messages are missing', async () => {
    const client = clientAt(`${server.url}/v1`);
    // @ts-expect-error messages left out on purpose
    const error = await client.chat.completions.create({ model: 'echo' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error).toMatchObject({ status: 400, type: 'invalid_request', code: 'invalid_input' });
    expect((error as Error).message).toBe('400 invalid input: messages: is required');
    const noRole = await client.chat.completions
      .create({ model: 'echo', messages: [{ content: 'who am I?' }] as never })
      .catch((caught: unknown) => caught);
    expect(noRole).toBeInstanceOf(OpenAI.BadRequestError);
    expect((noRole as Error).message).toBe('400 invalid input: messages[0].role: is required');
    const none = await client.chat.completions.create({ model: 'echo', messages: [] }).catch((caught: unknown) => caught);
    expect(none).toBeInstanceOf(OpenAI.BadRequestError);
    expect((none as Error).message).toBe('400 invalid input: messages: must not be empty');
  });

  it("answers the same error shape on chat routes without a client: 400 at the Chat Completions URLs, the apipod toolkit's 422 at the endpoint's path", async () => {
    const headers = { authorization: `Bearer ${KEY}` };
    const missing = await postJson(`${server.url}/v1/chat/completions`, { model: 'echo' }, headers);
    expect(missing).toMatchObject({
      status: 400,
      body: { error: { type: 'invalid_request', code: 'invalid_input', detail: [{ field: 'messages', message: 'is required' }] } },
    });
    const atPath = await postJson(`${server.url}/chat`, { model: 'echo' }, headers);
    expect(atPath).toMatchObject({ status: 422, body: { error: { type: 'validation_error', detail: [{ field: 'messages', message: 'is required' }] } } });
    const unknownRole = await postJson(`${server.url}/chat`, { messages: [{ role: 'nobody', content: 'hi' }] }, headers);
    expect([unknownRole.status, unknownRole.body.error.detail[0].field]).toEqual([422, 'messages[0].role']);
    expect((await postJson(`${server.url}/v1/chat/completions`, { messages: [{ role: 'nobody', content: 'hi' }] }, headers)).status).toBe(400);
    const smuggled = await postJson(`${server.url}/v1/chat/completions`, { messages: [{ role: 'user', content: { $file: { path: '/etc/passwd' } } }] }, headers);
    expect(smuggled.status).toBe(400);
    const noKey = await postJson(`${server.url}/v1/chat/completions`, { messages: MESSAGES });
    expect(noKey.status).toBe(401);
    expect(noKey.body.error).toMatchObject({ type: 'authentication_error', message: expect.any(String) });
  });
});

describe('chat endpoints answering in every shape', () => {
  let server: RunningSvc;
  let client: (path: string) => OpenAI;
  /** A client that retries as the SDK does by default, and how many requests it sent. */
  const countingClient = (path: string) => {
    let sent = 0;
    const counting: typeof fetch = (input, init) => {
      sent += 1;
      return fetch(input, init);
    };
    return { retrying: new OpenAI({ baseURL: `${server.url}${path}`, apiKey: 'unused', maxRetries: 2, fetch: counting }), requests: () => sent };
  };
  beforeAll(async () => {
    server = await startSvc([join(REPO_ROOT, 'test/fixtures/chat/behaviours.py'), '--endpoint-timeout', '/slow=1']);
    client = (path) => clientAt(`${server.url}${path}`, 'unused');
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('passes the request with its unknown fields to the function, and serves the first chat endpoint at /v1/chat/completions', async () => {
    // vLLM's guided_json is no field of OpenAI's request: the function finds it in `extra`.
    const request = { model: 'm', messages: MESSAGES, seed: 1, metadata: { a: 'b' }, guided_json: { type: 'object' } };
    const completion = await client('/v1').chat.completions.create(request as Parameters<ReturnType<typeof client>['chat']['completions']['create']>[0] & { stream?: false });
    expect(completion.choices[0]?.message.content).toBe("2 messages, model m, extra ['guided_json']");
  });

  it('sends each piece as the function yields it, not once the function ends', async () => {
    // The function waits for a file before its second word: were its first held back, the file would never be made.
    const gate = join(mkdtempSync(join(tmpdir(), 'svc-chat-gate-')), 'open');
    const request = { model: 'm', messages: MESSAGES, stream: true as const, gate };
    const stream = await client('/gated').chat.completions.create(request);
    const texts: string[] = [];
    for await (const chunk of stream) {
      const text = chunk.choices[0]?.delta.content;
      if (!text) continue;
      texts.push(text);
      if (texts.length === 1) writeFileSync(gate, '');
    }
    expect(texts).toEqual(['first', ' second']);
  });

  it('streams the answer of a function that is not a generator as one chunk', async () => {
    const { text, chunks } = await streamedText(client('/plain'), 'm');
    expect(text).toBe('2 messages, model m, extra []');
    expect(chunks.filter((chunk) => chunk.choices[0]?.delta.content).length).toBe(1);
  });

  it("keeps the function's own model, usage and finish reason, and fills in the rest", async () => {
    const completion = await client('/response').chat.completions.create({ model: 'asked-for', messages: MESSAGES });
    expect(completion).toMatchObject({
      object: 'chat.completion',
      model: 'behaviours-1',
      choices: [{ index: 0, message: { role: 'assistant', content: 'counted by the function' }, finish_reason: 'length' }],
      usage: { prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 },
    });
    const { chunks } = await streamedText(client('/response'));
    expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe('length');
    expect(chunks.at(-1)?.usage).toEqual({ prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 });
  });

  it('hands tool calls to the client whole or streamed, as its own stream assembler rebuilds them', async () => {
    const weather = { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } };
    for (const path of ['/tools', '/tool-deltas']) {
      const whole = await client(path).chat.completions.create({ model: 'm', messages: MESSAGES });
      expect(whole.choices[0], path).toMatchObject({ message: { content: null, tool_calls: [weather] }, finish_reason: 'tool_calls' });
      const streamed = await client(path).chat.completions.stream({ model: 'm', messages: MESSAGES }).finalChatCompletion();
      expect(streamed.choices[0], `${path}, streamed`).toMatchObject({ message: { tool_calls: [weather] }, finish_reason: 'tool_calls' });
    }
  });

  it("reads the openai SDK's own objects a proxying function returns or yields as the completions they are", async () => {
    const whole = await client('/sdk-completion').chat.completions.create({ model: 'm', messages: MESSAGES });
    expect(whole.choices[0]?.message.content).toBe('proxied whole');
    const { text } = await streamedText(client('/sdk-chunks'), 'm');
    expect(text).toBe('proxied words');
  });

  it("passes a backend's reasoning, log probabilities, refusal and usage through, streamed or whole", async () => {
    const whole = await client('/reasoning').chat.completions.create({ model: 'm', messages: MESSAGES });
    expect(whole.choices[0]?.message).toMatchObject({ content: 'Hi', reasoning_content: 'thinking hard' });
    expect(whole.choices[0]?.logprobs?.content?.map((entry) => entry.token)).toEqual(['Hi']);
    expect(whole.usage).toEqual({ prompt_tokens: 11, completion_tokens: 1, total_tokens: 12 });
    const { text, chunks } = await streamedText(client('/reasoning'), 'm');
    expect(text).toBe('Hi');
    const deltas = chunks.map((chunk) => chunk.choices[0]?.delta as { reasoning_content?: string } | undefined);
    expect(deltas.map((delta) => delta?.reasoning_content ?? '').join('')).toBe('thinking hard');
    expect(chunks.flatMap((chunk) => chunk.choices[0]?.logprobs?.content ?? []).map((entry) => entry.token)).toEqual(['Hi']);
    expect(chunks.at(-1)?.usage).toEqual({ prompt_tokens: 11, completion_tokens: 1, total_tokens: 12 });
    const refused = await client('/refusal').chat.completions.stream({ model: 'm', messages: MESSAGES }).finalChatCompletion();
    expect(refused.choices[0]?.message).toMatchObject({ content: null, refusal: "I can't help with that" });
  });

  it('streams every choice of an answer with several', async () => {
    const streamed = await client('/two-choices').chat.completions.stream({ model: 'm', messages: MESSAGES }).finalChatCompletion();
    expect(streamed.choices.map((choice) => [choice.index, choice.message.content, choice.finish_reason])).toEqual([
      [0, 'first', 'stop'],
      [1, 'second', 'stop'],
    ]);
  });

  it('raises InternalServerError with the exception, once, without the client retrying', async () => {
    const { retrying, requests } = countingClient('/fails');
    const error = await retrying.chat.completions.create({ model: 'm', messages: MESSAGES }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect((error as Error).message).toBe('500 ValueError: the model is unhappy');
    expect(requests()).toBe(1);
    const streaming = await retrying.chat.completions.create({ model: 'm', messages: MESSAGES, stream: true }).catch((caught: unknown) => caught);
    expect(streaming).toBeInstanceOf(OpenAI.InternalServerError);
  });

  it('is not retried by the client when the worker crashes or the call times out: it would crash or run as long again', async () => {
    for (const [path, status] of [['/crash', 500], ['/slow', 504]] as const) {
      const { retrying, requests } = countingClient(path);
      const error = await retrying.chat.completions.create({ model: 'm', messages: MESSAGES }).catch((caught: unknown) => caught);
      expect((error as InstanceType<typeof OpenAI.APIError>).status, path).toBe(status);
      expect(requests(), path).toBe(1);
    }
  });

  it('ends a stream that fails midway with an error event the client raises', async () => {
    const stream = await client('/fails-midway').chat.completions.create({ model: 'm', messages: MESSAGES, stream: true });
    const texts: string[] = [];
    const error = await (async () => {
      for await (const chunk of stream) texts.push(chunk.choices[0]?.delta.content ?? '');
    })().catch((caught: unknown) => caught);
    expect(texts.join('')).toBe('first words');
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as Error).message).toContain('RuntimeError: lost the thread');
  });

  it('cancels the call of a client that leaves its stream, freeing the worker', async () => {
    const stream = await client('/long').chat.completions.create({ model: 'm', messages: MESSAGES, stream: true });
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta.content) break; // leaving the loop aborts the request
    }
    // One worker: the next call waits for the long one unless it was cancelled.
    await client('/plain').chat.completions.create({ model: 'm', messages: MESSAGES });
    expect(server.logs()).not.toContain('long finished');
    await expect.poll(() => server.logs()).toMatch(/^POST \/long\/chat\/completions 200 \d+ms \(the client left\)$/m); // request lines come within 50 ms
  });

  it('cuts a chat call off at its endpoint time-out: a 504, or an error event once the stream began', async () => {
    const whole = await client('/slow').chat.completions.create({ model: 'm', messages: MESSAGES }).catch((caught: unknown) => caught);
    expect(whole).toBeInstanceOf(OpenAI.APIError);
    expect((whole as InstanceType<typeof OpenAI.APIError>).status).toBe(504);
    const stream = await client('/slow').chat.completions.create({ model: 'm', messages: MESSAGES, stream: true });
    const error = await (async () => {
      for await (const _chunk of stream) {
        // read until the time-out ends the stream
      }
    })().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as Error).message).toContain('the call ran longer than the time-out of /slow, 1 s');
  });

  it('leaves a URL an ordinary endpoint serves to that endpoint', async () => {
    expect(await (await fetch(`${server.url}/v1/models`)).json()).toEqual({ mine: true });
    const models = [];
    for await (const model of client('/plain').models.list()) models.push(model.id);
    expect(models).toEqual(['behaviours']);
  });
});
