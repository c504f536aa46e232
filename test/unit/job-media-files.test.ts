import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { endpointReport } from '../support/endpoint-report.js';
import { JobMediaFiles } from '../../src/serve/jobs/job-media-files.js';
import type { Arguments } from '../../src/serve/input-validation.js';
import type { Value } from '../../src/worker/protocol.js';

const image = { 'x-media-type': 'image', anyOf: [{ type: 'string' }, { type: 'object' }] };
const endpoint = endpointReport({
  path: '/edit',
  input_schema: { type: 'object', properties: { photo: image, prompt: { type: 'string' }, either: { anyOf: [image, { type: 'string' }] } } },
});

describe("a job's media base64, decoded for its worker as its call is made", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-job-media-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  const longString = (parameter: string, text: string) => ({ parameter, bytes: Buffer.from(text) });

  it("stages a media parameter's base64 as the file it stands for, and sends every other long string beside the call", () => {
    const photo = Buffer.from(Array.from({ length: 5000 }, (_, index) => (index * 7) % 256));
    const media = new JobMediaFiles(dir, (path) => (path === endpoint.path ? endpoint : undefined));
    const callArguments: Arguments = { photo: '', prompt: '', either: '' };
    const prompt = longString('prompt', photo.toString('base64'));
    // A parameter that also takes text gets the text: its string is not a file's base64.
    const either = longString('either', photo.toString('base64'));
    const staged = media.stage('/edit', callArguments, [longString('photo', photo.toString('base64url')), prompt, either]);

    expect(staged.longStrings).toEqual([prompt, either]);
    expect(staged.stagedFiles).toHaveLength(1);
    const reference = callArguments.photo as { $file: { path: string } };
    expect(reference).toEqual({ $file: { path: staged.stagedFiles[0], file_name: null, content_type: null } });
    expect(readFileSync(reference.$file.path).equals(photo)).toBe(true);
    expect([callArguments.prompt, callArguments.either]).toEqual(['', '']);
  });

  it('leaves to the worker what it would read otherwise, and any endpoint the service no longer has', () => {
    const media = new JobMediaFiles(dir, (path) => (path === endpoint.path ? endpoint : undefined));
    const base64 = Buffer.from('a picture').toString('base64');
    for (const text of [`data:image/png;base64,${base64}`, `${base64.slice(0, 4)} ${base64.slice(5)}`]) {
      const callArguments: Arguments = { photo: '' };
      const strings = [longString('photo', text)];
      expect(media.stage('/edit', callArguments, strings)).toEqual({ longStrings: strings, stagedFiles: [] });
      expect(callArguments.photo).toBe('');
    }
    const reloaded: Arguments = { photo: '' };
    const strings = [longString('photo', base64)];
    expect(media.stage('/gone', reloaded, strings)).toEqual({ longStrings: strings, stagedFiles: [] });
    expect(readdirSync(dir)).toEqual([]);
  });

  it('stages the long base64 of a job read back as JSON (after a restart, or from Redis), where it is a string of the arguments', () => {
    const photo = Buffer.from(Array.from({ length: 60_000 }, (_, index) => (index * 13) % 256));
    const media = new JobMediaFiles(dir, () => endpoint);
    const callArguments: Arguments = { photo: photo.toString('base64'), prompt: photo.toString('base64') };
    const { longStrings, stagedFiles } = media.stage('/edit', callArguments, undefined);
    expect([longStrings, stagedFiles.length, callArguments.prompt]).toEqual([undefined, 1, photo.toString('base64')]);
    expect(readFileSync((callArguments.photo as { $file: { path: string } }).$file.path).equals(photo)).toBe(true);
    // Short base64 costs the worker less than a file would; a character beyond ASCII is no base64.
    const short = Buffer.from('a picture').toString('base64');
    const accented = `${photo.toString('base64').slice(0, 1000)}Ł${photo.toString('base64').slice(1001)}`;
    for (const text of [short, accented]) {
      const kept: Arguments = { photo: text };
      expect(media.stage('/edit', kept, undefined).stagedFiles).toEqual([]);
      expect(kept.photo).toBe(text);
    }
  });

  it('sends the base64 beside the call when its file cannot be written', () => {
    const media = new JobMediaFiles(join(dir, 'missing'), () => endpoint);
    const callArguments: { [name: string]: Value } = { photo: '' };
    const strings = [longString('photo', Buffer.from('a picture').toString('base64'))];
    expect(media.stage('/edit', callArguments, strings)).toEqual({ longStrings: strings, stagedFiles: [] });
    expect(callArguments.photo).toBe('');
  });
});
