import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSvc, type RunningSvc } from '../support/server.js';
import { REPO_ROOT, SVC_BIN, runSvc } from '../support/svc.js';

const SERVICE = join(REPO_ROOT, 'test/fixtures/gateway/media-results.py');
const CALLS = join(REPO_ROOT, 'test/fixtures/jobs/calls.py');
// A 1x1 PNG.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

describe.each(['dedicated', 'serverless'])('svc call -i and -o against a %s server', (compute) => {
  let server: RunningSvc;
  let dir: string;
  let input: string;
  beforeAll(async () => {
    server = await startSvc([SERVICE, '--compute', compute]);
    dir = mkdtempSync(join(tmpdir(), 'svc-call-files-'));
    input = join(dir, 'in.png');
    writeFileSync(input, PNG);
  });
  afterAll(async () => {
    await server.stop();
  });

  it('uploads -i image=@file and writes the image the endpoint returns to -o', async () => {
    const out = join(dir, `out-${compute}.png`);
    const call = await runSvc(['call', '/echo', '--url', server.url, '-i', `image=@${input}`, '-o', out]);
    expect(call.exitCode, call.stderr).toBe(0);
    expect(readFileSync(out).equals(PNG)).toBe(true);
    expect(JSON.parse(call.stdout)).toBe(out);
    expect(call.stderr).toContain(`wrote ${out} (${PNG.length} bytes, image/png)`);
  });

  it('types each -i by the endpoint\'s schema: integers, numbers, booleans, and a list from repeated -i', async () => {
    const call = await runSvc(['call', '/describe', '--url', server.url, '-i', `image=@${input}`, '-i', 'times=3', '-i', 'scale=0.5', '-i', 'flip=yes', '-i', 'tags=a', '-i', 'tags=2']);
    expect(call.exitCode, call.stderr).toBe(0);
    expect(JSON.parse(call.stdout)).toEqual({ bytes: PNG.length, file_name: 'in.png', values: [3, 0.5, true, ['a', '2']], types: ['int', 'float', 'bool', 'list'] });
  });

  it('writes several named images into -o as a directory and prints the result with their paths', async () => {
    const out = join(dir, `pair-${compute}`);
    const call = await runSvc(['call', '/pair', '--url', server.url, '-i', `image=@${input}`, '-o', out]);
    expect(call.exitCode, call.stderr).toBe(0);
    expect(JSON.parse(call.stdout)).toEqual({ original: join(out, 'original.png'), copy: join(out, 'copy.png'), size: PNG.length });
    expect(readFileSync(join(out, 'original.png')).equals(PNG)).toBe(true);
    expect(readFileSync(join(out, 'copy.png')).equals(PNG)).toBe(true);
  });
});

describe('svc call -i and -o mistakes', () => {
  let server: RunningSvc;
  let dir: string;
  beforeAll(async () => {
    server = await startSvc([SERVICE]);
    dir = mkdtempSync(join(tmpdir(), 'svc-call-files-'));
    writeFileSync(join(dir, 'in.png'), PNG);
  });
  afterAll(async () => {
    await server.stop();
  });

  it.each([
    [['/describe', '-i', 'imag=@in.png'], 'error: -i imag: /describe has no parameter imag; it takes image, times, scale, flip, tags. Did you mean image?'],
    [['/describe', '-i', 'image=@in.png', '-i', 'times=three'], 'error: -i times=three: times takes an integer'],
    [['/describe', '-i', 'image=@in.png', '-i', 'times=1', '-i', 'times=2'], 'error: -i times is given more than once, and /describe takes one value for it'],
    [['/describe', '-i', 'times=@in.png'], 'error: -i times=@in.png: times is no file parameter of /describe (it takes an integer); send text that starts with @ with -d'],
    [['/describe', '-i', 'image=@missing.png'], 'error: -i image=@missing.png: cannot read it (ENOENT)'],
    [['/describ', '-i', 'times=1'], 'error: /describ is no endpoint of the service (it has /echo, /describe, /pair, /count). Did you mean /describe?'],
    [['/count', '-d', '{"text": "a"}', '-i', 'text=b'], 'error: text is given both by --data and by -i; give it once'],
    [['/count', '-i', 'text'], "error: option '-i, --input <name=value>' argument 'text' is invalid. expected name=value, or name=@file for a file"],
    [['/count', '-o', 'out.png', '--async'], 'error: -o writes the result, which --async does not wait for; leave one out'],
  ])('is a usage error naming the problem: %j', async (args, message) => {
    const call = await runSvc(['call', ...args, '--url', server.url], { cwd: dir });
    expect(call.exitCode, call.stderr).toBe(2);
    expect(call.stderr.trim()).toBe(message);
  });

  it('exits 1 writing nothing when -o is given for a result that holds no file', async () => {
    const call = await runSvc(['call', '/count', '--url', server.url, '-i', 'text=abc', '-o', 'out.png'], { cwd: dir });
    expect(call.exitCode).toBe(1);
    expect(call.stderr.trim()).toBe('error: -o out.png: the result holds no file to write (it is an object); nothing was written');
    expect(existsSync(join(dir, 'out.png'))).toBe(false);
  });
});

describe('svc call -i against an endpoint that takes JSON', () => {
  it('types the inputs by the JSON body\'s schema', async () => {
    const server = await startSvc([CALLS]);
    try {
      const call = await runSvc(['call', '/progress', '--url', server.url, '-i', 'count=2', '-i', 'pause=0']);
      expect(call.exitCode, call.stderr).toBe(0);
      expect(JSON.parse(call.stdout)).toEqual({ steps: 2 });
      const get = await runSvc(['call', '/search', '--url', server.url, '--method', 'GET', '-i', 'q=cats', '-i', 'limit=3', '-i', 'tags=a']);
      expect(JSON.parse(get.stdout)).toEqual({ q: 'cats', limit: 3, tags: ['a'] });
    } finally {
      await server.stop();
    }
  });
});

describe('svc call waiting on a full queue', () => {
  it('says on stderr that it waits, for how long and why, then gets its answer', async () => {
    const server = await startSvc([CALLS, '--workers', '1', '--queue-size', '0']);
    try {
      const busy = execa(process.execPath, [SVC_BIN, 'call', '/slow', '--url', server.url, '-d', '{"seconds": 2}'], { reject: false });
      await new Promise((resolve) => setTimeout(resolve, 700));
      const call = await runSvc(['call', '/noop', '--url', server.url]);
      expect(call.exitCode, call.stderr).toBe(0);
      expect(JSON.parse(call.stdout)).toEqual({ ok: true });
      expect(call.stderr).toContain(
        `waiting 5 s to retry (1 of 5): POST ${server.url}/noop answered 503: the queue of /noop is full; retry later (Retry-After: 5)`,
      );
      expect((await busy).exitCode).toBe(0);
    } finally {
      await server.stop();
    }
  });
});
