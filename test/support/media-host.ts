import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PNG_BASE64 } from './images.js';
import { closedPort } from './ports.js';

/**
 * A web server on this machine that media URLs point at, as a storage bucket or a CDN would
 * answer them: a PNG with and without a Content-Type, a web page (/page.png, an image by
 * its name only), redirects (a loop, one to ftp://),
 * a 404, a body larger than 1 MiB, one that never ends, and one held until the test says.
 */
export interface MediaHost {
  url: string;
  /** /held.png sends its first bytes, then holds the rest: `requested` once it is asked for, `closed` once its connection closes. */
  held: { requested: Promise<void>; closed: Promise<void> };
  /** A URL on a port nothing listens on. */
  refusedUrl: string;
  close: () => Promise<void>;
}

export async function startMediaHost(): Promise<MediaHost> {
  const png = Buffer.from(PNG_BASE64, 'base64');
  let heldRequested = () => {};
  let heldClosed = () => {};
  const held = { requested: new Promise<void>((resolve) => (heldRequested = resolve)), closed: new Promise<void>((resolve) => (heldClosed = resolve)) };
  const server: Server = createServer((request, response) => {
    switch (request.url) {
      case '/red.png':
        response.writeHead(200, { 'content-type': 'image/png' }).end(png);
        return;
      case '/untyped/photo':
        response.writeHead(200).end(png);
        return;
      case '/moved':
        response.writeHead(302, { location: '/red.png' }).end();
        return;
      case '/loop':
        response.writeHead(302, { location: '/loop' }).end();
        return;
      case '/to-ftp':
        response.writeHead(301, { location: 'ftp://127.0.0.1/red.png' }).end();
        return;
      case '/big.png':
        response.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(2 * 2 ** 20));
        return;
      case '/held.png':
        response.writeHead(200, { 'content-type': 'image/png' });
        response.write(png.subarray(0, 8));
        response.once('close', heldClosed);
        heldRequested();
        return;
      case '/page.png':
        response.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>not an image</body></html>');
        return;
      case '/stalls.png':
        response.writeHead(200, { 'content-type': 'image/png' });
        response.write(png.subarray(0, 8));
        return;
      default:
        response.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    held,
    refusedUrl: `http://127.0.0.1:${await closedPort()}/red.png`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
