import { createServer } from 'node:net';

/**
 * A port nothing listens on, and nothing will while a test counts on its refusal: drawn,
 * as quietPort's are, from below the ephemeral range, where a parallel test's server that
 * binds port 0 is never handed it (one handed out by the system went to such a server
 * within a minute in CI).
 */
export async function closedPort(): Promise<number> {
  return quietPort();
}

// Below Linux's ephemeral range (32768-60999): no server of a parallel test that binds port 0 is handed one of these.
const QUIET_PORTS = { from: 20_000, to: 32_000 };

/**
 * A free port that stays free while a server hands it on: `--test-server` closes svc's
 * starting page and the provider library binds the port a second later, a gap in which a
 * port from the ephemeral range can go to another test's server.
 */
export async function quietPort(host = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const port = QUIET_PORTS.from + Math.floor(Math.random() * (QUIET_PORTS.to - QUIET_PORTS.from));
    const probe = createServer();
    const free = await new Promise<boolean>((resolve) => {
      probe.once('error', () => resolve(false));
      probe.listen(port, host, () => resolve(true));
    });
    if (free) {
      await new Promise((resolve) => probe.close(resolve));
      return port;
    }
  }
  throw new Error(`no free port between ${QUIET_PORTS.from} and ${QUIET_PORTS.to} on ${host}`);
}
