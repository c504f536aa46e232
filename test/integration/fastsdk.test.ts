import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PNG_BASE64 } from '../support/images.js';
import { startSvc, type RunningSvc } from '../support/server.js';
import { REPO_ROOT } from '../support/svc.js';
import { toolkitPython } from '../support/toolkit-venv.js';

/**
 * fastsdk, the apipod toolkit's own Python client (PyPI, pinned in .ci/requirements-toolkit.txt),
 * unmodified, through its whole job flow against `svc start --compute serverless`: it must
 * recognise svc as an apipod service, send files the way it sends them to the toolkit, and
 * follow the job by the envelope's links.
 */
describe('fastsdk against svc start --compute serverless', () => {
  let server: RunningSvc;
  let seen: Record<string, any>;
  beforeAll(async () => {
    server = await startSvc([join(REPO_ROOT, 'test/fixtures/services/fastsdk_target.py'), '--compute', 'serverless']);
    const png = join(mkdtempSync(join(tmpdir(), 'svc-fastsdk-')), 'in.png');
    writeFileSync(png, Buffer.from(PNG_BASE64, 'base64'));
    const run = await execa(toolkitPython(), [join(REPO_ROOT, 'test/fixtures/clients/fastsdk_flow.py'), server.url, png], { reject: false, timeout: 90_000 });
    if (run.exitCode !== 0) throw new Error(`fastsdk_flow.py failed:\n${run.stderr}`);
    seen = JSON.parse(run.stdout.trim().split('\n').at(-1) as string);
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('submits a job and gets its result, not the envelope, having seen its progress message', () => {
    expect(seen.greet).toEqual({ value: { greeting: 'Hello, Ada!' } });
    expect(seen.greet_progress_messages).toEqual([expect.stringContaining('halfway')]);
  });

  it('sends a file given as a path, as bytes or as a media object, and the function gets it', () => {
    const size = Buffer.from(PNG_BASE64, 'base64').length;
    expect(seen.describe_path).toEqual({ value: { label: 'path', file_name: 'in.png', content_type: 'image/png', size } });
    expect(seen.describe_bytes).toEqual({ value: { label: 'bytes', file_name: 'imagefile', content_type: 'image/png', size } });
    expect(seen.describe_media).toEqual({ value: { label: 'media', file_name: 'imagefile', content_type: 'image/png', size } });
    expect(seen.checksum).toEqual({ value: [...Buffer.from(PNG_BASE64, 'base64')].reduce((sum, byte) => sum + byte, 0) });
  });

  it('receives a returned image as a file', () => {
    // Which of its file classes the client builds depends on media-toolkit's release, not on the server.
    expect(seen.mirror).toEqual({ type: expect.stringMatching(/^(ImageFile|FileModel)$/), content_type: 'image/png', file_name: 'in.png' });
  });

  it("raises the function's exception message for a failed job", () => {
    expect(seen.fail).toEqual({ raised: 'TaskException', message: expect.stringContaining('the model is not loaded') });
  });

  it('cancels a running job at once (the toolkit itself lets it run on)', () => {
    expect(seen.cancel_status).toBe('CANCELLED');
    expect(seen.after_cancel).toMatchObject({ raised: 'TaskCancelledException' });
    expect(seen.cancel_seconds).toBeLessThan(5);
  });

  it('receives an embedding as the same floats, whole ones as floats, and a seed past 2^53 exact', () => {
    expect(seen.embed).toEqual({
      value: { embedding_exact: true, types: ['float'], whole_exact: true, tokens: 2, seed: '18446744073709551617', seed_type: 'int' },
    });
  });

  it("streams a generator's chunks as they come, by the envelope's stream link", () => {
    expect(seen.stream_chunks).toEqual({ value: ['token 1', 'token 2', 'token 3'] });
    // The result, as the toolkit gives it: the text chunks joined.
    expect(seen.stream_result).toEqual({ value: 'token 1token 2token 3' });
  });
});
