import { HttpError } from '../http-error.js';
import { withoutTrailingSlash } from '../route-aliases.js';

/** A path parameter longer than this is a 414: a job id or a model name is far shorter. */
const MAX_PARAMETER_LENGTH = 1000;

/** What a lookup found: the route's value and its parameters, decoded. */
export interface FoundRoute<Route> {
  route: Route;
  params: { [name: string]: string };
}

interface ParametricRoute<Route> {
  method: string;
  url: string;
  /** The URL's segments; a parameter's is its name after the `:`. */
  segments: Array<{ text: string; isParameter: boolean }>;
  route: Route;
}

/**
 * The gateway's routes by method and URL. A URL is static (`/health`) or has `:name`
 * segments (`/v1/jobs/:id`); a static route wins over a parametric one. A trailing slash
 * makes no difference (`/hello/` is `/hello`), as clients and proxies append one freely. A
 * GET route answers HEAD too, unless HEAD has a route of its own (Node's server then sends
 * the headers alone). A path or parameter whose percent-encoding is not UTF-8 is a 400, a
 * parameter longer than MAX_PARAMETER_LENGTH a 414.
 */
export class RouteTable<Route> {
  private readonly staticRoutes = new Map<string, Route>();
  private readonly parametricRoutes: Array<ParametricRoute<Route>> = [];
  /** The methods of each static URL, in the order they were added, for a 405's `Allow`. */
  private readonly staticMethods = new Map<string, string[]>();

  add(method: string, url: string, route: Route): void {
    if (this.has(method, url, { explicitOnly: true })) throw new Error(`${method} ${url} has a route already`);
    const bare = withoutTrailingSlash(url);
    if (!bare.split('/').some((segment) => segment.startsWith(':'))) {
      this.staticRoutes.set(`${method} ${bare}`, route);
      const methods = this.staticMethods.get(bare) ?? [];
      methods.push(method);
      this.staticMethods.set(bare, methods);
      return;
    }
    const segments = bare.split('/').map((segment) => (segment.startsWith(':') ? { text: segment.slice(1), isParameter: true } : { text: segment, isParameter: false }));
    this.parametricRoutes.push({ method, url, segments, route });
  }

  /** Whether `method` has a route at `url` (a GET route answers HEAD), with parameters as registered. */
  has(method: string, url: string, { explicitOnly = false } = {}): boolean {
    const bare = withoutTrailingSlash(url);
    const registered = (candidate: string) =>
      this.staticRoutes.has(`${candidate} ${bare}`) || this.parametricRoutes.some((route) => route.method === candidate && withoutTrailingSlash(route.url) === bare);
    return registered(method) || (!explicitOnly && method === 'HEAD' && registered('GET'));
  }

  /** The methods a static URL answers (GET's HEAD after it), or undefined when none does. */
  methodsAt(path: string): string[] | undefined {
    const methods = this.staticMethods.get(withoutTrailingSlash(path));
    if (methods === undefined) return undefined;
    return methods.flatMap((method) => (method === 'GET' && !methods.includes('HEAD') ? ['GET', 'HEAD'] : [method]));
  }

  /** The route for a request's method and path (the URL without its query), or null. */
  find(method: string, path: string): FoundRoute<Route> | null {
    const bare = withoutTrailingSlash(decodedPath(path));
    const exact = this.staticRoutes.get(`${method} ${bare}`) ?? (method === 'HEAD' ? this.staticRoutes.get(`GET ${bare}`) : undefined);
    if (exact !== undefined) return { route: exact, params: {} };
    if (this.parametricRoutes.length === 0) return null;
    const segments = withoutTrailingSlash(path).split('/');
    const matching = (candidate: string) => this.parametricRoutes.find((route) => route.method === candidate && matches(route, segments));
    const found = matching(method) ?? (method === 'HEAD' ? matching('GET') : undefined);
    if (found === undefined) return null;
    const params: { [name: string]: string } = {};
    found.segments.forEach((segment, index) => {
      if (!segment.isParameter) return;
      const value = segments[index]!;
      if (value.length > MAX_PARAMETER_LENGTH) {
        throw new HttpError(414, 'invalid_request', 'uri_too_long', `the URL's ${segment.text} is ${value.length} characters, more than the ${MAX_PARAMETER_LENGTH} this server reads`);
      }
      params[segment.text] = decodedComponent(value);
    });
    return { route: found.route, params };
  }
}

function matches<Route>(route: ParametricRoute<Route>, segments: readonly string[]): boolean {
  if (route.segments.length !== segments.length) return false;
  return route.segments.every((segment, index) => (segment.isParameter ? segments[index] !== '' : decodedPath(segments[index]!) === segment.text));
}

/** The path with its percent-escapes read, but for those of characters that delimit a URL (`%2F` stays). */
function decodedPath(path: string): string {
  return decodedWith(decodeURI, path);
}

function decodedComponent(segment: string): string {
  return decodedWith(decodeURIComponent, segment);
}

function decodedWith(decode: (text: string) => string, text: string): string {
  if (!text.includes('%')) return text;
  try {
    return decode(text);
  } catch {
    throw badUrl(text);
  }
}

function badUrl(text: string): HttpError {
  return new HttpError(400, 'invalid_request', 'invalid_url', `${JSON.stringify(text)} is not a valid url component: its percent-encoding is no UTF-8`);
}
