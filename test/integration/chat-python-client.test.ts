import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSvc, type RunningSvc } from '../support/server.js';
import { REPO_ROOT } from '../support/svc.js';

const KEY = 'chat-python-key-1';
const CLIENT_SCRIPT = join(REPO_ROOT, 'test/fixtures/chat/openai_python_client.py');

/** What the official `openai` Python package (pip install openai) saw; see the script. */
interface Seen {
  completions: Record<string, any>;
  streams: Record<string, any[]>;
  models: string[];
  wrong_key: Record<string, unknown>;
  wrong_key_stream: Record<string, unknown>;
  missing_messages: Record<string, unknown>;
}

describe('the official openai Python client against svc start examples/chat with SERVICE_API_KEY', () => {
  let server: RunningSvc;
  let seen: Seen;
  beforeAll(async () => {
    server = await startSvc([join(REPO_ROOT, 'examples/chat')], { SERVICE_API_KEY: KEY });
    const run = await execa('python3', [CLIENT_SCRIPT], { env: { SVC_URL: server.url, SVC_KEY: KEY }, reject: false });
    if (run.exitCode !== 0) throw new Error(`the Python client failed (needs \`pip install openai\`):\n${run.stderr}`);
    seen = JSON.parse(run.stdout) as Seen;
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('completes a chat with the base URL at /v1, the endpoint path and the server root', () => {
    for (const name of ['v1', 'endpoint', 'root']) {
      expect(seen.completions[name]).toMatchObject({
        object: 'chat.completion',
        model: 'echo',
        choices: [{ index: 0, message: { role: 'assistant', content: 'You said: Hi from Python' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 6, completion_tokens: 6, total_tokens: 12 },
      });
      expect(seen.completions[name].id).toMatch(/^chatcmpl-[0-9a-f]+$/);
    }
  });

  it('streams a chat chunk by chunk with each base URL', () => {
    for (const name of ['v1', 'endpoint', 'root']) {
      const chunks = seen.streams[name] as any[];
      const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
      expect(text).toBe('You said: Hi from Python');
      expect(chunks.filter((chunk) => chunk.choices[0]?.delta.content).length).toBe(5); // one per word
      expect(chunks.every((chunk) => chunk.object === 'chat.completion.chunk')).toBe(true);
      expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 6, completion_tokens: 6, total_tokens: 12 } });
    }
  });

  it('lists the model', () => {
    expect(seen.models).toEqual(['echo']);
  });

  it('raises AuthenticationError for a wrong key, plain or streaming', () => {
    const expected = { class: 'AuthenticationError', status: 401, type: 'authentication_error', message: expect.any(String) };
    expect(seen.wrong_key).toMatchObject(expected);
    expect(seen.wrong_key_stream).toMatchObject(expected);
  });

  it('raises BadRequestError with svc message when the messages are missing', () => {
    expect(seen.missing_messages).toEqual({
      class: 'BadRequestError',
      status: 400,
      type: 'invalid_request',
      code: 'invalid_input',
      message: 'invalid input: messages: is required',
    });
  });
});
