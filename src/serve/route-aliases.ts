import type { EndpointReport } from '../worker/protocol.js';

/**
 * How the apipod package (PyPI) spells an endpoint's route: it serves `@app.endpoint("/make_fries")`
 * at `/make-fries`, lower-cased, accents dropped, and every run of characters other than
 * a-z, 0-9 and `/` one `-` (its normalize_name(path, preserve_paths=True), then a leading
 * `/`). test/fixtures/routes/upstream-route-names.json holds examples computed with the package.
 */
export function upstreamRouteName(path: string): string {
  const name = path
    .toLowerCase()
    .normalize('NFD')
    .replace(/\p{Mn}/gu, '')
    .replace(/\\/g, '/')
    .replace(/[^a-z0-9/]+/g, '-')
    .replace(/\/+/g, '/')
    .replace(/-+/g, '-')
    .replace(/^-+|-+$/g, '');
  const named = name === '' ? 'no_name' : name;
  return named.startsWith('/') ? named : `/${named}`;
}

export interface RouteAlias {
  endpoint: EndpointReport;
  /** The endpoint's path as the apipod package spells it, without a trailing slash. */
  alias: string;
}

export interface RouteAliasPlan {
  aliases: RouteAlias[];
  /** Aliases left out, each with the reason in words. */
  refused: Array<RouteAlias & { reason: string }>;
}

/**
 * The aliases under which the endpoints are also served, so that clients written for the
 * apipod package reach them: each endpoint's upstream spelling, where it differs from its
 * path. An alias that is another endpoint's path, that two endpoints would share, or that svc
 * serves itself (`isServedBySvc`) is left out. Chat endpoints keep their chat routes only.
 */
export function planRouteAliases(endpoints: readonly EndpointReport[], isServedBySvc: (method: string, url: string) => boolean): RouteAliasPlan {
  const byPath = new Map(endpoints.map((endpoint) => [withoutTrailingSlash(endpoint.path), endpoint]));
  const wanted = endpoints
    .filter((endpoint) => !endpoint.is_chat)
    .map((endpoint) => ({ endpoint, alias: withoutTrailingSlash(upstreamRouteName(endpoint.path)) }))
    .filter(({ endpoint, alias }) => alias !== withoutTrailingSlash(endpoint.path));
  const plan: RouteAliasPlan = { aliases: [], refused: [] };
  for (const candidate of wanted) {
    const owner = byPath.get(candidate.alias);
    const sharers = wanted.filter((other) => other.alias === candidate.alias && other !== candidate);
    const reason =
      owner !== undefined
        ? `it is the path of ${owner.function}()`
        : sharers.length > 0
          ? `${sharers.map((other) => `${other.endpoint.function}() (${other.endpoint.path})`).join(', ')} would have it too`
          : candidate.endpoint.methods.some((method) => isServedBySvc(method, candidate.alias) || isServedBySvc(method, `/v1${candidate.alias}`))
            ? 'svc serves that route itself'
            : null;
    if (reason === null) plan.aliases.push(candidate);
    else plan.refused.push({ ...candidate, reason });
  }
  return plan;
}

function withoutTrailingSlash(path: string): string {
  return path.length > 1 ? path.replace(/\/+$/, '') || '/' : path;
}
