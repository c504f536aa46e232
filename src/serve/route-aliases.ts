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
 * path. Every route is served under /v1 too, so an alias is left out when it or its /v1 copy
 * is a route of another endpoint, of another alias, or of svc itself (`isServedBySvc`).
 * Chat endpoints keep their chat routes only.
 */
export function planRouteAliases(endpoints: readonly EndpointReport[], isServedBySvc: (method: string, url: string) => boolean): RouteAliasPlan {
  const owners = new Map(endpoints.flatMap((endpoint) => servedAt(withoutTrailingSlash(endpoint.path)).map((url) => [url, endpoint] as const)));
  const wanted = endpoints
    .filter((endpoint) => !endpoint.is_chat)
    .map((endpoint) => ({ endpoint, alias: withoutTrailingSlash(upstreamRouteName(endpoint.path)) }))
    .filter(({ endpoint, alias }) => alias !== withoutTrailingSlash(endpoint.path));
  const plan: RouteAliasPlan = { aliases: [], refused: [] };
  for (const candidate of wanted) {
    const urls = servedAt(candidate.alias);
    const taken = urls.find((url) => owners.has(url));
    const sharers = wanted.filter((other) => other !== candidate && servedAt(other.alias).some((url) => urls.includes(url)));
    const reason =
      taken !== undefined
        ? ownerReason(taken, candidate.alias, owners.get(taken)!)
        : sharers.length > 0
          ? `${sharers.map((other) => `${other.endpoint.function}() (${other.endpoint.path})`).join(', ')} would have it too`
          : candidate.endpoint.methods.some((method) => urls.some((url) => isServedBySvc(method, url)))
            ? 'svc serves that route itself'
            : null;
    if (reason === null) plan.aliases.push(candidate);
    else plan.refused.push({ ...candidate, reason });
  }
  return plan;
}

/** Where svc serves a path: as it is, and under /v1. */
function servedAt(path: string): string[] {
  return [path, `/v1${path}`];
}

/** Why `url`, the alias or its /v1 copy, is not free: it is `owner`'s path or the /v1 copy of it. */
function ownerReason(url: string, alias: string, owner: EndpointReport): string {
  if (url !== alias) return `its /v1 copy ${url} is the path of ${owner.function}()`;
  return url === withoutTrailingSlash(owner.path) ? `it is the path of ${owner.function}()` : `svc serves ${owner.function}() (${owner.path}) there under /v1`;
}

/** A path as the router matches it: a trailing slash makes no difference. */
export function withoutTrailingSlash(path: string): string {
  return path.length > 1 ? path.replace(/\/+$/, '') || '/' : path;
}
