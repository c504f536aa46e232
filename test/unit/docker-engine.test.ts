import { describe, expect, it } from 'vitest';
import { unreachable } from '../../src/image/docker-engine.js';

/** An error as Node's net module gives it for a socket it could not connect to. */
function connectError(code: string, path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`connect ${code} ${path}`), { code, syscall: 'connect', address: path });
}

describe('an engine that does not answer', () => {
  it('says to start it when its socket is not there', () => {
    expect(unreachable('unix:///var/run/docker.sock', connectError('ENOENT', '/var/run/docker.sock')).message).toBe(
      'cannot reach the Docker engine at unix:///var/run/docker.sock (ENOENT): start it (e.g. `sudo systemctl start docker`, or Docker Desktop), or point DOCKER_HOST at a running engine',
    );
  });

  it('says to join the docker group when it runs but its socket is not this user’s to use', () => {
    expect(unreachable('unix:///var/run/docker.sock', connectError('EACCES', '/var/run/docker.sock')).message).toBe(
      'cannot reach the Docker engine at unix:///var/run/docker.sock (EACCES): permission denied on /var/run/docker.sock: ' +
        'add your user to the docker group (`sudo usermod -aG docker $USER`, then log in again), or use rootless Docker',
    );
  });

  it('says to check DOCKER_HOST for an engine over TCP', () => {
    expect(unreachable('tcp://10.0.0.5:2375', connectError('ECONNREFUSED', '10.0.0.5')).message).toBe(
      'cannot reach the Docker engine at tcp://10.0.0.5:2375 (ECONNREFUSED): check that it runs and that DOCKER_HOST is right',
    );
  });
});
