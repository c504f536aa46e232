import { HttpApp } from './http/http-app.js';
import { HttpError } from './http-error.js';
import { listenOn } from './listen.js';

/**
 * What answers on the port while the workers load the model: `/health` says STARTING (so
 * orchestrators can tell "starting" from "down") and everything else is a 503 with
 * Retry-After. The gateway replaces it on the same port once every worker is ready.
 */
export async function listenWhileStarting(host: string, port: number): Promise<{ port: number; close: () => Promise<void> }> {
  const app = startingGateway();
  await listenOn(app, host, port);
  const address = app.server.address();
  const boundPort = typeof address === 'object' && address !== null ? address.port : port;
  return {
    port: boundPort,
    close: async () => {
      const closing = app.close();
      app.server.closeAllConnections();
      await closing;
    },
  };
}

/** The routes that answer while the workers load, not yet listening. */
export function startingGateway(): HttpApp {
  const app = new HttpApp({ bodyLimit: 0, bodyTooLarge: () => new Error('no body is read while starting') });
  // Bodies are never read: any request but /health gets the 503, however large its body.
  app.setBodyParsers([{ mediaType: '*', reads: 'stream', parse: () => undefined }]);
  app.get('/health', () => ({ status: 'STARTING' }));
  app.setNotFoundHandler(async (_request, reply) => {
    const error = new HttpError(503, 'unavailable', 'starting', 'the service is starting; retry shortly');
    return reply.code(503).header('retry-after', '2').send(error.toBody());
  });
  return app;
}
