import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSvc, type RunningSvc } from '../support/server.js';
import { REPO_ROOT } from '../support/svc.js';

const SERVICE = join(REPO_ROOT, 'test/fixtures/gateway/media-results.py');
// A 1x1 PNG.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

function upload(accept?: string, fields: Record<string, string> = {}): RequestInit {
  const form = new FormData();
  form.append('image', new Blob([PNG], { type: 'image/png' }), 'in.png');
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  return { method: 'POST', body: form, headers: accept === undefined ? {} : { accept } };
}

describe('a dedicated endpoint that returns one image', () => {
  let server: RunningSvc;
  beforeAll(async () => {
    server = await startSvc([SERVICE]);
  });
  afterAll(async () => {
    await server.stop();
  });

  it('answers its bytes with their content type to Accept: image/png or image/*', async () => {
    for (const accept of ['image/png', 'image/*', 'image/*, application/json;q=0.5']) {
      const response = await fetch(`${server.url}/echo`, upload(accept));
      expect(response.status, accept).toBe(200);
      expect(response.headers.get('content-type'), accept).toBe('image/png');
      expect(response.headers.get('content-disposition'), accept).toBe('inline; filename="echo.png"');
      expect(Buffer.from(await response.arrayBuffer()).equals(PNG), accept).toBe(true);
    }
  });

  it('answers JSON without Accept, to */* and to application/json, as before', async () => {
    for (const accept of [undefined, '*/*', 'application/json', 'application/json, image/png']) {
      const response = await fetch(`${server.url}/echo`, upload(accept));
      expect(response.headers.get('content-type'), accept).toBe('application/json; charset=utf-8');
      expect(await response.json(), accept).toEqual({ file_name: 'echo.png', content_type: 'image/png', content: PNG.toString('base64') });
    }
  });

  it('answers 406 naming what it can give when Accept takes neither the image nor JSON', async () => {
    const response = await fetch(`${server.url}/echo`, upload('audio/*'));
    expect(response.status).toBe(406);
    expect(((await response.json()) as any).error).toEqual({
      status: 406,
      type: 'not_acceptable',
      code: 'not_acceptable',
      message: 'the result of /echo cannot be sent as "audio/*": it is available as image/png (or image/*) or application/json',
    });
    // A client generated from the document knows the status.
    const document = (await (await fetch(`${server.url}/openapi.json`)).json()) as any;
    expect(Object.keys(document.paths['/echo'].post.responses)).toContain('406');
  });

  it('answers 406 to Accept: image/png for an endpoint whose result is JSON', async () => {
    const response = await fetch(`${server.url}/count`, { method: 'POST', headers: { accept: 'image/png', 'content-type': 'application/json' }, body: '{}' });
    expect(response.status).toBe(406);
    expect(((await response.json()) as any).error.message).toBe(
      'the result of /count cannot be sent as "image/png": it is available as JSON only (application/json): it is no single media file',
    );
  });
});

describe('a serverless job whose result is one image', () => {
  let server: RunningSvc;
  beforeAll(async () => {
    server = await startSvc([SERVICE, '--compute', 'serverless']);
  });
  afterAll(async () => {
    await server.stop();
  });

  async function submit(delay: number, accept?: string): Promise<{ status: number; body: any }> {
    const response = await fetch(`${server.url}/echo`, upload(accept, { delay: String(delay) }));
    return { status: response.status, body: await response.json() };
  }

  it('submits with the JSON envelope whatever Accept says, and gives the bytes from the job URL once FINISHED', async () => {
    const { status, body: envelope } = await submit(0, 'image/png');
    expect(status).toBe(200);
    expect(envelope.status).toMatch(/QUEUED|PROCESSING|FINISHED/);
    for (const url of [envelope.refresh_job_url, envelope.links.status, `${server.url}/status?job_id=${envelope.id}`]) {
      const response = await fetch(url, { headers: { accept: 'image/png', prefer: 'wait=10' } });
      expect(response.status, url).toBe(200);
      expect(response.headers.get('content-type'), url).toBe('image/png');
      expect(Buffer.from(await response.arrayBuffer()).equals(PNG), url).toBe(true);
    }
    const json = await fetch(envelope.refresh_job_url);
    expect(((await json.json()) as any).result.content).toBe(PNG.toString('base64'));
  });

  it('gives the envelope of a running job to a client that also takes JSON, and a 406 to one that takes only the image', async () => {
    const { body: envelope } = await submit(3);
    const polled = await fetch(envelope.refresh_job_url, { headers: { accept: 'image/png, application/json;q=0.5' } });
    expect(((await polled.json()) as any).status).toMatch(/QUEUED|PROCESSING/);
    const refused = await fetch(envelope.refresh_job_url, { headers: { accept: 'image/png' } });
    expect(refused.status).toBe(406);
    expect(((await refused.json()) as any).error.message).toMatch(
      new RegExp(`^job ${envelope.id} cannot be sent as "image/png": it is available as its JSON envelope \\(application/json\\) only while it is (QUEUED|PROCESSING); its result's file once it ends FINISHED$`),
    );
    await fetch(envelope.cancel_job_url, { method: 'POST' });
  });
});
