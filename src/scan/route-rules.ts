import { areExclusive, isCertain, type Placement } from './statement-placement.js';

/**
 * The routes `svc start` refuses, read statically: the toolkit refuses a second function on a
 * path when the service is imported (python/apipod/app.py, `APIPod._add`), and the gateway
 * refuses at start a route it serves itself or another endpoint answers already, whatever
 * the trailing slash, each endpoint being served at its path and under /v1
 * (src/serve/endpoint-routes.ts, `refuseTakenRoute`).
 */

/**
 * The routes the gateway registers before the endpoints' (src/serve/health-route.ts,
 * docs-routes.ts, jobs/job-routes.ts), each GET also answering HEAD (src/serve/http/route-table.ts).
 */
const GATEWAY_ROUTES: ReadonlySet<string> = new Set([
  ...['/health', '/docs', '/openapi.json', '/status'].flatMap((path) => [`GET ${path}`, `HEAD ${path}`]),
  // The apipod toolkit's 1.0.5 job route.
  'POST /status',
]);

const V1_PREFIX = '/v1';

export interface PlacedRoute {
  path: string;
  methods: readonly string[];
  function: string;
  /** 1-based line of the `def`. */
  line: number;
  placement: Placement;
  /** The APIPod instance it registers on, the same key for the same instance in every branch; null when unknown. */
  instance: string | null;
  /** Registers on the app svc serves, whichever branch runs. */
  onServedApp: boolean;
}

export interface RouteProblem {
  line: number;
  message: string;
  /** Both routes are registered on every import: svc start certainly refuses the service. */
  isCertain: boolean;
}

export function findRouteProblems(routes: readonly PlacedRoute[]): RouteProblem[] {
  const problems: RouteProblem[] = [];
  const accepted: PlacedRoute[] = [];
  for (const route of routes) {
    const same = accepted.find((other) => other.instance !== null && other.instance === route.instance && other.path === route.path);
    if (same !== undefined && !areExclusive(same.placement, route.placement)) {
      const message =
        same.line === route.line
          ? `${route.function}() is declared twice on ${route.path}, and importing the service fails: give one decorator several methods`
          : `${route.path} is already served by ${same.function}() (line ${same.line}), and importing the service fails: ` +
            `give ${route.function}() another path, or one function several methods`;
      problems.push(problem(route.line, [same, route], message));
      continue;
    }
    accepted.push(route);
  }
  const served = accepted.filter((route) => route.onServedApp);
  const taken = new Map<string, { route: PlacedRoute; isCopy: boolean }>();
  for (const route of served) {
    const described = `endpoint ${route.function} (${route.methods.join(', ')} ${route.path})`;
    const clashes: RouteProblem[] = [];
    for (const [url, isCopy] of urlsOf(route)) {
      const bare = withoutTrailingSlash(url);
      for (const method of route.methods) {
        if (GATEWAY_ROUTES.has(`${method} ${bare}`)) {
          clashes.push(problem(route.line, [route], `${described}: svc serves ${method} ${bare} itself; choose another path`));
        }
        const other = taken.get(`${method} ${bare}`);
        if (other !== undefined && other.route !== route && !areExclusive(other.route.placement, route.placement)) {
          clashes.push(problem(
            route.line,
            [other.route, route],
            `${described}: endpoint ${other.route.function} (${other.route.path}) answers ${method} ${bare} already; ${whyTheSame(other.isCopy || isCopy)}`,
          ));
        }
      }
    }
    // The gateway stops at the first; one is enough to act on.
    const [first] = clashes;
    if (first !== undefined) {
      problems.push(first);
      continue;
    }
    for (const [url, isCopy] of urlsOf(route)) {
      for (const method of route.methods) {
        const key = `${method} ${withoutTrailingSlash(url)}`;
        if (!taken.has(key)) taken.set(key, { route, isCopy });
      }
    }
  }
  return problems;
}

/** Certain when every route involved is registered on every import; else said to hold only if they are. */
function problem(line: number, involved: readonly PlacedRoute[], message: string): RouteProblem {
  const certain = involved.every((route) => isCertain(route.placement));
  const condition = involved.length === 1 ? 'if it is registered' : 'if both are registered';
  return { line, isCertain: certain, message: certain ? message : `${message} (${condition})` };
}

function withoutTrailingSlash(url: string): string {
  return url.length > 1 ? url.replace(/\/+$/u, '') || '/' : url;
}

/** An endpoint's path, and its copy under /v1. */
function urlsOf(route: PlacedRoute): Array<[string, boolean]> {
  return [[route.path, false], [`${V1_PREFIX}${route.path}`, true]];
}

/** Why two different paths are one route, in the gateway's words. */
function whyTheSame(involvesV1Copy: boolean): string {
  return involvesV1Copy ? 'svc serves every endpoint under /v1 too' : 'a trailing slash makes no difference';
}
