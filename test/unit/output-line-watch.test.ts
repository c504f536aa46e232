import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { watchOutputFor } from '../../src/orchestrators/output-line-watch.js';

describe('watchOutputFor', () => {
  it('passes every byte through and tells when a line split across chunks matches', async () => {
    const { stream, seen } = watchOutputFor(/ is ready on http:\/\//);
    const sink = new PassThrough();
    let written = '';
    sink.on('data', (chunk: Buffer) => (written += chunk.toString()));
    stream.pipe(sink);
    let told = false;
    void seen.then(() => (told = true));
    stream.write('starting 1 worker\nhello is rea');
    await new Promise((resolve) => setImmediate(resolve));
    expect(told).toBe(false);
    stream.write('dy on http://0.0.0.0:8000 (docs)\nmore\n');
    await seen;
    stream.end();
    await new Promise((resolve) => sink.on('end', resolve));
    expect(written).toBe('starting 1 worker\nhello is ready on http://0.0.0.0:8000 (docs)\nmore\n');
  });

  it('never tells for output without the line', async () => {
    const { stream, seen } = watchOutputFor(/ is ready on http:\/\//);
    let told = false;
    void seen.then(() => (told = true));
    stream.resume();
    stream.end('runpod worker started\n');
    await new Promise((resolve) => stream.on('end', resolve));
    expect(told).toBe(false);
  });
});
