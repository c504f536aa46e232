import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { planRouteAliases, upstreamRouteName } from '../../src/serve/route-aliases.js';
import type { EndpointReport } from '../../src/worker/protocol.js';
import { REPO_ROOT } from '../support/svc.js';

const NAMES = JSON.parse(readFileSync(join(REPO_ROOT, 'test/fixtures/routes/upstream-route-names.json'), 'utf8')).names as Array<[string, string]>;

function endpoint(path: string, fn: string, options: Partial<EndpointReport> = {}): EndpointReport {
  return { path, methods: ['POST'], function: fn, doc: null, is_async: false, is_generator: false, is_chat: false, direct: false, body_parameter: null, input_schema: { type: 'object' }, output_schema: {}, injected: [], ...options };
}

describe("the apipod package's spelling of routes", () => {
  it('spells each path as the package does', () => {
    for (const [path, spelt] of NAMES) expect([path, upstreamRouteName(path)]).toEqual([path, spelt]);
  });

  it('adds an alias where the spelling differs, and none where it is the path or another endpoint has it', () => {
    const plan = planRouteAliases(
      [endpoint('/make_fries', 'fries'), endpoint('/ready', 'ready'), endpoint('/Up_Load/', 'upload'), endpoint('/make-tea', 'tea'), endpoint('/make_tea', 'tea2')],
      () => false,
    );
    expect(plan.aliases.map(({ endpoint, alias }) => [endpoint.function, alias])).toEqual([['fries', '/make-fries'], ['upload', '/up-load']]);
    expect(plan.refused.map(({ alias, reason }) => [alias, reason])).toEqual([['/make-tea', 'it is the path of tea()']]);
  });

  it("leaves out an alias two endpoints would share, or that svc serves itself, and gives chat endpoints none", () => {
    const plan = planRouteAliases(
      [endpoint('/Make_Fries', 'upper'), endpoint('/make_fries', 'lower'), endpoint('/Health', 'health'), endpoint('/My_Chat', 'chat', { is_chat: true })],
      (method, url) => method === 'POST' && url === '/health',
    );
    expect(plan.aliases).toEqual([]);
    expect(plan.refused.map(({ endpoint, reason }) => [endpoint.function, reason])).toEqual([
      ['upper', 'lower() (/make_fries) would have it too'],
      ['lower', 'upper() (/Make_Fries) would have it too'],
      ['health', 'svc serves that route itself'],
    ]);
  });
});

describe('aliases and the /v1 copies of every route', () => {
  it("leaves out an alias whose /v1 copy is another endpoint's path, or that is another endpoint's /v1 copy", () => {
    const plan = planRouteAliases(
      [endpoint('/v1/make-soup', 'soup_v1'), endpoint('/make_soup', 'soup'), endpoint('/stew', 'stew'), endpoint('/V1/Stew', 'stew_upper'), endpoint('/bake_bread', 'bread')],
      () => false,
    );
    expect(plan.aliases.map(({ endpoint, alias }) => [endpoint.function, alias])).toEqual([['bread', '/bake-bread']]);
    expect(plan.refused.map(({ endpoint, alias, reason }) => [endpoint.function, alias, reason])).toEqual([
      ['soup', '/make-soup', 'its /v1 copy /v1/make-soup is the path of soup_v1()'],
      ['stew_upper', '/v1/stew', 'svc serves stew() (/stew) there under /v1'],
    ]);
  });

  it("leaves out two aliases when one is the other's /v1 copy", () => {
    const plan = planRouteAliases([endpoint('/Rice', 'rice'), endpoint('/V1/Rice', 'rice_v1')], () => false);
    expect(plan.aliases).toEqual([]);
    expect(plan.refused.map(({ endpoint, reason }) => [endpoint.function, reason])).toEqual([
      ['rice', 'rice_v1() (/V1/Rice) would have it too'],
      ['rice_v1', 'rice() (/Rice) would have it too'],
    ]);
  });
});
