import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { HttpError } from '../http-error.js';
import { gatewayServer, listenAt } from '../listen.js';
import { HttpReply } from './http-reply.js';
import { HttpRequest, type RouteConfig, type RouteOptions } from './http-request.js';
import { readBody } from './request-body.js';
import { RouteTable } from './route-table.js';

export type Handler = (request: HttpRequest, reply: HttpReply) => unknown;
/** Runs before the body is read; `done(error)` answers with the error, a sent reply ends the request. */
export type OnRequestHook = (request: HttpRequest, reply: HttpReply, done: (error?: Error) => void) => void;

/**
 * How a body of some media types is read: as bytes up to the body limit, or left on the
 * socket for the route (`request.raw`). `parse` makes `request.body` or throws the error
 * to answer with.
 */
export interface BodyParser {
  /** Tested against the Content-Type header; `*` takes any other (and a body without one). */
  mediaType: RegExp | '*';
  reads: 'bytes' | 'stream';
  parse(request: HttpRequest, body: Buffer | null): unknown;
}

export interface HttpAppOptions {
  /** The largest body read as bytes. */
  bodyLimit: number;
  /** The error a body above the limit is answered with. */
  bodyTooLarge: () => Error;
}

interface Route {
  handler: Handler;
  options: RouteOptions;
}

const NO_PARAMETERS: { readonly [name: string]: string } = Object.freeze({});
/** Methods whose body is read whenever one is sent, and those whose body is read only with a Content-Type. */
const BODY_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'TRACE']);
const OPTIONAL_BODY_METHODS: ReadonlySet<string> = new Set(['OPTIONS', 'DELETE']);

/**
 * The gateway's HTTP layer on `node:http`: routes, the hooks every request passes, body
 * parsers, and every error answered in the one error shape (http-error.ts). It takes
 * requests from a server of its own (`listen`) or from one in front of it (`routing`, for
 * `svc start --reload`). Once closing, it answers every new request with a 503 and closes
 * the connection.
 */
export class HttpApp {
  readonly server: Server;
  private readonly routes = new RouteTable<Route>();
  private readonly hooks: OnRequestHook[] = [];
  private parsers: BodyParser[] = [];
  private notFound: Route;
  private closing = false;

  constructor(private readonly options: HttpAppOptions) {
    const noRoute = () => {
      throw new HttpError(404, 'not_found', 'unknown_route', 'no such route');
    };
    this.notFound = { handler: noRoute, options: this.routeOptions(undefined, {}) };
    this.server = gatewayServer(this.routing);
  }

  route({ method, url, handler, config = {} }: { method: string | readonly string[]; url: string; handler: Handler; config?: RouteConfig }): void {
    const route = { handler, options: this.routeOptions(url, config) };
    for (const each of [method].flat()) this.routes.add(each, url, route);
  }

  get(url: string, handler: Handler, config?: RouteConfig): void {
    this.route({ method: 'GET', url, handler, ...(config ? { config } : {}) });
  }

  post(url: string, handler: Handler, config?: RouteConfig): void {
    this.route({ method: 'POST', url, handler, ...(config ? { config } : {}) });
  }

  hasRoute(method: string, url: string): boolean {
    return this.routes.has(method, url);
  }

  /** The methods a URL without parameters answers, for a 405's `Allow`; undefined when none. */
  methodsAt(path: string): string[] | undefined {
    return this.routes.methodsAt(path);
  }

  onRequest(hook: OnRequestHook): void {
    this.hooks.push(hook);
  }

  setBodyParsers(parsers: readonly BodyParser[]): void {
    this.parsers = [...parsers];
  }

  /** What answers a request no route takes; the hooks run before it, as before a route. */
  setNotFoundHandler(handler: Handler): void {
    this.notFound = { handler, options: this.notFound.options };
  }

  /** Answers one request (the listener `node:http` calls). */
  readonly routing = (raw: IncomingMessage, response: ServerResponse): void => {
    const startedAt = performance.now();
    if (this.closing) return refuseWhileClosing(response);
    const url = raw.url ?? '/';
    const queryAt = url.indexOf('?');
    const path = queryAt < 0 ? url : url.slice(0, queryAt);
    let found: ReturnType<RouteTable<Route>['find']> = null;
    let badUrl: unknown = null;
    try {
      found = this.routes.find(raw.method ?? 'GET', path);
    } catch (error) {
      badUrl = error;
    }
    const route = found?.route ?? this.notFound;
    const request = new HttpRequest(raw, route.options, found?.params ?? NO_PARAMETERS, queryAt < 0 ? '' : url.slice(queryAt + 1));
    const reply = new HttpReply(response, startedAt, (error) => this.fail(error, reply));
    if (badUrl !== null) return this.fail(badUrl, reply);
    this.runHooks(0, request, reply, route.handler);
  };

  /** Listens on its own server; resolves with its URL. */
  listen({ host, port }: { host: string; port: number }): Promise<string> {
    return listenAt(this.server, host, port);
  }

  /**
   * Stops taking requests: new ones are refused with a 503, idle connections close, and
   * the server (when it listens) closes once the requests it has are answered.
   */
  close(): Promise<void> {
    this.closing = true;
    if (!this.server.listening) return Promise.resolve();
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeIdleConnections();
    });
  }

  private routeOptions(url: string | undefined, config: RouteConfig): RouteOptions {
    return { url, config, bodyLimit: this.options.bodyLimit };
  }

  private runHooks(index: number, request: HttpRequest, reply: HttpReply, handler: Handler): void {
    if (index === this.hooks.length) return this.parseBody(request, reply, handler);
    this.hooks[index]!(request, reply, (error) => {
      if (error !== undefined) this.fail(error, reply);
      else this.runHooks(index + 1, request, reply, handler);
    });
  }

  private parseBody(request: HttpRequest, reply: HttpReply, handler: Handler): void {
    const { method, headers } = request;
    const contentType = headers['content-type'];
    const sendsBody = headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0');
    const reads = BODY_METHODS.has(method) ? contentType !== undefined || sendsBody : OPTIONAL_BODY_METHODS.has(method) && contentType !== undefined && (sendsBody || headers['content-length'] !== undefined);
    if (!reads) return this.invoke(handler, request, reply);
    const encoding = headers['content-encoding']?.trim() ?? '';
    if (encoding !== '' && encoding.toLowerCase() !== 'identity') return this.fail(compressedBody(encoding), reply);
    const parser = this.parsers.find((candidate) => candidate.mediaType !== '*' && contentType !== undefined && candidate.mediaType.test(contentType)) ?? this.parsers.find((candidate) => candidate.mediaType === '*');
    if (parser === undefined) return this.fail(new HttpError(415, 'unsupported_media_type', 'unsupported_content_type', `Content-Type ${contentType ?? '(none)'} is not accepted`), reply);
    const parseWith = (body: Buffer | null) => {
      try {
        request.body = parser.parse(request, body);
      } catch (error) {
        return this.fail(error, reply);
      }
      this.invoke(handler, request, reply);
    };
    if (parser.reads === 'stream') return parseWith(null);
    readBody(request.raw, request.routeOptions.bodyLimit, this.options.bodyTooLarge, (error, body) => {
      if (error !== null) this.fail(error, reply);
      else parseWith(body);
    });
  }

  private invoke(handler: Handler, request: HttpRequest, reply: HttpReply): void {
    let result: unknown;
    try {
      result = handler(request, reply);
    } catch (error) {
      return this.fail(error, reply);
    }
    if (isPromise(result)) {
      result.then(
        (value) => answerWith(value, reply),
        (error: unknown) => this.fail(error, reply),
      );
    } else {
      answerWith(result, reply);
    }
  }

  private fail(error: unknown, reply: HttpReply): void {
    if (!reply.resetForError()) {
      // The answer has started (a stream, server-sent events): cutting the connection is how it can end.
      if (!reply.raw.writableEnded) reply.raw.destroy();
      return;
    }
    answerWithError(error, reply);
  }
}

/** A route's return value is its answer, unless it sent one itself (or returned the reply). */
function answerWith(value: unknown, reply: HttpReply): void {
  if (value !== undefined && value !== reply && !reply.sent) reply.send(value);
}

function isPromise(value: unknown): value is Promise<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as Promise<unknown>).then === 'function';
}

/** Every error in the one error shape, with the headers it names (`WWW-Authenticate`, `Allow`); anything else is svc's own failure, a 500. */
function answerWithError(error: unknown, reply: HttpReply): void {
  const answer = error instanceof HttpError ? error : new HttpError(500, 'internal_error', 'internal_error', `svc failed: ${error instanceof Error ? error.message : String(error)}`);
  for (const [name, value] of Object.entries(answer.extra.headers ?? {})) reply.header(name, value);
  reply.code(answer.status).send(answer.toBody());
}

/** A compressed body is refused, as RFC 7694 has it, rather than read as the text it is not. */
function compressedBody(encoding: string): HttpError {
  return new HttpError(415, 'unsupported_media_type', 'unsupported_content_encoding', `Content-Encoding ${encoding} is not accepted: send the body uncompressed`, {
    headers: { 'accept-encoding': 'identity' },
  });
}

function refuseWhileClosing(response: ServerResponse): void {
  const body = new HttpError(503, 'unavailable', 'stopping', 'the server is stopping; retry shortly').toBody();
  response.writeHead(503, { 'content-type': 'application/json; charset=utf-8', connection: 'close', 'retry-after': '2' });
  response.end(JSON.stringify(body));
}
