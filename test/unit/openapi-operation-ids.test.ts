import { describe, expect, it } from 'vitest';
import { describeService } from '../../src/serve/openapi.js';
import type { EndpointReport } from '../../src/worker/protocol.js';

function endpoint(path: string, name: string): EndpointReport {
  const schema = { type: 'object', properties: {}, additionalProperties: false };
  return { path, methods: ['POST'], function: name, doc: null, is_async: false, is_generator: false, is_chat: false, direct: false, body_parameter: null, input_schema: schema, output_schema: {}, injected: [] };
}

describe('OpenAPI operation ids', () => {
  it('are unique however function names and paths collide', () => {
    const endpoints = [endpoint('/a', 'run'), endpoint('/b', 'run'), endpoint('/c', 'run_a'), endpoint('/d-e', 'go'), endpoint('/d_e', 'go')];
    const document = describeService({ title: 't', version: '1', compute: 'dedicated', endpoints }) as { paths: Record<string, { post: { operationId: string } }> };
    const ids = Object.entries(document.paths).map(([path, operations]) => [path, operations.post.operationId]);
    expect(ids).toEqual([
      ['/a', 'run_a_2_post'],
      ['/b', 'run_b_post'],
      ['/c', 'run_a_post'],
      ['/d-e', 'go_d_e_post'],
      ['/d_e', 'go_d_e_2_post'],
    ]);
  });
});
