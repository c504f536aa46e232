import { createServer, type Server } from 'node:http';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpointReport } from '../support/endpoint-report.js';
import { HttpError } from '../../src/serve/http-error.js';
import { compileEndpointInputs } from '../../src/serve/endpoint-inputs.js';
import { fetchMediaUrls } from '../../src/serve/media-urls.js';

// A real HTTP server as the media host; the gateway-level behaviour is in test/integration.
let host: Server;
let imageUrl: string;
const endpoint = endpointReport({
  path: '/describe',
  function: 'describe',
  input_schema: { type: 'object', properties: { image: { type: 'string', 'x-media-type': 'image' } } },
});
const settings = { maxBytes: 2 ** 20, timeoutMs: 5_000 };
const cancel = new AbortController().signal;

beforeAll(async () => {
  host = createServer((_request, response) => response.end(Buffer.alloc(64, 7)));
  await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
  const address = host.address() as { port: number };
  imageUrl = `http://127.0.0.1:${address.port}/cat.png`;
});
afterAll(() => new Promise<void>((resolve) => host.close(() => resolve())));

describe('fetchMediaUrls', () => {
  it('stages a downloaded URL as a file with its name', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-media-'));
    try {
      const { arguments: fetched, stagedFiles } = await fetchMediaUrls({ image: imageUrl }, compileEndpointInputs(endpoint).mediaUrlParameters, { dir, mediaUrls: settings, cancel });
      expect(fetched.image).toMatchObject({ $file: { file_name: 'cat.png' } });
      expect(await readdir(dir)).toHaveLength(stagedFiles.length);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("answers a 500 that names the field, not the server's temporary path, when the download cannot be saved", async () => {
    const missingDir = join(tmpdir(), `svc-media-gone-${process.pid}`, 'files');
    const failure = await fetchMediaUrls({ image: imageUrl }, compileEndpointInputs(endpoint).mediaUrlParameters, { dir: missingDir, mediaUrls: settings, cancel }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(HttpError);
    expect((failure as HttpError).status).toBe(500);
    expect((failure as HttpError).message).toBe('svc failed: the download for image could not be saved on the server (ENOENT)');
  });
});
