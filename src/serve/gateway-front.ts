import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { HttpError } from './http-error.js';
import { listenOn } from './listen.js';

/** Fastify's own default: longer than the 60 s of common load balancers, which close first. */
const KEEP_ALIVE_MS = 72_000;

/**
 * One listening port in front of gateways that replace one another (`svc start --reload`):
 * the port and the clients' connections stay while a new gateway, with the new code's
 * routes and OpenAPI document, takes the next requests. A request already routed finishes
 * in the gateway that took it. With no gateway, every request is a 503 saying why.
 */
export class GatewayFront {
  private unavailable = '';
  readonly server: Server = createServer((request, response) => this.route(request, response));

  /** `gateway`: ready, not listening; the first to answer. */
  constructor(private gateway: FastifyInstance | null) {
    this.server.keepAliveTimeout = KEEP_ALIVE_MS;
  }

  /** Listens, naming a port in use as `svc start` does; resolves with the URL. */
  listen(host: string, port: number): Promise<string> {
    return listenOn({ listen: (address) => this.listenAt(address.host, address.port) }, host, port);
  }

  /** Routes the next requests to `gateway` (ready, not listening); returns the one it replaces. */
  serve(gateway: FastifyInstance): FastifyInstance | null {
    const previous = this.gateway;
    this.gateway = gateway;
    return previous;
  }

  /** Answers every request with a 503 naming `reason` until a gateway serves; returns the gateway it replaces. */
  refuse(reason: string): FastifyInstance | null {
    this.unavailable = reason;
    const previous = this.gateway;
    this.gateway = null;
    return previous;
  }

  private route(request: IncomingMessage, response: ServerResponse): void {
    if (this.gateway) {
      this.gateway.routing(request, response);
      return;
    }
    const body = new HttpError(503, 'unavailable', 'no_workers', this.unavailable).toBody();
    response.writeHead(503, { 'content-type': 'application/json; charset=utf-8', 'retry-after': '2' });
    response.end(JSON.stringify(body));
  }

  private listenAt(host: string, port: number): Promise<string> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        const address = this.server.address();
        const bound = typeof address === 'object' && address !== null ? address.port : port;
        resolve(`http://${host.includes(':') ? `[${host}]` : host}:${bound}`);
      });
    });
  }
}
