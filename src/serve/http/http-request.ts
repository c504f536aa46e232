import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { parse as parseQuery, type ParsedUrlQuery } from 'node:querystring';
import type { TLSSocket } from 'node:tls';
import type { ApiKey } from '../api-keys.js';

/** What a route says of itself, read by the hooks and body parsers its requests pass. */
export interface RouteConfig {
  /** The endpoint path a route calls, for key scopes. */
  endpoint?: string;
  /** Open without a key: health, docs, OpenAPI. */
  public?: boolean;
  /** The parameters whose long strings a JSON body may hand on undecoded (long-strings.ts). */
  longStringParameters?: ReadonlySet<string>;
  /** Of those, the ones whose strings are base64 the gateway decodes (long-strings.ts). */
  base64Parameters?: ReadonlySet<string>;
}

/** The route a request reached: its URL as registered (undefined for none), config and body limit. */
export interface RouteOptions {
  url: string | undefined;
  config: RouteConfig;
  bodyLimit: number;
}

/** A request as routes read it: Node's message, with its route, parameters, query and parsed body. */
export class HttpRequest {
  /** The key the request authenticated with; null when auth is off (auth.ts). */
  apiKey: ApiKey | null = null;
  /** The body as its parser made it; undefined when there was none. */
  body: unknown = undefined;
  private parsedQuery: ParsedUrlQuery | null = null;

  constructor(
    readonly raw: IncomingMessage,
    readonly routeOptions: RouteOptions,
    readonly params: { readonly [name: string]: string },
    private readonly search: string,
  ) {}

  get method(): string {
    return this.raw.method ?? 'GET';
  }

  get url(): string {
    return this.raw.url ?? '/';
  }

  get headers(): IncomingHttpHeaders {
    return this.raw.headers;
  }

  /** `a=1&b=2&b=3` as {a: '1', b: ['2', '3']}, every parameter kept; read on first use. */
  get query(): ParsedUrlQuery {
    return (this.parsedQuery ??= parseQuery(this.search, '&', '=', { maxKeys: 0 }));
  }

  get protocol(): 'http' | 'https' {
    return (this.raw.socket as TLSSocket).encrypted ? 'https' : 'http';
  }

  /** The host the client addressed, from its Host header. */
  get host(): string {
    return this.raw.headers.host ?? '';
  }
}
