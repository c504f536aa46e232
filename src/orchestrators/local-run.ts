import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { locateProject, recordedImagePython } from '../project-location.js';
import { checkRunpodLibrary } from '../providers/runpod-library.js';
import { chooseRunpodMode, type RunpodMode } from '../providers/runpod-mode.js';
import { runAsRunpodWorker } from '../providers/runpod-worker.js';
import { SvcError } from '../svc-error.js';
import { waitForStopSignal } from '../stop-signal.js';
import { findPythonInterpreter, type PythonInterpreter } from '../worker/python-interpreter.js';
import type { WorkerPool } from '../worker/worker-pool.js';
import { checkedWorkersInterpreter, newLocalPool, type StartingWorkers } from './local-workers.js';
import { PoolSwitch } from '../worker/pool-switch.js';
import { COMPUTE_VALUES, DEFAULT_TARGET, SERVED_PROVIDERS, type Compute, type Provider, type ServedProvider } from '../deployment-target.js';
import { API_KEYS_ENV, ApiKeys } from '../serve/api-keys.js';
import { createGateway, serviceSpecification } from '../serve/gateway.js';
import type { Webhooks } from '../serve/gateway-options.js';
import { toEnvelope, type ServiceSpecification } from '../serve/jobs/job-envelope.js';
import { MEMORY_DELIVERY_LOG, type DeliveryLog } from '../serve/webhooks/delivery-log.js';
import { SqliteDeliveryLog } from '../serve/webhooks/sqlite-delivery-log.js';
import { WebhookDispatcher, type WebhookSettings } from '../serve/webhooks/webhook-dispatcher.js';
import { WEBHOOK_SECRETS_ENV, WebhookSecrets } from '../serve/webhooks/webhook-secrets.js';
import type { JobSettings } from '../serve/gateway-options.js';
import { JobRunner } from '../serve/jobs/job-runner.js';
import { JobMediaFiles } from '../serve/jobs/job-media-files.js';
import { JobStore } from '../serve/jobs/job-store.js';
import type { Job } from '../serve/jobs/job.js';
import type { JobJournal } from '../serve/jobs/job-journal.js';
import type { JobBackend } from '../serve/jobs/job-backend.js';
import { LocalJobs } from '../serve/jobs/local-jobs.js';
import type { RedisReplica } from '../serve/jobs/redis-replica.js';
import { planRecovery } from '../serve/jobs/job-recovery.js';
import { defaultJobStoreLocation, describeJobStore, projectStateDirectory, type JobStoreLocation } from '../serve/jobs/job-store-location.js';
import { SqliteJobJournal, sqliteUnavailable } from '../serve/jobs/sqlite-job-journal.js';
import { serveReloading } from './local-reload.js';
import { closeWhenJobsRead } from './server-stop.js';
import { urlHost } from '../listen-url.js';
import { letHeapGrowForPayloads } from '../serve/heap-growth.js';
import { listenOn } from '../serve/listen.js';
import type { ServeLog } from '../serve-log.js';
import { listenWhileStarting } from '../serve/startup-server.js';

export interface LocalServeOptions {
  target: string;
  entrypoint: string | undefined;
  host: string;
  port: number;
  workers: number;
  /** --python, when given. */
  python: string | undefined;
  /** The interpreter, already being asked for by the caller (while this module loaded); else asked here. */
  pythonLookup?: Promise<PythonInterpreter> | undefined;
  /** The workers, already started by the caller (while this module loaded); not with --reload. */
  startedWorkers?: StartingWorkers | undefined;
  maxBodyBytes: number;
  /** How long the server may take to fetch a media URL a client gives; null: it fetches none (--no-media-urls). */
  mediaUrlTimeoutMs: number | null;
  queueSize: number;
  /** How long a client may take none of a large answer before it is disconnected. */
  sendTimeoutMs: number;
  gracePeriodMs: number;
  cancelGraceMs: number;
  debug: boolean;
  version: string;
  /** From the command line; else APIPod(compute=...) in the service; else dedicated. */
  compute: Compute | undefined;
  /** From the command line; else APIPod(provider=...) in the service; else localhost. */
  provider: ServedProvider | undefined;
  /** How a runpod worker is tried out here: `--test-server`, `--test-input FILE`. */
  runpodTrial: { testServer: boolean; testInputFile: string | undefined };
  /** Web origins whose pages may call the service (CORS); `*` for any. */
  corsOrigins: string[];
  apiKey: string | undefined;
  apiKeysFile: string | undefined;
  jobs: JobSettings;
  /** --job-store; by default sqlite for serverless compute, memory for dedicated (and --reload). */
  jobStore: JobStoreLocation | undefined;
  /** How job webhooks are sent, and the file of their secrets (default: svc's state directory for the project). */
  webhooks: { settings: WebhookSettings; secretsFile: string | undefined };
  /** Restart the workers, and follow their endpoints, when the project's Python files or requirements change. */
  reload: boolean;
  log: ServeLog;
}

const RETRY_AFTER_SECONDS = 5;
const RELOAD_WITH_RUNPOD = "--reload serves HTTP on this machine and does not take a provider's jobs: leave out --provider runpod, --test-server and --test-input, or add --provider localhost";

/**
 * `svc start` with the local orchestrator: Python workers on this machine behind the
 * gateway, which serves HTTP (provider localhost) or takes the provider's jobs (runpod).
 * Resolves once the server has stopped after SIGTERM or SIGINT, having let in-flight calls
 * finish within the grace period and run the lifespan shutdown.
 */
export async function serveLocally(options: LocalServeOptions): Promise<void> {
  letHeapGrowForPayloads();
  // Files in transit between the gateway and the workers (uploads, large payloads) live in
  // a directory of this server's own, readable by its user alone: a `$file` reference can
  // reach nothing else, and other users of the machine cannot read the uploads.
  const fileDir = options.startedWorkers?.fileDir ?? (await mkdtemp(join(tmpdir(), 'svc-files-')));
  // Closed last, once no job can change: the next server to start takes the file.
  const held: Held = { journal: null, webhooks: null, redis: null };
  try {
    await serveWithFileDir(options, fileDir, held);
  } finally {
    // No delivery may write once the file is closed; those not made wait in it for the next server.
    held.webhooks?.dispatcher.stop();
    held.webhooks?.log.close();
    held.journal?.close();
    await held.redis?.close();
    // Workers started early are stopped also when a check failed before they served.
    await options.startedWorkers?.pool.shutdown(options.gracePeriodMs);
    await rm(fileDir, { recursive: true, force: true });
  }
}

/**
 * What the server holds open until it has stopped: the job file and the webhook deliveries kept
 * in it, or this replica's Redis connections.
 */
interface Held {
  journal: JobJournal | null;
  webhooks: { dispatcher: WebhookDispatcher; log: DeliveryLog } | null;
  redis: RedisReplica | null;
}

async function serveWithFileDir(options: LocalServeOptions, fileDir: string, held: Held): Promise<void> {
  const { root, entrypoint } = locateProject(options.target, options.entrypoint);
  const { log } = options;
  const keys = ApiKeys.from({ key: options.apiKey, keysFile: options.apiKeysFile, keysJson: process.env[API_KEYS_ENV] });
  const { startedWorkers } = options;
  const python = await (startedWorkers
    ? checkedWorkersInterpreter(startedWorkers)
    : (options.pythonLookup ?? findPythonInterpreter({ explicit: options.python, projectDir: root, env: process.env })));
  // A provider named on the command line is checked before any model loads; --test-server
  // and --test-input name runpod themselves, so their file and library are checked first too.
  const { testServer, testInputFile } = options.runpodTrial;
  const named = options.provider ?? (testServer || testInputFile !== undefined ? 'runpod' : undefined);
  if (options.reload && named === 'runpod') throw new SvcError('usage', RELOAD_WITH_RUNPOD);
  const early = named === undefined ? null : await prepareProvider(named, options, python);
  // A file named on the command line is opened before any model loads: a bad path fails at once.
  if (options.jobStore?.kind === 'sqlite') held.journal = SqliteJobJournal.open(options.jobStore.path, (message) => options.log.warn(message));
  if (options.jobStore?.kind === 'redis') {
    // Loaded on use: the Redis client is a fifth of the gateway's code, and most servers start without it.
    const { RedisReplica } = await import('../serve/jobs/redis-replica.js');
    held.redis = await RedisReplica.connect(options.jobStore.url);
  }
  log.info(`starting ${options.workers} worker${options.workers === 1 ? '' : 's'} of ${entrypoint} with ${python.path} (Python ${python.version}, from ${python.source})`);
  const imagePython = recordedImagePython(root);
  if (imagePython !== null && !python.version.startsWith(`${imagePython.version}.`)) {
    log.warn(`the image runs Python ${imagePython.version} (from ${imagePython.source}), these workers ${python.version}: what works here may not there (--python chooses another)`);
  }

  // Known once the workers report the service's title; deliveries wait for no worker, so they ask when they go.
  let specification: ServiceSpecification = serviceSpecification(basename(root), options.version);
  /** The jobs, with those its journal kept from the last server, which `resume` runs once a pool serves. */
  const openJobs = (retention: JobSettings | null): { jobs: JobBackend; webhooks: Webhooks | null; resume: () => void; unendedCount: () => number } => {
    const runnerOptions = {
      timeoutsMs: options.jobs.timeoutsMs,
      defaultTimeoutMs: options.jobs.defaultTimeoutMs,
      debug: options.debug,
      media: new JobMediaFiles(fileDir, (path) => calls.endpointAt(path)),
    };
    const { redis } = held;
    if (redis !== null) {
      const jobs = redis.jobs(calls, { retention: options.jobs, maxQueue: options.queueSize, retryAfterSeconds: RETRY_AFTER_SECONDS, runner: runnerOptions, workers: options.workers, log });
      log.info(`jobs are kept in ${describeJobStore(options.jobStore as JobStoreLocation)}, shared with every replica started with it`);
      // No webhooks yet: their dispatcher follows one server's own store. A stopping replica
      // leaves nothing unended of its own: it puts those back in the shared queue.
      return { jobs, webhooks: null, resume: () => redis.start(), unendedCount: () => 0 };
    }
    const store = new JobStore(retention ?? options.jobs, Date.now, held.journal);
    const jobRunner = new JobRunner(store, calls, runnerOptions);
    // A provider's worker (no retention) gets no webhooks: the provider notifies its callers.
    const webhooks = retention === null ? openWebhooks(store) : null;
    let toRun: ReturnType<JobStore['restore']> = [];
    let failedAtRestore: Job[] = [];
    if (held.journal !== null) {
      const plan = planRecovery(held.journal.load(), Date.now(), options.jobs.ttlMs);
      toRun = store.restore(plan);
      failedAtRestore = plan.failed;
      log.info(
        `jobs are kept in ${held.journal.location}: ${plan.kept.length} ended job(s) still readable, ${plan.toRun.length} to run` +
          (plan.failed.length > 0 ? `, ${plan.failed.length} failed as the server stopped twice while they ran` : ''),
      );
    }
    // A job the restart failed gets its end from endedWhileDown below, not as one already over.
    const failedIds = new Set(failedAtRestore.map((job) => job.id));
    webhooks?.dispatcher.restore((jobId) => !failedIds.has(jobId) && store.hasEnded(jobId));
    for (const job of failedAtRestore) webhooks?.dispatcher.endedWhileDown(job);
    return {
      jobs: new LocalJobs(store, jobRunner, RETRY_AFTER_SECONDS),
      webhooks,
      resume: () => jobRunner.resume(toRun.splice(0)),
      unendedCount: () => store.unendedCount,
    };
  };

  /** Webhooks follow the store's jobs; their deliveries live where the jobs do. */
  const openWebhooks = (store: JobStore): Webhooks => {
    const location = held.journal?.location;
    const log = location?.startsWith('sqlite:') ? SqliteDeliveryLog.open(location.slice('sqlite:'.length), (message) => options.log.warn(message)) : MEMORY_DELIVERY_LOG;
    const secretsFile = options.webhooks.secretsFile ?? join(projectStateDirectory(root, process.env, homedir()), 'webhook-secrets.json');
    const secrets = new WebhookSecrets(secretsFile, Date.now, process.env[WEBHOOK_SECRETS_ENV] || undefined);
    secrets.check();
    const dispatcher = new WebhookDispatcher({
      log,
      secrets,
      settings: options.webhooks.settings,
      envelope: (job, baseUrl) => toEnvelope(job, baseUrl, specification),
      retentionMs: options.jobs.ttlMs,
      userAgent: `svc/${options.version} (webhooks)`,
    });
    held.webhooks = { dispatcher, log };
    store.onAnyChange((job) => dispatcher.observe(job));
    return { dispatcher, secrets, allowPrivate: options.webhooks.settings.allowPrivate };
  };

  const newPool = () =>
    newLocalPool({
      workers: options.workers,
      python: python.path,
      fileDir,
      serviceFile: join(root, entrypoint),
      projectDir: root,
      queueSize: options.queueSize,
      cancelGraceMs: options.cancelGraceMs,
      log,
    });
  // One for the server's life: a job outlives the pool and the gateway that took it (--reload).
  const calls = new PoolSwitch();
  const newGateway = (pool: WorkerPool, { keys: gatewayKeys, jobs, webhooks }: { keys: ApiKeys; jobs: JobBackend; webhooks: Webhooks | null }) => {
    const title = pool.app.title ?? basename(root);
    specification = serviceSpecification(title, options.version);
    const compute = options.compute ?? serviceCompute(pool.app.compute);
    checkTimeoutPaths(options.jobs.timeoutsMs, pool.endpoints.map((endpoint) => endpoint.path));
    const gateway = createGateway({
      keys: gatewayKeys,
      jobBackend: jobs,
      webhooks,
      runner: calls.describing(pool),
      title,
      compute,
      jobs: options.jobs,
      version: options.version,
      maxBodyBytes: options.maxBodyBytes,
      sendTimeoutMs: options.sendTimeoutMs,
      retryAfterSeconds: RETRY_AFTER_SECONDS,
      debug: options.debug,
      fileDir,
      mediaUrls: options.mediaUrlTimeoutMs === null ? null : { maxBytes: options.maxBodyBytes, timeoutMs: options.mediaUrlTimeoutMs },
      onRequestLog: (line) => log.request(line),
      log,
      corsOrigins: options.corsOrigins,
    });
    const logReady = (address: string, event: 'listening' | 'reloaded') => {
      const shown = address.replace('0.0.0.0', 'localhost');
      log.info(`${title} is ready on ${shown} (docs: ${shown}/docs; ${compute} compute${keys.enabled ? ', API key required' : ''}${reachNote(options.host)})`);
      for (const endpoint of pool.endpoints) log.info(`  ${endpoint.methods.join(',')} ${endpoint.path}`);
      log.event(event, { url: address, endpoints: pool.endpoints.map((endpoint) => endpoint.path) });
    };
    return { gateway, logReady };
  };

  if (options.reload) {
    const { jobs, webhooks, resume } = openJobs(null);
    let isFirst = true;
    await serveReloading({
      root,
      host: options.host,
      port: options.port,
      gracePeriodMs: options.gracePeriodMs,
      log,
      stopSignal: waitForStopSignal(),
      calls,
      jobStore: jobs,
      newPool,
      newGateway: async (pool) => {
        if (options.provider === undefined && serviceProvider(pool.app.provider, log) === 'runpod') throw new SvcError('usage', RELOAD_WITH_RUNPOD);
        const { gateway, logReady } = newGateway(pool, { keys, jobs, webhooks });
        return {
          gateway,
          ready: (url) => {
            logReady(url, isFirst ? 'listening' : 'reloaded');
            resume();
            isFirst = false;
          },
        };
      },
    });
    log.info('stopped');
    return;
  }

  const pool = startedWorkers?.pool ?? newPool();
  const stopSignal = waitForStopSignal();
  // The port answers STARTING while the workers load, unless nothing will listen on it.
  const usesPort = early === null || early.runpod === null || early.runpod.kind === 'test-server';
  const starting = usesPort ? await listenWhileStarting(options.host, options.port) : null;
  if (starting) {
    log.info(`listening on port ${starting.port}; /health says STARTING until every worker is ready`);
    log.event('starting', { url: `http://${urlHost(options.host)}:${starting.port}` });
  }
  try {
    const first = await Promise.race([(startedWorkers?.started ?? pool.start()).then(() => null), stopSignal]);
    if (first !== null) {
      log.info(`${first} while starting: stopping the workers`);
      await pool.shutdown(options.gracePeriodMs);
      return;
    }
  } finally {
    await starting?.close();
  }

  try {
    const prepared = early ?? (await prepareProvider(serviceProvider(pool.app.provider, log), options, python));
    const gatewayKey = prepared.runpod ? randomBytes(32).toString('base64url') : null;
    // The runpod worker's jobs are its bridge's alone, read once as they end: kept longer, a
    // worker serving images for an hour held every result (20 MB each) until it ran out of memory.
    if (prepared.runpod) {
      if (held.journal !== null || held.redis !== null) log.info("--job-store is not used with --provider runpod: the provider's queue keeps the jobs");
      held.journal?.close();
      held.journal = null;
      await held.redis?.close();
      held.redis = null;
    } else {
      if (options.jobStore === undefined) {
        held.journal = openDefaultJournal(defaultJobStoreLocation(options.compute ?? serviceCompute(pool.app.compute), root, process.env, homedir()), log);
      }
    }
    const { jobs, webhooks, resume, unendedCount } = openJobs(prepared.runpod ? { ...options.jobs, ttlMs: 0, maxRetained: 0, maxRetainedBytes: 0 } : null);
    calls.switchTo(pool);
    resume();
    // The runpod worker's gateway answers only its bridge: the provider authenticates callers.
    const served = newGateway(pool, { keys: gatewayKey ? ApiKeys.from({ key: gatewayKey }) : keys, jobs, webhooks });
    const { gateway } = served;
    if (prepared.runpod && gatewayKey) {
      if (keys.enabled) log.info('--api-key and SERVICE_API_KEY are not used with --provider runpod: the provider authenticates its callers');
      await runAsRunpodWorker({
        gateway,
        gatewayKey,
        endpoints: pool.endpoints,
        python: python.path,
        projectDir: root,
        mode: prepared.runpod,
        host: options.host,
        port: starting?.port ?? options.port,
        concurrency: options.workers,
        gracePeriodMs: options.gracePeriodMs,
        debug: options.debug,
        stopSignal,
        log,
      });
    } else {
      served.logReady(await listenOn(gateway, options.host, starting?.port ?? options.port), 'listening');

      const signal = await stopSignal;
      log.info(`${signal}: finishing in-flight calls (up to ${options.gracePeriodMs / 1000} s), then stopping`);
      // Jobs still queued in Redis are the other replicas' to run.
      await held.redis?.stopTaking();
      // Still listening while calls finish: new calls get 503 with Retry-After from the
      // stopping pool, and clients can still poll, stream or cancel their jobs.
      const deadline = Date.now() + options.gracePeriodMs;
      await pool.shutdown(options.gracePeriodMs);
      const unended = unendedCount();
      if (held.journal !== null && unended > 0) {
        log.info(`${unended} job(s) not ended are kept in ${held.journal.location}: they run when the server starts again`);
      }
      await closeWhenJobsRead({ jobStore: jobs, deadline, log, server: gateway.server, close: () => gateway.close() });
    }
  } finally {
    // Also when the provider stopped on its own or a check failed: the workers must not outlive svc.
    await pool.shutdown(options.gracePeriodMs);
  }
  log.info('stopped');
}

/**
 * The default file, when SQLite loads here: an image's runtime carries no native modules, so
 * a container keeps its jobs in memory unless it is given a store (docs/jobs.md).
 */
function openDefaultJournal(location: JobStoreLocation, log: ServeLog): JobJournal | null {
  if (location.kind !== 'sqlite') return null;
  const unavailable = sqliteUnavailable();
  if (unavailable) {
    log.warn(`jobs are kept in memory, not in ${describeJobStore(location)}, and a crash loses them: ${unavailable}`);
    return null;
  }
  return SqliteJobJournal.open(location.path, (message) => log.warn(message));
}

/** A time-out for a path that is no endpoint is a typo that would leave the real one without a limit. */
function checkTimeoutPaths(timeoutsMs: ReadonlyMap<string, number>, endpoints: readonly string[]): void {
  for (const path of timeoutsMs.keys()) {
    if (!endpoints.includes(path)) {
      throw new SvcError('usage', `--endpoint-timeout ${path}: no endpoint has that path; the endpoints are ${endpoints.join(', ')}`);
    }
  }
}

interface PreparedProvider {
  /** How a runpod worker takes jobs; null for provider localhost. */
  runpod: RunpodMode | null;
}

async function prepareProvider(provider: ServedProvider, options: LocalServeOptions, python: PythonInterpreter): Promise<PreparedProvider> {
  const { testServer, testInputFile } = options.runpodTrial;
  if (provider !== 'runpod') {
    if (testServer || testInputFile) throw new SvcError('usage', `${testServer ? '--test-server' : '--test-input'} tries out a runpod worker: use --provider runpod, not ${provider}`);
    return { runpod: null };
  }
  const testInput = testInputFile === undefined ? undefined : { file: testInputFile, text: await readTestInput(testInputFile) };
  const mode = chooseRunpodMode({ testServer, testInput, env: process.env });
  const version = await checkRunpodLibrary(python);
  options.log.info(`provider runpod: the provider's library (runpod ${version}) takes the jobs`);
  return { runpod: mode };
}

async function readTestInput(file: string): Promise<string> {
  try {
    return await readFile(resolve(file), 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message;
    throw new SvcError('usage', `--test-input: cannot read it (${reason})`, { file });
  }
}

function serviceProvider(declared: Provider, log: ServeLog): ServedProvider {
  if ((SERVED_PROVIDERS as readonly string[]).includes(declared)) return declared as ServedProvider;
  log.warn(`APIPod(provider="${declared}") is not available in this version of svc; serving with provider localhost`);
  return DEFAULT_TARGET.provider;
}

function serviceCompute(declared: string): Compute {
  return (COMPUTE_VALUES as readonly string[]).includes(declared) ? (declared as Compute) : DEFAULT_TARGET.compute;
}

/**
 * Who else reaches the server: the default host answers other machines too, so say so and
 * how to keep it local. In a container (Docker and Podman mark theirs with these files) the
 * published port decides that, and 127.0.0.1 would shut everyone out.
 */
function reachNote(host: string): string {
  if (host !== '0.0.0.0' && host !== '::') return '';
  const inContainer = existsSync('/.dockerenv') || existsSync('/run/.containerenv');
  return inContainer ? '; in a container, reached through its published port' : '; open to the network, --host 127.0.0.1 keeps it to this machine';
}
