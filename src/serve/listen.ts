import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { SvcError } from '../svc-error.js';
import { HttpError } from './http-error.js';

/** Longer than the 60 s of common load balancers, which then close first. */
const KEEP_ALIVE_MS = 72_000;

/**
 * A server for the gateway's requests: connections kept 72 s between requests, and no limit
 * on a request's whole time (Node's default of 5 min would cut a long upload or a long call).
 * A request Node cannot parse is answered in the one error shape too, and its connection closed.
 */
export function gatewayServer(listener: (request: IncomingMessage, response: ServerResponse) => void): Server {
  const server = createServer(listener);
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  server.requestTimeout = 0;
  server.on('clientError', answerUnreadable);
  return server;
}

function answerUnreadable(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const refusal =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? new HttpError(431, 'invalid_request', 'headers_too_large', 'the request headers are larger than this server reads (16 KiB)')
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new HttpError(408, 'invalid_request', 'request_timeout', 'the request headers did not arrive in time')
        : new HttpError(400, 'invalid_request', 'malformed_request', `the request is not HTTP this server can read (${error.code ?? error.message})`);
  const body = JSON.stringify(refusal.toBody());
  socket.end(`HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status]}\r\nconnection: close\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
}

/** Listens on the address; resolves with the server's URL (the port it took, for port 0). */
export function listenAt(server: Server, host: string, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address();
      const bound = typeof address === 'object' && address !== null ? address.port : port;
      resolve(`http://${host.includes(':') ? `[${host}]` : host}:${bound}`);
    });
  });
}

/** Anything that listens, resolving with its URL. */
interface Listener {
  listen(address: { host: string; port: number }): Promise<string>;
}

/**
 * Listens on the address, turning what a user can fix (a port in use, a port that needs
 * privileges, an address this machine does not have) into one line that says how.
 */
export async function listenOn(app: Listener, host: string, port: number): Promise<string> {
  try {
    return await app.listen({ host, port });
  } catch (error) {
    switch ((error as NodeJS.ErrnoException).code) {
      case 'EADDRINUSE':
        throw new SvcError('address', `port ${port} is in use on ${host}: stop what listens there, or choose another with --port`);
      case 'EACCES':
        throw new SvcError('address', `port ${port} needs privileges this user does not have: choose one above 1023 with --port`);
      case 'EADDRNOTAVAIL':
      case 'ENOTFOUND':
        throw new SvcError('address', `cannot listen on ${host}: this machine has no such address; use --host 0.0.0.0 or 127.0.0.1`);
      default:
        throw error;
    }
  }
}
