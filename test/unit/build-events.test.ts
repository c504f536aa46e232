import { describe, expect, it } from 'vitest';
import { BuildStreamParser } from '../../src/image/build-events.js';
import { judgePreflight } from '../../src/image/build-preflight.js';

const line = (message: unknown) => `${JSON.stringify(message)}\r\n`;

describe('reading the engine build stream', () => {
  it('turns steps, cache hits, layers, step output and the image into events, across arbitrary chunking', () => {
    const stream = [
      line({ stream: 'Step 1/3 : FROM python:3.11-slim-bookworm' }),
      line({ stream: '\n' }),
      line({ stream: ' ---> d85cb9174ec3\n' }),
      line({ stream: 'Step 2/3 : RUN apt-get update\n' }),
      line({ stream: ' ---> Using cache\n' }),
      line({ stream: ' ---> 0123456789ab\n' }),
      line({ stream: 'Step 3/3 : RUN echo hi\n' }),
      line({ stream: ' ---> Running in 5f1e2d3c4b5a\n' }),
      line({ stream: 'h' }),
      line({ stream: 'i\n\u001b[91mwarn on stderr\n\u001b[0m' }),
      line({ stream: 'Removing intermediate container 5f1e2d3c4b5a\n' }),
      line({ stream: ' ---> fedcba987654\n' }),
      line({ aux: { ID: 'sha256:abc' } }),
      line({ stream: 'Successfully built fedcba987654\n' }),
    ].join('');
    const parser = new BuildStreamParser();
    const events = [];
    for (let index = 0; index < stream.length; index += 7) events.push(...parser.push(stream.slice(index, index + 7)));
    events.push(...parser.end());
    expect(events).toEqual([
      { type: 'step', step: 1, total: 3, instruction: 'FROM python:3.11-slim-bookworm' },
      { type: 'layer', step: 1, id: 'd85cb9174ec3' },
      { type: 'step', step: 2, total: 3, instruction: 'RUN apt-get update' },
      { type: 'cached', step: 2 },
      { type: 'layer', step: 2, id: '0123456789ab' },
      { type: 'step', step: 3, total: 3, instruction: 'RUN echo hi' },
      { type: 'log', step: 3, line: 'hi' },
      { type: 'log', step: 3, line: 'warn on stderr' },
      { type: 'layer', step: 3, id: 'fedcba987654' },
      { type: 'stage-built', id: 'sha256:abc' },
    ]);
  });

  it('reports an error with the step it happened in', () => {
    const parser = new BuildStreamParser();
    const events = parser.push(
      line({ stream: 'Step 4/9 : RUN exit 3\n' }) +
        line({ errorDetail: { code: 3, message: "The command '/bin/sh -c exit 3' returned a non-zero code: 3" }, error: 'x' }),
    );
    expect(events.at(-1)).toEqual({ type: 'error', step: 4, message: "The command '/bin/sh -c exit 3' returned a non-zero code: 3" });
  });
});

describe('checks before a build', () => {
  const facts = { architecture: 'x86_64', freeBytes: 100e9, dockerRootDir: '/var/lib/docker', gpuBaseImage: true, skipDiskCheck: false };

  it('refuses a GPU build with less than 30 GB free, unless told to skip the check', () => {
    expect(judgePreflight({ ...facts, freeBytes: 12.3e9 }).refusal).toBe(
      'only 12.3 GB free at /var/lib/docker; GPU base images need at least 30 GB to build (free some space, e.g. `docker system prune`, or pass --skip-disk-check)',
    );
    expect(judgePreflight({ ...facts, freeBytes: 12.3e9, skipDiskCheck: true }).refusal).toBeNull();
    expect(judgePreflight({ ...facts, freeBytes: 12.3e9, gpuBaseImage: false }).refusal).toBeNull();
    expect(judgePreflight(facts)).toEqual({ warnings: [], refusal: null });
  });

  it('says that an arm64 engine builds the amd64 image under emulation', () => {
    expect(judgePreflight({ ...facts, architecture: 'aarch64' }).warnings).toEqual([
      'this engine runs on arm64: the image is built for linux/amd64 under emulation, which is much slower',
    ]);
  });
});
