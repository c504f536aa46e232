import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMediaHost, type MediaHost } from '../support/media-host.js';
import { postJson, startSvc, type RunningSvc } from '../support/server.js';
import { REPO_ROOT } from '../support/svc.js';

const SERVICE = join(REPO_ROOT, 'test/fixtures/gateway/media_kinds.py');
const MEDIA = join(REPO_ROOT, 'test/fixtures/media');

/** Real files (test/fixtures/media/make_media.py wrote them), each with the type its bytes announce. */
const FILES = {
  image: { 'image.png': 'image/png', 'image.jpeg': 'image/jpeg', 'image.gif': 'image/gif', 'image.webp': 'image/webp', 'image.bmp': 'image/bmp', 'image.tiff': 'image/tiff' },
  audio: {
    'audio.wav': 'audio/wav',
    'audio.mp3': 'audio/mpeg',
    'audio-frames.mp3': 'audio/mpeg',
    'audio.aac': 'audio/aac',
    'audio.flac': 'audio/flac',
    'audio.ogg': 'audio/ogg',
    'audio.m4a': 'audio/mp4',
    'audio.mp4': 'video/mp4',
    'audio.webm': 'video/webm',
  },
  video: { 'video.mp4': 'video/mp4', 'video.webm': 'video/webm', 'video.mov': 'video/quicktime', 'video.avi': 'video/x-msvideo', 'video.mkv': 'video/x-matroska' },
} as const;
type Kind = keyof typeof FILES;
const CLASSES: Record<Kind, string> = { image: 'ImageFile', audio: 'AudioFile', video: 'VideoFile' };
const EXPECTED: Record<Kind, string> = {
  image: 'expected an image (png, jpg, gif, webp, tiff, bmp, ico, jp2, jxl, avif, heic, heif)',
  audio: 'expected audio (wav, aiff, mp3, aac, amr, ogg, flac, m4a, mov, 3gp, mp4, webm, mkv, asf)',
  video: 'expected a video (ogg, mov, 3gp, mp4, avi, webm, mkv, asf, flv, mpg)',
};

const file = (name: string) => readFileSync(join(MEDIA, name));
const base64 = (name: string) => file(name).toString('base64');
const HTML = Buffer.from('<html><body><script>alert(1)</script></body></html>');
const TEXT = Buffer.from('just some notes, not a picture');

function upload(name: string, bytes: Buffer, fileName: string, type?: string): FormData {
  const form = new FormData();
  form.append(name, new Blob([bytes], type === undefined ? {} : { type }), fileName);
  return form;
}

async function postForm(url: string, form: FormData): Promise<{ status: number; body: any }> {
  const response = await fetch(url, { method: 'POST', body: form });
  return { status: response.status, body: await response.json() };
}

function refused(field: string, message: string): [number, unknown] {
  return [422, [{ field, message }]];
}

describe('typed media parameters take content of their kind only', () => {
  let server: RunningSvc;
  let host: MediaHost;
  beforeAll(async () => {
    host = await startMediaHost();
    server = await startSvc([SERVICE, '--compute', 'dedicated']);
  });
  afterAll(async () => {
    await server?.stop();
    await host?.close();
  });

  it('takes every common format of its kind, as base64 and as an upload', async () => {
    for (const kind of Object.keys(FILES) as Kind[]) {
      for (const [name, contentType] of Object.entries(FILES[kind])) {
        const sent = await postJson(`${server.url}/${kind}`, { [kind]: base64(name) });
        expect([name, sent.status, sent.body]).toEqual([name, 200, { class: CLASSES[kind], content_type: contentType, size: file(name).length }]);
        const uploaded = await postForm(`${server.url}/${kind}`, upload(kind, file(name), name));
        expect([name, uploaded.status, uploaded.body.class]).toEqual([name, 200, CLASSES[kind]]);
      }
    }
  });

  it('refuses a web page given as an image, however it is sent, naming the parameter, what it expected and what it found', async () => {
    const html = HTML.toString('base64');
    const noImage = `${EXPECTED.image}, got bytes of no image format`;
    const cases: Array<[string, unknown, string]> = [
      ['a data URL', `data:text/html;base64,${html}`, `${noImage} (labelled text/html)`],
      ['plain base64', html, noImage],
      ['a media object that says it is a PNG', { file_name: 'x.png', content_type: 'image/png', content: html }, `${noImage} (labelled image/png)`],
      ['a URL whose answer is a page', `${host.url}/page.png`, `${noImage} (labelled text/html)`],
    ];
    for (const [how, value, message] of cases) {
      const answer = await postJson(`${server.url}/image`, { image: value });
      expect([how, answer.status, answer.body.error.detail]).toEqual([how, ...refused('image', message)]);
    }
    const uploaded = await postForm(`${server.url}/image`, upload('image', HTML, 'photo.png', 'image/png'));
    expect([uploaded.status, uploaded.body.error.detail]).toEqual(refused('image', `${noImage} (labelled image/png)`));
    // No type given: the file's name gives one, but its bytes decide.
    const untyped = await postForm(`${server.url}/image`, upload('image', TEXT, 'photo.png'));
    expect([untyped.status, untyped.body.error.detail]).toEqual(refused('image', `${noImage} (labelled image/png)`));
  });

  it('refuses media of another kind, saying what its bytes are', async () => {
    const cases: Array<[Kind, string, string]> = [
      ['image', 'audio.wav', 'audio/wav'],
      ['image', 'video.mp4', 'video/mp4'],
      ['audio', 'image.png', 'image/png'],
      ['audio', 'video.avi', 'video/x-msvideo'],
      ['video', 'image.jpeg', 'image/jpeg'],
      ['video', 'audio.m4a', 'audio/mp4'],
      ['video', 'audio.flac', 'audio/flac'],
    ];
    for (const [kind, name, found] of cases) {
      const answer = await postJson(`${server.url}/${kind}`, { [kind]: base64(name) });
      expect([name, answer.status, answer.body.error.detail]).toEqual([name, ...refused(kind, `${EXPECTED[kind]}, got ${found} content`)]);
    }
    const pdf = await postJson(`${server.url}/video`, { video: Buffer.from('%PDF-1.7\n%\xe2\xe3').toString('base64') });
    expect([pdf.status, pdf.body.error.detail]).toEqual(refused('video', `${EXPECTED.video}, got application/pdf content`));
  });

  it("gives a typed parameter's file a type of its kind: a PNG sent as text/html is image/png", async () => {
    const answer = await postJson(`${server.url}/image`, { image: `data:text/html;base64,${base64('image.png')}` });
    expect([answer.status, answer.body.content_type]).toEqual([200, 'image/png']);
  });

  it('checks every item of a list of images, and names the list', async () => {
    const answer = await postJson(`${server.url}/gallery`, { images: [base64('image.png'), HTML.toString('base64')] });
    expect([answer.status, answer.body.error.detail]).toEqual(refused('images', `${EXPECTED.image}, got bytes of no image format`));
    const fine = await postJson(`${server.url}/gallery`, { images: [base64('image.png'), base64('image.gif')] });
    expect(fine.body.map((item: any) => item.content_type)).toEqual(['image/png', 'image/gif']);
  });

  it('leaves a plain MediaFile or FileModel parameter open to any content, its type as sent', async () => {
    for (const path of ['/file', '/file-model']) {
      const html = await postJson(`${server.url}${path}`, { file: `data:text/html;base64,${HTML.toString('base64')}` });
      expect([path, html.status, html.body]).toEqual([path, 200, { class: 'MediaFile', content_type: 'text/html', size: HTML.length }]);
      const text = await postForm(`${server.url}${path}`, upload('file', TEXT, 'notes'));
      expect([path, text.status, text.body.content_type]).toEqual([path, 200, 'application/octet-stream']);
    }
  });
});

describe('typed media parameters under --compute serverless', () => {
  let server: RunningSvc;
  beforeAll(async () => {
    server = await startSvc([SERVICE, '--compute', 'serverless']);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('fails the job of a page given as an image, naming the parameter, and finishes one of a real image', async () => {
    const page = await postJson(`${server.url}/image`, { image: `data:text/html;base64,${HTML.toString('base64')}` }, { prefer: 'wait=30' });
    expect([page.body.status, page.body.error]).toEqual(['FAILED', `argument 'image': ${EXPECTED.image}, got bytes of no image format (labelled text/html)`]);
    const image = await postJson(`${server.url}/image`, { image: base64('image.webp') }, { prefer: 'wait=30' });
    expect([image.body.status, image.body.result]).toEqual(['FINISHED', { class: 'ImageFile', content_type: 'image/webp', size: file('image.webp').length }]);
  });
});
