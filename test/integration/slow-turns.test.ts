import { request, Agent } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startSvc } from '../support/server.js';
import { REPO_ROOT } from '../support/svc.js';

const SERVICE = join(REPO_ROOT, 'test/fixtures/services/worker-behaviours.py');

interface Answer {
  status: number;
  text: string;
}

/** A POST that may be cut after `leaveAfterMs`, as a client that gives up does: status -1 then. */
function post(agent: Agent, url: string, path: string, body: object, leaveAfterMs?: number): Promise<Answer> {
  const data = JSON.stringify(body);
  return new Promise((resolve) => {
    const call = request(`${url}${path}`, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
      response.on('error', () => resolve({ status: -1, text }));
    });
    call.on('error', () => resolve({ status: -1, text: '' }));
    // A call lost between the workers would never be answered: fail on it, not on the test's time-out.
    call.setTimeout(10_000, () => {
      resolve({ status: 0, text: 'no answer within 10 s' });
      call.destroy();
    });
    if (leaveAfterMs !== undefined) setTimeout(() => call.destroy(), leaveAfterMs);
    call.end(data);
  });
}

describe('two workers under quick calls, calls of a quick endpoint that turn slow, and clients that leave', () => {
  it('answer every call that stays with its own result, and leave nothing running or queued', async () => {
    // Calls are sent behind quick ones, taken back when the one in front turns slow, and
    // cancelled while they wait or run: every way a call can go between the two workers.
    const server = await startSvc([SERVICE, '--workers', '2']);
    const agent = new Agent({ keepAlive: true, maxSockets: 16 });
    const wrong: string[] = [];
    let answered = 0;
    let count = 0;
    const deadline = Date.now() + 8_000;
    const client = async () => {
      while (Date.now() < deadline) {
        const number = ++count;
        const leaveAfterMs = number % 10 === 0 ? (number % 7) * 3 : undefined;
        const text = `t${number}`;
        const answer =
          number % 3 === 0
            ? await post(agent, server.url, '/sleep', { seconds: number % 30 === 0 ? 0.2 : 0.0005 }, leaveAfterMs)
            : await post(agent, server.url, '/echo', { text }, leaveAfterMs);
        if (answer.status === -1 && leaveAfterMs !== undefined) continue;
        const isRight = answer.status === 200 && (number % 3 === 0 ? 'slept' in JSON.parse(answer.text) : JSON.parse(answer.text).text === text);
        if (isRight) answered += 1;
        else wrong.push(`${number}: ${answer.status} ${answer.text.slice(0, 200)}`);
      }
    };
    try {
      await Promise.all(Array.from({ length: 12 }, client));
      expect(wrong).toEqual([]);
      expect(answered).toBeGreaterThan(1000);
      await expect
        .poll(async () => ((await (await fetch(`${server.url}/health`)).json()) as { busy: number; queued: number }), { timeout: 5_000 })
        .toMatchObject({ busy: 0, queued: 0 });
    } finally {
      agent.destroy();
      await server.stop();
    }
  }, 60_000);
});
