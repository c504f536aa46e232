import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postJson, startSvc, type RunningSvc } from '../support/server.js';
import { REPO_ROOT } from '../support/svc.js';

const NESTING = join(REPO_ROOT, 'test/fixtures/gateway/nesting.py');
/** The gateway's limit (MAX_VALUE_DEPTH), as a user reads it in docs/errors.md. */
const LIMIT = 512;

/** `levels` objects one inside the other, as JSON text: {"a":{"a":...1...}}. */
function nested(levels: number): string {
  return `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
}

/** A body `levels` deep in all: {"data": ...} around `levels - 1` levels. */
function body(levels: number): string {
  return `{"data":${nested(levels - 1)}}`;
}

function multipart(field: string): FormData {
  const form = new FormData();
  form.append('data', field);
  return form;
}

describe('svc start carrying deeply nested values', () => {
  let server: RunningSvc;
  beforeAll(async () => {
    server = await startSvc([NESTING, '--compute', 'dedicated']);
  });
  afterAll(async () => {
    await server.stop();
  });

  it('echoes a JSON body up to the limit, for a dict and an Any parameter alike, and says 400 too_deep past it', async () => {
    for (const path of ['/echo', '/echo-any']) {
      for (const levels of [500, LIMIT - 1, LIMIT]) {
        const answer = await postJson(`${server.url}${path}`, body(levels));
        expect([path, levels, answer.status]).toEqual([path, levels, 200]);
        expect(JSON.stringify(answer.body)).toBe(nested(levels - 1));
      }
      const over = await postJson(`${server.url}${path}`, body(LIMIT + 1));
      expect([over.status, over.body.error.code, over.body.error.message]).toEqual([
        400,
        'too_deep',
        `the body nests arrays or objects ${LIMIT + 1} levels deep, more than the ${LIMIT} this server takes`,
      ]);
    }
  });

  it('leaves a function that walks its input recursively room to do so at the limit', async () => {
    const answer = await postJson(`${server.url}/copy`, body(LIMIT));
    expect(answer.status).toBe(200);
    expect(JSON.stringify(answer.body)).toBe(nested(LIMIT - 1));
  });

  it('takes a multipart field up to the limit, and names the field past it, however deep (the gateway survives)', async () => {
    for (const levels of [500, LIMIT - 1, LIMIT]) {
      const answer = await fetch(`${server.url}/echo`, { method: 'POST', body: multipart(nested(levels)) });
      expect([levels, answer.status]).toEqual([levels, 200]);
      expect(await answer.text()).toBe(nested(levels));
    }
    for (const levels of [LIMIT + 1, 20_000]) {
      const answer = await fetch(`${server.url}/echo`, { method: 'POST', body: multipart(nested(levels)) });
      expect([answer.status, ((await answer.json()) as any).error]).toMatchObject([
        400,
        { code: 'too_deep', message: `the form field "data" nests arrays or objects ${levels} levels deep, more than the ${LIMIT} this server takes` },
      ]);
    }
    expect((await postJson(`${server.url}/echo`, body(3))).status).toBe(200);
  });

  it('reads a number beyond a double in a multipart field as a JSON body does: a 422 naming it, not null', async () => {
    const answer = await fetch(`${server.url}/echo`, { method: 'POST', body: multipart('{"x": {"y": 1e999}}') });
    expect([answer.status, ((await answer.json()) as any).error.detail]).toEqual([
      422,
      [{ field: 'data.x.y', message: 'is a number beyond the range of a double, which would read as infinity' }],
    ]);
  });

  it('answers a deep URL-encoded field as any text for a dict: a 422, never a 500', async () => {
    const answer = await postJson(`${server.url}/echo`, `data=${encodeURIComponent(nested(600))}`, { 'content-type': 'application/x-www-form-urlencoded' });
    expect([answer.status, answer.body.error.detail]).toEqual([422, [{ field: 'data', message: 'must be an object' }]]);
  });

  it('fails a result the function nests past the limit with ResultTooDeep, saying so, and serves on', async () => {
    // The body is within the limit; wrapped twice, its data is one level past it.
    const answer = await postJson(`${server.url}/deeper`, `{"levels":2,"data":${nested(LIMIT - 1)}}`);
    expect([answer.status, answer.body.error.exception]).toEqual([
      500,
      { type: 'ResultTooDeep', message: `the result nests lists or dicts more than ${LIMIT} levels deep, the most svc carries; return it flatter, or as a JSON string` },
    ]);
    const atLimit = await postJson(`${server.url}/deeper`, `{"levels":1,"data":${nested(LIMIT - 1)}}`);
    expect([atLimit.status, JSON.stringify(atLimit.body)]).toEqual([200, `{"wrapped":${nested(LIMIT - 1)}}`]);
  });
});

describe('svc start --compute serverless carrying deeply nested values', () => {
  let server: RunningSvc;
  beforeAll(async () => {
    server = await startSvc([NESTING, '--compute', 'serverless']);
  });
  afterAll(async () => {
    await server.stop();
  });

  it("finishes a job on a body at the limit with the value as its result, and creates none past it", async () => {
    for (const levels of [500, LIMIT]) {
      const job = await postJson(`${server.url}/echo`, body(levels), { prefer: 'wait=30' });
      expect([levels, job.status, job.body.status]).toEqual([levels, 200, 'FINISHED']);
      expect(JSON.stringify(job.body.result)).toBe(nested(levels - 1));
      const again = await fetch(`${server.url}/v1/jobs/${job.body.id}`);
      expect(JSON.stringify(((await again.json()) as any).result)).toBe(nested(levels - 1));
    }
    const over = await postJson(`${server.url}/echo`, body(LIMIT + 1));
    expect([over.status, over.body.error.code]).toEqual([400, 'too_deep']);
  });
});
