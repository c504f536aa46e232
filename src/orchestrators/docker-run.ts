import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough, type Writable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import type Dockerode from 'dockerode';
import { readBuildRecord } from '../image/build-record.js';
import { changedSince } from '../image/manifest-freshness.js';
import { connectEngine, describeError, type Engine } from '../image/docker-engine.js';
import { imageTagFromTitle } from '../image/image-reference.js';
import { COMPUTE_ENV, IMAGE_PORT, PROVIDER_ENV, SECRET_ENV_NAMES } from '../image/runtime-images.js';
import type { Compute, Provider } from '../deployment-target.js';
import { pollUntil } from '../poll-until.js';
import { locateProject } from '../project-location.js';
import type { Manifest } from '../scan/manifest.js';
import { DEPLOY_DIRECTORY, MANIFEST_FILE } from '../scan/manifest-file.js';
import { SERVING_HEALTH_STATES, type HealthState } from '../worker/health-state.js';
import type { ServeLog } from '../serve-log.js';
import { SvcError } from '../svc-error.js';
import { waitForStopSignal } from '../stop-signal.js';
import { watchOutputFor } from './output-line-watch.js';

export interface DockerRunOptions {
  /** Project directory or service file, as for `svc start`: names the image when `image` is not given. */
  target: string;
  entrypoint?: string | undefined;
  /** The image to run; default the one `svc build --image` last built for the project, else the tag it derives from the title. */
  image?: string | undefined;
  /** Host address the port is published on (`0.0.0.0` for all). */
  host: string;
  /** Host port; 0 picks a free one. */
  port: number;
  /** Override the image's APIPOD_COMPUTE / APIPOD_PROVIDER (from its manifest). */
  compute?: Compute | undefined;
  provider?: Provider | undefined;
  /** Appended to the image's command, e.g. ['--workers', '2']. */
  extraArgs?: string[] | undefined;
  /** `auto` (default): all GPUs when the engine has the NVIDIA runtime; `all` insists; `none` never. */
  gpus?: 'auto' | 'all' | 'none' | undefined;
  /** Where SERVICE_API_KEY and HUB_TOKEN are read from (default process.env); never written into an image. */
  env?: NodeJS.ProcessEnv | undefined;
  /** More variables of `env` the container gets (those of --dotenv). */
  passEnv?: readonly string[];
  /** Seconds the container gets to drain after SIGTERM before the engine kills it. */
  stopTimeoutSeconds?: number | undefined;
  log: ServeLog;
  /** Where the container's own output goes (default: stderr, leaving stdout to --json). */
  containerOutput?: Writable | undefined;
  /** Resolves when the container should stop; default the first SIGINT or SIGTERM. */
  stopWhen?: Promise<unknown> | undefined;
  /** Given the engine's facts once the container answers, e.g. for tests. */
  onListening?: ((info: { url: string; containerId: string; image: string }) => void) | undefined;
}

const HEALTH_POLL_MS = 250;
const DEFAULT_STOP_TIMEOUT_SECONDS = 35;
/** The line the container's gateway prints once it serves (src/orchestrators/local-run.ts). */
const INNER_READY_LINE = / is ready on https?:\/\//;
/** How long svc waits for that line (an image whose server prints another never sends it). */
const INNER_READY_LINE_WAIT_MS = 1000;

/**
 * `svc start --orchestrator docker`: runs the built image on the engine (DOCKER_HOST or the
 * default socket) with its port published, SERVICE_API_KEY and HUB_TOKEN passed from the
 * environment, every GPU when the engine has the NVIDIA runtime, and the container's
 * logs streamed. Resolves once the container has been stopped (SIGTERM, so the gateway
 * drains) and removed after Ctrl-C or SIGTERM; rejects if it exits on its own.
 */
export async function runInDocker(options: DockerRunOptions): Promise<void> {
  const { log } = options;
  const engine = await connectEngine();
  const image = options.image ?? defaultImage(options.target, options.entrypoint, log);
  const imageConfig = await inspectImage(engine, image);
  const useGpus = options.gpus === 'all' || ((options.gpus ?? 'auto') === 'auto' && engine.runtimes.includes('nvidia'));
  if (options.gpus === 'all' && !engine.runtimes.includes('nvidia')) {
    log.warn('the engine lists no NVIDIA runtime; asking for GPUs anyway (--gpus all)');
  }

  const containerPort = `${IMAGE_PORT}/tcp`;
  const container = await engine.docker
    .createContainer({
      name: containerName(image),
      Image: image,
      Cmd: [...(imageConfig.Cmd ?? []), ...(options.extraArgs ?? [])],
      Env: containerEnv(options),
      ExposedPorts: { [containerPort]: {} },
      Labels: { 'svc.orchestrator': 'docker' },
      HostConfig: {
        PortBindings: { [containerPort]: [{ HostIp: options.host, HostPort: options.port === 0 ? '' : String(options.port) }] },
        ...(useGpus ? { DeviceRequests: [{ Driver: '', Count: -1, DeviceIDs: [], Capabilities: [['gpu']], Options: {} }] } : {}),
      },
    })
    .catch((error: unknown) => {
      throw new SvcError('engine', `the engine refused to create a container from ${image}: ${describeError(error)}`);
    });

  const removeContainer = () => container.remove({ force: true }).catch(() => undefined);
  // A second Ctrl-C or SIGTERM does not wait for the drain: the container goes at once.
  const stopWhen = options.stopWhen ?? waitForStopSignal(() => void removeContainer().finally(() => process.exit(130)));
  try {
    const output = options.containerOutput ?? process.stderr;
    const logs = (await container.attach({ stream: true, stdout: true, stderr: true, logs: true })) as NodeJS.ReadableStream;
    const demuxed = new PassThrough();
    engine.docker.modem.demuxStream(logs, demuxed, demuxed);
    const innerReady = watchOutputFor(INNER_READY_LINE);
    demuxed.pipe(innerReady.stream).pipe(output, { end: false });
    await container.start().catch((error: unknown) => {
      const reason = describeError(error);
      // The engine's own words ("driver failed programming external connectivity ...") say it least plainly.
      if (/address already in use|port is already allocated/.test(reason)) {
        throw new SvcError('address', `port ${options.port} is in use on ${options.host}: stop what listens there, or choose another with --port`);
      }
      throw new SvcError('engine', `the container from ${image} did not start: ${reason}`);
    });
    const exited = container.wait().then((result: { StatusCode: number }) => result.StatusCode);

    const hostPort = await publishedPort(container, containerPort);
    const url = `http://${displayHost(options.host)}:${hostPort}`;
    const readiness = readinessCheck(options.provider ?? imageProvider(imageConfig));
    log.info(`running ${image} in container ${container.id.slice(0, 12)}${useGpus ? ' with all GPUs' : ''}; waiting for ${url}${readiness.path}`);
    const ready = await Promise.race([waitForReady(url, readiness, exited), exited.then((code) => ({ exitCode: code }))]);
    if (typeof ready === 'object') throw exitedError(image, ready.exitCode);
    // /health can answer before the container's own ready line has come through the attach
    // stream; its line (with the inner port) goes first, as it happened first.
    await Promise.race([innerReady.seen, delay(INNER_READY_LINE_WAIT_MS)]);
    log.info(`${image} is ready on ${url} (docs: ${url}/docs)`);
    log.event('listening', { url, container: container.id, image });
    options.onListening?.({ url, containerId: container.id, image });

    const outcome = await Promise.race([stopWhen.then(() => 'stop' as const), exited]);
    if (outcome !== 'stop') throw exitedError(image, outcome);
    const grace = options.stopTimeoutSeconds ?? DEFAULT_STOP_TIMEOUT_SECONDS;
    log.info(`stopping the container (SIGTERM; in-flight calls get up to ${grace} s)`);
    await container.stop({ t: grace }).catch(() => undefined);
    await exited.catch(() => undefined);
    log.info('stopped');
  } finally {
    await removeContainer();
  }
}

/** The environment the container gets: the secrets from the caller's environment, those of --dotenv, and target overrides. */
export function containerEnv(options: Pick<DockerRunOptions, 'env' | 'passEnv' | 'compute' | 'provider'>): string[] {
  const source = options.env ?? process.env;
  const names = [...new Set([...SECRET_ENV_NAMES, ...(options.passEnv ?? [])])];
  const env = names.filter((name) => source[name] !== undefined).map((name) => `${name}=${source[name]}`);
  if (options.compute) env.push(`${COMPUTE_ENV}=${options.compute}`);
  if (options.provider) env.push(`${PROVIDER_ENV}=${options.provider}`);
  return env;
}

/**
 * The image `svc build --image` last built for the project (with a warning when the project
 * changed since), else the tag it would give it.
 */
function defaultImage(target: string, entrypoint: string | undefined, log: ServeLog): string {
  const { root } = locateProject(target, entrypoint);
  const record = readBuildRecord(root);
  if (record) {
    const changed = changedSince(root, Date.parse(record.built_at));
    if (changed !== null) log.warn(`${changed} changed since ${record.image} was built: the image runs the code as it was; svc build --image brings it up to date`);
    return record.image;
  }
  const path = join(root, DEPLOY_DIRECTORY, MANIFEST_FILE);
  try {
    const manifest = JSON.parse(readFileSync(path, 'utf8')) as Manifest;
    return imageTagFromTitle(manifest.title);
  } catch {
    throw new SvcError('not-found', `no built image for ${root}: run \`svc build --image\` first`, { file: path });
  }
}

interface ImageConfig {
  Cmd?: string[];
  Env?: string[];
}

async function inspectImage(engine: Engine, image: string): Promise<ImageConfig> {
  try {
    const info = (await engine.docker.getImage(image).inspect()) as { Config?: ImageConfig };
    return info.Config ?? {};
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode === 404) {
      throw new SvcError('not-found', `image ${image} is not on the engine at ${engine.address}: build it with \`svc build --image\``);
    }
    throw new SvcError('engine', `cannot inspect image ${image}: ${describeError(error)}`);
  }
}

async function publishedPort(container: Dockerode.Container, containerPort: string): Promise<string> {
  const info = await container.inspect();
  const binding = info.NetworkSettings.Ports?.[containerPort]?.[0];
  if (!binding?.HostPort) throw new SvcError('engine', `the engine published no host port for ${containerPort}`);
  return binding.HostPort;
}

/** The provider the image starts as, from the APIPOD_PROVIDER that `svc build` set in it. */
function imageProvider(config: ImageConfig): string | undefined {
  const prefix = `${PROVIDER_ENV}=`;
  return config.Env?.find((entry) => entry.startsWith(prefix))?.slice(prefix.length);
}

interface ReadinessCheck {
  path: string;
  isReady(response: Response): Promise<boolean>;
}

/**
 * How to tell the service is ready: the gateway's /health says READY or BUSY (it answers
 * 200 with STARTING while the workers load); for a runpod worker outside the provider, the
 * library's test API answers, whose docs page comes up only after the workers are ready.
 */
function readinessCheck(provider: string | undefined): ReadinessCheck {
  if (provider === 'runpod') return { path: '/openapi.json', isReady: async (response) => response.status === 200 };
  return {
    path: '/health',
    isReady: async (response) => response.status === 200 && SERVING_HEALTH_STATES.includes(((await response.json()) as { status: HealthState }).status),
  };
}

/** Resolves once the check passes; never, if the container exits first. */
function waitForReady(url: string, readiness: ReadinessCheck, exited: Promise<number>): Promise<true> {
  const check = async () => {
    try {
      const response = await fetch(`${url}${readiness.path}`, { signal: AbortSignal.timeout(2_000) });
      const isReady = await readiness.isReady(response);
      await response.body?.cancel().catch(() => {});
      return isReady;
    } catch {
      return false; // not listening yet
    }
  };
  return pollUntil(check, exited, HEALTH_POLL_MS);
}

function exitedError(image: string, code: number): SvcError {
  return new SvcError('engine', `the container from ${image} exited with code ${code} (its output is above)`);
}

function containerName(image: string): string {
  const repository = image.split('@')[0]?.split('/').pop()?.split(':')[0] ?? 'service';
  return `svc-${repository.replace(/[^a-zA-Z0-9_.-]+/g, '-')}-${randomBytes(3).toString('hex')}`;
}

function displayHost(host: string): string {
  return host === '0.0.0.0' || host === '' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
}
