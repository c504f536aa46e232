import { SvcError } from '../svc-error.js';

/** Anything that listens as Fastify does, resolving with its URL. */
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
