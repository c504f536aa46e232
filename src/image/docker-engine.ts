import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type Dockerode from 'dockerode';
import { SvcError } from '../svc-error.js';

/** The local (or DOCKER_HOST) engine, answered and described. */
export interface Engine {
  docker: Dockerode;
  /** Where it was reached, for messages: `unix:///var/run/docker.sock`, `tcp://host:2376`. */
  address: string;
  /** Whether the engine runs on this machine (a Unix socket): its disk can be measured here. */
  isLocal: boolean;
  version: string;
  architecture: string;
  dockerRootDir: string;
  runtimes: string[];
}

const PING_TIMEOUT_MS = 5_000;

/**
 * Connects to the engine the way the docker CLI would: DOCKER_HOST (unix://, tcp://,
 * ssh://, with DOCKER_TLS_VERIFY and DOCKER_CERT_PATH) else the default socket, and checks
 * that it answers before any work. dockerode is loaded here, on use: it is left out of the
 * bundle, so `svc start` inside an image never needs it.
 */
export async function connectEngine(env: NodeJS.ProcessEnv = process.env): Promise<Engine> {
  const address = engineAddress(env);
  let docker: Dockerode;
  try {
    const { default: Docker } = await import('dockerode');
    docker = new Docker();
  } catch (error) {
    throw unreachable(address, error);
  }
  try {
    await withTimeout(docker.ping(), PING_TIMEOUT_MS);
    const [version, info] = await Promise.all([docker.version(), docker.info() as Promise<EngineInfo>]);
    return {
      docker,
      address,
      isLocal: address.startsWith('unix://'),
      version: version.Version,
      architecture: info.Architecture ?? 'unknown',
      dockerRootDir: info.DockerRootDir ?? '/var/lib/docker',
      runtimes: Object.keys(info.Runtimes ?? {}),
    };
  } catch (error) {
    throw unreachable(address, error);
  }
}

interface EngineInfo {
  Architecture?: string;
  DockerRootDir?: string;
  Runtimes?: Record<string, unknown>;
}

/** Where the engine is looked for, as the docker CLI and docker-modem decide it. */
export function engineAddress(env: NodeJS.ProcessEnv): string {
  const host = env.DOCKER_HOST;
  if (host && !host.startsWith('unix://')) return host.includes('//') ? host : `tcp://${host}`;
  if (host && host.length > 'unix://'.length) return host;
  const desktop = join(homedir(), '.docker', 'run', 'docker.sock');
  return `unix://${!existsSync('/var/run/docker.sock') && existsSync(desktop) ? desktop : '/var/run/docker.sock'}`;
}

/** The one-line error for an engine that did not answer, with what to do about it. */
export function unreachable(address: string, error: unknown): SvcError {
  const reason = describeError(error);
  const isSocket = address.startsWith('unix://');
  const hint = isSocket && reason === 'EACCES'
    ? // It runs, but this user may not use its socket: the usual state of a fresh Linux install.
      `permission denied on ${address.slice('unix://'.length)}: add your user to the docker group (\`sudo usermod -aG docker $USER\`, then log in again), or use rootless Docker`
    : isSocket
      ? 'start it (e.g. `sudo systemctl start docker`, or Docker Desktop), or point DOCKER_HOST at a running engine'
      : 'check that it runs and that DOCKER_HOST is right';
  return new SvcError('engine', `cannot reach the Docker engine at ${address} (${reason}): ${hint}`);
}

export function describeError(error: unknown): string {
  if (error && typeof error === 'object') {
    const { code, statusCode, json, message } = error as { code?: string; statusCode?: number; json?: { message?: string }; message?: string };
    if (json?.message) return json.message;
    if (code) return code;
    if (statusCode) return `HTTP ${statusCode}`;
    if (message) return message.split('\n')[0] as string;
  }
  return String(error);
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer in ${ms / 1000} s`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
