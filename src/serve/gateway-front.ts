import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { HttpApp } from './http/http-app.js';
import { HttpError } from './http-error.js';
import { gatewayServer, listenAt, listenOn } from './listen.js';

/**
 * One listening port in front of gateways that replace one another (`svc start --reload`):
 * the port and the clients' connections stay while a new gateway, with the new code's
 * routes and OpenAPI document, takes the next requests. A request already routed finishes
 * in the gateway that took it. With no gateway, every request is a 503 saying why.
 */
export class GatewayFront {
  private unavailable = '';
  readonly server: Server = gatewayServer((request, response) => this.route(request, response));

  /** `gateway`: ready, not listening; the first to answer. */
  constructor(private gateway: HttpApp | null) {}

  /** Listens, naming a port in use as `svc start` does; resolves with the URL. */
  listen(host: string, port: number): Promise<string> {
    return listenOn({ listen: (address) => listenAt(this.server, address.host, address.port) }, host, port);
  }

  /** Routes the next requests to `gateway` (ready, not listening); returns the one it replaces. */
  serve(gateway: HttpApp): HttpApp | null {
    const previous = this.gateway;
    this.gateway = gateway;
    return previous;
  }

  /** Answers every request with a 503 naming `reason` until a gateway serves; returns the gateway it replaces. */
  refuse(reason: string): HttpApp | null {
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
}
