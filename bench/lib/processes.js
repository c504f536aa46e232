// Ports, commands and server processes for the benchmarks.
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:net';

/** A TCP port free on 127.0.0.1 right now. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/** Runs a set-up command with its output on the terminal; throws when it fails. */
export function run(command, args) {
  const result = spawnSync(command, args, { stdio: ['ignore', 'inherit', 'inherit'] });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed`);
}

/** SIGTERM to every server still running (svc drains), SIGKILL to any still up 35 s later. */
export async function stopServers(servers) {
  for (const server of servers) if (server.child.exitCode === null) server.child.kill('SIGTERM');
  await Promise.all(
    servers.map((server) => {
      const timer = setTimeout(() => server.child.kill('SIGKILL'), 35_000);
      return server.exited.then(() => clearTimeout(timer));
    }),
  );
}
