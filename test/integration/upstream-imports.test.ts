import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callWithRequests } from '../support/python-requests.js';
import { postJson, startSvc, type RunningSvc } from '../support/server.js';
import { REPO_ROOT } from '../support/svc.js';
import { PNG_BASE64 } from '../support/images.js';

/**
 * A service written for the apipod toolkit as its own test services are (test/fixtures/projects/
 * upstream-registered): endpoints registered inside a function the module calls, FastAPI's
 * UploadFile, socaity-schemas' request models. The workers' Python needs fastapi and
 * socaity-schemas, which the service imports (.ci/requirements-test.txt): without them the
 * suite is skipped locally and fails in CI.
 */
const workersPython = process.env.VIRTUAL_ENV ? join(process.env.VIRTUAL_ENV, 'bin', 'python') : 'python3';
const hasImports = spawnSync(workersPython, ['-c', 'import fastapi, socaity_schemas'], { stdio: 'ignore' }).status === 0;
const mustRun = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false';

describe.skipIf(!hasImports && !mustRun)('svc start with a service that registers its endpoints at import and takes FastAPI uploads', () => {
  let server: RunningSvc;
  let listed: string[];
  beforeAll(async () => {
    server = await startSvc([join(REPO_ROOT, 'test/fixtures/projects/upstream-registered')]);
    listed = Object.keys(((await (await fetch(`${server.url}/openapi.json`)).json()) as any).paths);
  });
  afterAll(async () => {
    await server.stop();
  });

  it('serves the endpoints registered inside register(app), by app.endpoint(path)(function) and by add_api_route', async () => {
    for (const path of ['/describe_upload', '/mixed_media', '/embed', '/ping']) expect(listed).toContain(path);
    expect(await (await fetch(`${server.url}/ping`)).json()).toBe('pong');
  });

  it('takes a multipart upload for an UploadFile parameter, and gives the function a file with its name, type and content', async () => {
    const notes = Buffer.from('first line\nsecond line\n').toString('base64');
    const upload = await callWithRequests({
      url: `${server.url}/describe_upload`,
      data: { note: 'from requests' },
      files: [['document', 'notes.txt', notes, 'text/plain']],
    });
    expect(upload).toEqual({
      status: 200,
      body: { filename: 'notes.txt', file_name: 'notes.txt', content_type: 'text/plain', size: 23, first_line: 'first line', note: 'from requests' },
    });
    // The same parameter takes what svc's media parameters take in JSON: a media object, a data URL, base64.
    const asObject = await postJson(`${server.url}/describe-upload`, { document: { file_name: 'a.txt', content: Buffer.from('hi').toString('base64') } });
    expect([asObject.status, asObject.body.filename, asObject.body.size]).toEqual([200, 'a.txt', 2]);
    const asDataUrl = await postJson(`${server.url}/describe_upload`, { document: `data:text/plain;base64,${Buffer.from('hey').toString('base64')}` });
    expect([asDataUrl.status, asDataUrl.body.content_type, asDataUrl.body.size]).toEqual([200, 'text/plain', 3]);
  });

  it("answers a call whose function raises the toolkit's FileUploadException with a 422 and its message, as the toolkit does", async () => {
    const empty = await postJson(`${server.url}/describe_upload`, { document: { file_name: 'empty.txt', content: '' } });
    expect([empty.status, empty.body.error.code, empty.body.error.message]).toEqual([
      422,
      'rejected_input',
      'FileUploadException: empty.txt - the file is empty',
    ]);
  });

  it('reads FileModel, unions of media and lists of files as the toolkit does', async () => {
    const image = { file_name: 'red.png', content: PNG_BASE64 };
    const mixed = await postJson(`${server.url}/mixed_media`, { wire: image, img: image, anyfiles: [image, image] });
    expect(mixed.body).toEqual({ anyfile: null, wire: 'MediaFile', img: 'ImageFile', anyfiles: ['red.png', 'red.png'], text: 'master' });
  });

  it("takes socaity-schemas' EmbeddingRequest, imported from apipod.common.schemas, as the whole body as the toolkit does, or by name", async () => {
    const asTheToolkit = await postJson(`${server.url}/embed`, { input: ['a', 'abc'], model: 'm' });
    expect(asTheToolkit).toMatchObject({ status: 200, body: { model: 'm', lengths: [1, 3] } });
    const byName = await postJson(`${server.url}/embed`, { request: { input: 'abcd' } });
    expect(byName).toMatchObject({ status: 200, body: { model: null, lengths: [4] } });
    const wrong = await postJson(`${server.url}/embed`, { inputs: 'a' });
    expect(wrong.status).toBe(422);
  });
});
