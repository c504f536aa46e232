import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listBuildContext } from '../../src/image/build-context.js';

describe('the build context svc sends', () => {
  it('keeps .env files out at any depth, counts bytes and weights, and names links that leave the project', () => {
    const outside = mkdtempSync(join(tmpdir(), 'svc-outside-'));
    writeFileSync(join(outside, 'model.safetensors'), Buffer.alloc(3_000));
    const root = mkdtempSync(join(tmpdir(), 'svc-context-'));
    mkdirSync(join(root, 'config'));
    mkdirSync(join(root, 'weights'));
    writeFileSync(join(root, 'service.py'), 'x = 1\n');
    for (const secret of ['.env', '.env.local', 'config/.env']) writeFileSync(join(root, secret), 'TOKEN=1\n');
    writeFileSync(join(root, '.env.example'), 'TOKEN=\n');
    writeFileSync(join(root, 'weights/small.safetensors'), Buffer.alloc(1_000));
    symlinkSync(join(outside, 'model.safetensors'), join(root, 'weights/linked.safetensors'));
    symlinkSync('small.safetensors', join(root, 'weights/alias.safetensors'));

    const context = listBuildContext(root, 'Dockerfile');
    expect(context.files).toEqual(['.env.example', 'service.py', 'weights/alias.safetensors', 'weights/linked.safetensors', 'weights/small.safetensors']);
    expect(context.secretsLeftOut.sort()).toEqual(['.env', '.env.local', 'config/.env']);
    expect(context.linksOut).toEqual(['weights/linked.safetensors']);
    expect(context.weights.map((weight) => weight.path)).toContain('weights/small.safetensors');
  });
});
