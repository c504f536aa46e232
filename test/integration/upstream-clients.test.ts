import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callWithRequests } from '../support/python-requests.js';
import { postJson, startSvc, type RunningSvc } from '../support/server.js';
import { REPO_ROOT } from '../support/svc.js';
import { PNG_BASE64 } from '../support/images.js';
import { startMediaHost, type MediaHost } from '../support/media-host.js';

/** A service written for the apipod package, called as its users call it: Python's requests, curl's forms. */
describe('clients of an apipod-package service against svc start', () => {
  let server: RunningSvc;
  beforeAll(async () => {
    server = await startSvc([join(REPO_ROOT, 'test/fixtures/gateway/upstream_style.py')]);
  });
  afterAll(async () => {
    await server.stop();
  });

  it('reads the booleans requests and HTML forms send (True, 1, on, yes), in forms and query strings', async () => {
    const scalars = await callWithRequests({ url: `${server.url}/scalars`, data: { text: 'a', count: 2, ratio: 0.5, flag: true } });
    expect(scalars).toEqual({ status: 200, body: { text: 'a', count: 2, ratio: 0.5, flag: true } });
    for (const [word, value] of [['TRUE', true], ['1', true], ['on', true], ['yes', true], ['False', false], ['0', false], ['off', false]] as const) {
      const form = await postJson(`${server.url}/scalars`, `text=a&count=1&flag=${word}`, { 'content-type': 'application/x-www-form-urlencoded' });
      expect([word, form.body.flag]).toEqual([word, value]);
      const query = await callWithRequests({ method: 'GET', url: `${server.url}/search`, params: { q: 'cats', exact: word } });
      expect([word, query.body]).toEqual([word, { q: 'cats', exact: value }]);
    }
    const form = new FormData();
    for (const [name, value] of [['text', 'a'], ['count', '1'], ['flag', 'Yes']] as const) form.append(name, value);
    const multipart = await fetch(`${server.url}/scalars`, { method: 'POST', body: form });
    expect(((await multipart.json()) as any).flag).toBe(true);
    const word = await postJson(`${server.url}/scalars`, `text=a&count=1&flag=maybe`, { 'content-type': 'application/x-www-form-urlencoded' });
    expect([word.status, word.body.error.detail]).toEqual([422, [{ field: 'flag', message: 'must be a boolean' }]]);
    const json = await postJson(`${server.url}/scalars`, { text: 'a', count: 1, flag: 'yes' });
    expect([json.status, json.body.error.detail]).toEqual([422, [{ field: 'flag', message: 'must be a boolean' }]]);
  });

  it('reads null for a number the same way in every encoding: a 422, never 0', async () => {
    const form = new FormData();
    for (const [name, value] of [['text', 'a'], ['count', '1'], ['ratio', 'null']] as const) form.append(name, value);
    const multipart = await fetch(`${server.url}/scalars`, { method: 'POST', body: form });
    expect([multipart.status, ((await multipart.json()) as any).error.detail[0].field]).toEqual([422, 'ratio']);
    const urlencoded = await postJson(`${server.url}/scalars`, 'text=a&count=1&ratio=null', { 'content-type': 'application/x-www-form-urlencoded' });
    expect([urlencoded.status, urlencoded.body.error.detail[0].field]).toEqual([422, 'ratio']);
    expect((await postJson(`${server.url}/scalars`, { text: 'a', count: 1, ratio: null })).status).toBe(422);
  });

  it('reads true for a number the same way in every encoding: a 422, never 1', async () => {
    const form = new FormData();
    for (const [name, value] of [['text', 'a'], ['count', 'true']] as const) form.append(name, value);
    const multipart = await fetch(`${server.url}/scalars`, { method: 'POST', body: form });
    expect([multipart.status, ((await multipart.json()) as any).error.detail[0].field]).toEqual([422, 'count']);
    const urlencoded = await postJson(`${server.url}/scalars`, 'text=a&count=true', { 'content-type': 'application/x-www-form-urlencoded' });
    expect([urlencoded.status, urlencoded.body.error.detail[0].field]).toEqual([422, 'count']);
    expect((await postJson(`${server.url}/scalars`, { text: 'a', count: true })).status).toBe(422);
    const integral = new FormData();
    for (const [name, value] of [['text', 'a'], ['count', '2'], ['ratio', '3']] as const) integral.append(name, value);
    const taken = await fetch(`${server.url}/scalars`, { method: 'POST', body: integral });
    expect(await taken.json()).toEqual({ text: 'a', count: 2, ratio: 3, flag: false });
  });

  it('lets an Optional parameter without a default be left out, giving it None, and says so in the schema', async () => {
    const edit = await callWithRequests({ url: `${server.url}/edit`, data: { prompt: 'x' } });
    expect(edit).toEqual({ status: 200, body: { prompt: 'x', mask: false, seed: null, guidance: 7.5 } });
    expect((await postJson(`${server.url}/edit`, { prompt: 'x', seed: 3 })).body.seed).toBe(3);
    const document: any = await (await fetch(`${server.url}/openapi.json`)).json();
    const schema = document.paths['/edit'].post.requestBody.content['multipart/form-data'].schema;
    expect([schema.required, schema.properties.seed.default]).toEqual([['prompt'], null]);
  });

  it('takes the parts of a parameter that is one file or a list of them (ImageFile | list[ImageFile]) as a list, one part too', async () => {
    const two = await callWithRequests({
      url: `${server.url}/faces`,
      files: [['face_image', 'a.png', PNG_BASE64, 'image/png'], ['face_image', 'b.png', PNG_BASE64, 'image/png']],
    });
    expect(two).toEqual({ status: 200, body: ['list', 'a.png', 'b.png'] });
    const one = await callWithRequests({ url: `${server.url}/faces`, files: [['face_image', 'a.png', PNG_BASE64, 'image/png']] });
    expect(one).toEqual({ status: 200, body: ['list', 'a.png'] });
  });

  it('takes a form field sent empty as not sent, as FastAPI reads forms: the default, or a 422 naming it', async () => {
    const form = (body: string) => postJson(`${server.url}/scalars`, body, { 'content-type': 'application/x-www-form-urlencoded' });
    expect((await form('text=a&count=1&ratio=&flag=')).body).toEqual({ text: 'a', count: 1, ratio: 1, flag: false });
    const missing = await form('text=&count=1');
    expect([missing.status, missing.body.error.detail]).toEqual([422, [{ field: 'text', message: 'is required' }]]);
    const multipart = new FormData();
    for (const [name, value] of [['text', 'a'], ['count', '2'], ['ratio', '']] as const) multipart.append(name, value);
    expect(await (await fetch(`${server.url}/scalars`, { method: 'POST', body: multipart })).json()).toEqual({ text: 'a', count: 2, ratio: 1, flag: false });
    expect((await postJson(`${server.url}/scalars`, { text: '', count: 1 })).body.text).toBe('');
  });

  it('reads a pydantic model parameter from its fields in a form, as the apipod package (FastAPI form models) does', async () => {
    const fields = await callWithRequests({ url: `${server.url}/order`, data: { size: 'large', portions: 3, note: 'hot' } });
    expect(fields).toEqual({ status: 200, body: { size: 'large', portions: 3, note: 'hot' } });
    const defaults = await postJson(`${server.url}/order`, 'note=x', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(defaults.body).toEqual({ size: 'medium', portions: 1, note: 'x' });
    const multipart = new FormData();
    multipart.append('portions', 'two');
    const bad = await fetch(`${server.url}/order`, { method: 'POST', body: multipart });
    expect([bad.status, ((await bad.json()) as any).error.detail]).toEqual([422, [{ field: 'order.portions', message: 'must be an integer' }]]);
    expect((await postJson(`${server.url}/order`, { order: { portions: 2 } })).body).toEqual({ size: 'medium', portions: 2, note: '' });
  });

  it('takes a list sent as repeated multipart fields, as requests sends a list beside files', async () => {
    const maybe = await callWithRequests({
      url: `${server.url}/maybe`,
      data: { prompt: 'hi', strength: 0.5, tags: ['a', 'b'], sizes: [1, 2] },
      files: [['init_image', 'red.png', PNG_BASE64, 'image/png']],
    });
    expect(maybe).toEqual({ status: 200, body: { prompt: 'hi', image: 'red.png', strength: 0.5, tags: ['a', 'b'], sizes: [1, 2] } });
    const form = new FormData();
    for (const [name, value] of [['prompt', 'hi'], ['tags', 'a'], ['sizes', '3']] as const) form.append(name, value);
    const single = await fetch(`${server.url}/maybe`, { method: 'POST', body: form });
    expect(await single.json()).toMatchObject({ tags: ['a'], sizes: [3] });
    form.append('prompt', 'again');
    const twice = await fetch(`${server.url}/maybe`, { method: 'POST', body: form });
    expect([twice.status, ((await twice.json()) as any).error.detail]).toEqual([422, [{ field: 'prompt', message: 'is given more than once, and takes one value' }]]);
  });

  it('says a list of files came both as uploads and as text, and a list of text as a file, rather than that it takes one value', async () => {
    const mixed = await callWithRequests({
      url: `${server.url}/gallery`,
      data: { images: [PNG_BASE64] },
      files: [['images', 'red.png', PNG_BASE64, 'image/png']],
    });
    expect(mixed).toEqual({ status: 422, body: { error: expect.objectContaining({ detail: [{ field: 'images', message: 'is given both as uploaded files and as text; send all its items one way' }] }) } });
    const form = new FormData();
    form.append('prompt', 'hi');
    form.append('tags', 'a');
    form.append('tags', new Blob(['b']), 'b.txt');
    const filed = await fetch(`${server.url}/maybe`, { method: 'POST', body: form });
    expect([filed.status, ((await filed.json()) as any).error.detail]).toEqual([422, [{ field: 'tags', message: 'is not a file parameter of this endpoint' }]]);
  });

  it('takes an upload for a union of a media type and others (ImageFile | str) as the media object', async () => {
    const upload: [string, string, string, string | null] = ['source', 'red.png', PNG_BASE64, 'image/png'];
    expect(await callWithRequests({ url: `${server.url}/either`, files: [upload] })).toEqual({ status: 200, body: 'ImageFile' });
    expect(await callWithRequests({ url: `${server.url}/any_image`, files: [['img', 'red.png', PNG_BASE64, 'image/png']] })).toEqual({ status: 200, body: 'ImageFile' });
    expect((await postJson(`${server.url}/either`, { source: 'a caption' })).body).toBe('str');
  });

  it("tells an upload's type from its bytes and name when its part gave none (requests), and keeps one given of the parameter's kind", async () => {
    const wav = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WAVEfmt ')]).toString('base64');
    const untyped = await callWithRequests({
      url: `${server.url}/content_type`,
      files: [['image', 'red.png', PNG_BASE64, null], ['audio', 'tone.wav', wav, null]],
    });
    expect(untyped).toEqual({ status: 200, body: { image: 'image/png', audio: 'audio/wav' } });
    const typed = async (type: string) => {
      const form = new FormData();
      form.append('image', new Blob([Buffer.from(PNG_BASE64, 'base64')], { type }), 'red.png');
      return (await fetch(`${server.url}/content_type`, { method: 'POST', body: form })).json();
    };
    expect(await typed('image/x-png')).toEqual({ image: 'image/x-png', audio: null });
    // A type of another kind is the client's mistake: an image parameter's file is an image's.
    expect(await typed('text/plain')).toEqual({ image: 'image/png', audio: null });
  });

  it('takes a large upload whose part headers are too long to read at the pace of any other', async () => {
    // The parser keeps the first 80 KiB of a part's headers and reads on; so must what tells the parts' types.
    const headers = `Content-Disposition: form-data; name="image"; filename="red.png"\r\nContent-Type: image/png\r\nX-Pad: ${'a'.repeat(200 * 1024)}`;
    const file = Buffer.alloc(64 * 2 ** 20);
    Buffer.from(PNG_BASE64, 'base64').copy(file);
    const body = Buffer.concat([Buffer.from(`--XX\r\n${headers}\r\n\r\n`), file, Buffer.from('\r\n--XX--\r\n')]);
    const started = Date.now();
    const response = await fetch(`${server.url}/pixel`, { method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=XX' }, body });
    expect(await response.json()).toEqual({ file_name: 'red.png', content_type: 'image/png', size: file.length });
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('serves an endpoint also at the path the apipod package serves it at (/make_fries at /make-fries), listing it as written', async () => {
    for (const path of ['/make_fries', '/make-fries', '/v1/make-fries']) {
      expect([path, await callWithRequests({ url: `${server.url}${path}`, data: { portions: 2 } })]).toEqual([path, { status: 200, body: 'fries fries ' }]);
    }
    expect((await fetch(`${server.url}/make-fries`)).status).toBe(405);
    expect((await postJson(`${server.url}/brew-tea`, {})).body).toBe('dashed tea');
    expect(server.logs()).toContain('POST /make_fries is also served at /make-fries, as the apipod package spells it');
    expect(server.logs()).toContain('POST /brew_tea is not also served at /brew-tea, where the apipod package serves it: it is the path of brew_tea_dashed()');
    const document: any = await (await fetch(`${server.url}/openapi.json`)).json();
    expect(Object.keys(document.paths)).toContain('/make_fries');
    expect(Object.keys(document.paths)).not.toContain('/make-fries');
  });

  it("leaves out an alias whose /v1 copy is another endpoint's path, rather than failing to start", async () => {
    expect((await postJson(`${server.url}/make_soup`, {})).body).toBe('soup');
    expect((await postJson(`${server.url}/v1/make-soup`, {})).body).toBe('v1 soup');
    expect((await postJson(`${server.url}/make-soup`, {})).status).toBe(404);
    expect(server.logs()).toContain('POST /make_soup is not also served at /make-soup, where the apipod package serves it: its /v1 copy /v1/make-soup is the path of make_soup_v1()');
  });
});

describe('an apipod-package service under --compute serverless', () => {
  let server: RunningSvc;
  let host: MediaHost;
  beforeAll(async () => {
    host = await startMediaHost();
    server = await startSvc([join(REPO_ROOT, 'test/fixtures/gateway/upstream_style.py'), '--compute', 'serverless']);
  });
  afterAll(async () => {
    await server?.stop();
    await host?.close();
  });

  it('downloads a media URL before the job exists: a job that reads it, or a 422 and no job', async () => {
    const submitted = await postJson(`${server.url}/pixel`, { image: `${host.url}/red.png` });
    expect([submitted.status, submitted.body.status]).toEqual([200, expect.stringMatching(/^(QUEUED|PROCESSING|FINISHED)$/)]);
    const ended: any = await (await fetch(submitted.body.refresh_job_url, { headers: { prefer: 'wait=20' } })).json();
    expect([ended.status, ended.result]).toEqual(['FINISHED', { file_name: 'red.png', content_type: 'image/png', size: Buffer.from(PNG_BASE64, 'base64').length }]);
    const failed = await postJson(`${server.url}/pixel`, { image: `${host.url}/missing.png` }, { prefer: 'respond-async' });
    expect([failed.status, failed.body.job_id, failed.body.error.detail]).toEqual([
      422,
      undefined,
      [{ field: 'image', message: `cannot fetch ${host.url}/missing.png: the server answered 404 Not Found` }],
    ]);
  });

  it('answers an endpoint marked use_queue=False with its result, and the others with a job', async () => {
    const ping = await callWithRequests({ method: 'GET', url: `${server.url}/ping` });
    expect(ping).toEqual({ status: 200, body: 'pong' });
    const fries = await postJson(`${server.url}/make_fries`, { portions: 1 });
    expect([fries.status, typeof fries.body.job_id, typeof fries.body.refresh_job_url]).toEqual([200, 'string', 'string']);
    const asked = await fetch(`${server.url}/ping`, { headers: { prefer: 'respond-async' } });
    expect([asked.status, ((await asked.json()) as any).job_id]).toEqual([202, expect.any(String)]);
  });
});

describe('media parameters given as URLs', () => {
  let host: MediaHost;
  let server: RunningSvc;
  let refusing: RunningSvc;
  let patient: RunningSvc;
  const SERVICE = join(REPO_ROOT, 'test/fixtures/gateway/upstream_style.py');
  beforeAll(async () => {
    host = await startMediaHost();
    [server, refusing, patient] = await Promise.all([
      startSvc([SERVICE, '--max-body-size', '1', '--media-url-timeout', '1']),
      startSvc([SERVICE, '--no-media-urls']),
      startSvc([SERVICE, '--media-url-timeout', '60']),
    ]);
  });
  afterAll(async () => {
    await Promise.all([server?.stop(), refusing?.stop(), patient?.stop()]);
    await host?.close();
  });
  const size = Buffer.from(PNG_BASE64, 'base64').length;

  it('downloads the URL before the call, in a form (requests) or JSON, following a redirect', async () => {
    const form = await callWithRequests({ url: `${server.url}/pixel`, data: { image: `${host.url}/red.png` } });
    expect(form).toEqual({ status: 200, body: { file_name: 'red.png', content_type: 'image/png', size } });
    const moved = await postJson(`${server.url}/pixel`, { image: `${host.url}/moved` });
    expect(moved.body).toEqual({ file_name: 'red.png', content_type: 'image/png', size });
    const untyped = await postJson(`${server.url}/pixel`, { image: `${host.url}/untyped/photo` });
    expect(untyped.body).toEqual({ file_name: 'photo', content_type: 'image/png', size });
    const list = await postJson(`${server.url}/gallery`, { images: [`${host.url}/red.png`, PNG_BASE64] });
    expect(list.body).toEqual([['red.png', 'image/png'], ['imagefile', 'image/png']]);
    expect((await postJson(`${server.url}/either`, { source: `${host.url}/red.png` })).body).toBe('str');
  });

  it('answers a download that fails with a 422 naming the parameter and why', async () => {
    const cases: Array<[string, string, string]> = [
      ['image', `${host.url}/missing.png`, 'the server answered 404 Not Found'],
      ['image', `${host.url}/loop`, 'it redirects more than 5 times'],
      ['image', `${host.url}/to-ftp`, 'it redirects to ftp://127.0.0.1/red.png; only http and https URLs are fetched'],
      ['image', `${host.url}/big.png`, "the call's downloads pass the 1 MiB limit (svc start --max-body-size)"],
      ['image', `${host.url}/stalls.png`, 'no complete answer within 1 s'],
      ['image', host.refusedUrl, 'the connection was refused'],
      ['image', 'file:///etc/passwd', 'only http and https URLs are fetched'],
      ['image', 'FTP://127.0.0.1/red.png', 'only http and https URLs are fetched'],
    ];
    for (const [field, url, why] of cases) {
      const failed = await postJson(`${server.url}/pixel`, { [field]: url });
      expect([failed.status, failed.body.error.detail]).toEqual([422, [{ field, message: `cannot fetch ${url}: ${why}` }]]);
    }
    const item = await postJson(`${server.url}/gallery`, { images: [`${host.url}/red.png`, `${host.url}/missing.png`] });
    expect(item.body.error.detail).toEqual([{ field: 'images[1]', message: `cannot fetch ${host.url}/missing.png: the server answered 404 Not Found` }]);
  });

  it('refuses URLs with a 422 that says so when started with --no-media-urls', async () => {
    const refused = await postJson(`${refusing.url}/pixel`, { image: `${host.url}/red.png` });
    expect([refused.status, refused.body.error.detail]).toEqual([
      422,
      [{ field: 'image', message: 'this server fetches no URLs (svc start --no-media-urls); upload the file or send its base64' }],
    ]);
  });

  it('stops a download when its client leaves, rather than finishing it for nobody', async () => {
    const client = new AbortController();
    const body = JSON.stringify({ image: `${host.url}/held.png` });
    const call = fetch(`${patient.url}/pixel`, { method: 'POST', headers: { 'content-type': 'application/json' }, body, signal: client.signal }).catch(() => 'left');
    await host.held.requested;
    client.abort();
    expect(await call).toBe('left');
    const stillOpen = new Promise((resolve) => setTimeout(() => resolve('still downloading'), 5000).unref());
    expect(await Promise.race([host.held.closed.then(() => 'closed'), stillOpen])).toBe('closed');
  });
});
