import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, relative } from 'node:path';
import { getHeapStatistics } from 'node:v8';
import { InvalidArgumentError, Option, type Command } from 'commander';
import packageJson from '../../package.json' with { type: 'json' };
import {
  COMPUTE_VALUES,
  ORCHESTRATOR_VALUES,
  PROVIDER_VALUES,
  SERVED_PROVIDERS,
  type Compute,
  type Orchestrator,
  type ServedProvider,
} from '../deployment-target.js';
import { corsOrigin, endpointSeconds, fileName, heapShare, imageReference, integerBetween, oneOf, publicUrl, seconds, secondsList } from './option-parsers.js';
import { runCommand, type CommonOptions } from './run-command.js';
import { addMissing, readDotenvFile } from './dotenv-file.js';
import { SvcError } from '../svc-error.js';
import { locateProject } from '../project-location.js';
import { findPythonInterpreter } from '../worker/python-interpreter.js';
import { createServeLog } from './serve-log.js';
import type { ServeLog } from '../serve-log.js';
import { containerServeArgs, type ServeSettings } from './container-serve-args.js';
import { JOB_STORE_ENV, parseJobStoreLocation, redacted, type JobStoreLocation } from '../serve/jobs/job-store-location.js';

interface StartOptions extends CommonOptions, ServeSettings {
  entrypoint?: string;
  dotenv?: string;
  host: string;
  port: number;
  compute?: Compute;
  provider?: ServedProvider;
  testInput?: string;
  orchestrator: Orchestrator;
  image?: string;
  apiKey?: string;
  apiKeys?: string;
  reload?: boolean;
  jobStore?: JobStoreLocation;
  webhookAllowPrivate?: boolean;
  webhookRetryDelays: number[];
  webhookTimeout: number;
  webhookThrottle: number;
  webhookSecrets?: string;
}

/** Twelve retries doubling from half a second, as Cog's twelve from 100 ms: about 34 minutes in all. */
const DEFAULT_RETRY_DELAYS = [0.5, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];

/** Kept results live in Node's heap, so their limit is a share of it. */
const HEAP_MEBIBYTES = Math.floor(getHeapStatistics().heap_size_limit / 2 ** 20);

export function registerStartCommand(program: Command): void {
  program
    .command('start')
    .summary('serve the service over HTTP (gateway + Python workers)')
    .description(
      'Serve service.py over HTTP: one route per endpoint (also under /v1), /docs, /openapi.json ' +
        'and /health, with the functions running in Python worker processes; or, with --provider runpod, ' +
        "take the provider's jobs. Stops gracefully on SIGTERM or Ctrl-C: in-flight calls finish within " +
        'the grace period, then the lifespan shuts down.',
    )
    .argument('[target]', 'project directory, or the service file itself', '.')
    .option('--entrypoint <file>', 'service file, relative to the project directory (default: service.py)', fileName)
    .option('--host <address>', 'address to listen on', '0.0.0.0')
    .option('--port <port>', 'port to listen on', integerBetween(0, 65535), 8000)
    .option('--workers <n>', 'worker processes, each running one call at a time', integerBetween(1, 256), 1)
    .option('--reload', "restart the workers when the project's Python files or requirements change (local orchestrator)")
    .option('--python <path>', 'Python interpreter for the workers (default: $VIRTUAL_ENV, ./.venv, python3)')
    .option('--max-body-size <MiB>', 'largest request body accepted (413 above); also the most a call\'s media URLs may download', integerBetween(1, 1 << 20), 100)
    .option('--media-url-timeout <seconds>', 'longest the server takes to download a media URL a client gives (then 422)', seconds, 60)
    .option('--no-media-urls', 'refuse http(s) URLs for media parameters rather than download them (the server would fetch any URL a client names)')
    .option('--queue-size <n>', 'calls waiting per endpoint before 503 with Retry-After', integerBetween(0, 1_000_000), 100)
    .option('--send-timeout <seconds>', 'longest a client may take none of a large answer before it is disconnected', seconds, 60)
    .option('--grace-period <seconds>', 'time in-flight calls get to finish on shutdown', seconds, 30)
    .option('--cancel-grace <seconds>', 'time a cancelled call gets to stop before its worker is killed', seconds, 5)
    .addOption(
      new Option('--compute <mode>', 'dedicated (result in the response) or serverless (job envelopes); default: APIPod(compute=...)')
        .env('APIPOD_COMPUTE')
        .argParser(oneOf(COMPUTE_VALUES, COMPUTE_VALUES)),
    )
    .addOption(
      new Option('--provider <name>', "where jobs come from: localhost (HTTP and the built-in queue) or runpod (the provider's library); default: APIPod(provider=...)")
        .env('APIPOD_PROVIDER')
        .argParser(oneOf(PROVIDER_VALUES, SERVED_PROVIDERS)),
    )
    .option('--test-server', "with --provider runpod: serve the provider library's local test API (/run, /runsync, /status) on --port")
    .option('--test-input <file>', 'with --provider runpod: run the job in this JSON file ({"input": {"path": ...}}), print its result, exit 0 or 1')
    .addOption(
      new Option('--orchestrator <name>', 'local (processes on this machine) or docker (the image from svc build)')
        .argParser(oneOf(ORCHESTRATOR_VALUES, ORCHESTRATOR_VALUES))
        .default('local'),
    )
    .option('--image <ref>', 'with --orchestrator docker: the image to run (default: the one svc build built last)', imageReference)
    // Not --env-file: Node 20 takes that flag for itself wherever it stands on the command line.
    .option('--dotenv <file>', "the service's environment variables, in .env format (those your shell sets win); never baked into an image")
    .option('--api-key <key>', 'require "Authorization: Bearer <key>" (default: $SERVICE_API_KEY)')
    .option('--api-keys <file>', 'JSON file of keys and the endpoints each may call')
    .option('--job-timeout <seconds>', 'longest a call or job may run once started (then 504, or TIMEOUT for a job)', seconds, 3600)
    .option('--endpoint-timeout <path=seconds>', 'time-out for one endpoint, overriding --job-timeout (repeatable)', endpointSeconds)
    .option('--job-ttl <seconds>', 'how long an ended job stays readable', seconds, 1800)
    .option('--max-jobs <n>', 'most ended jobs kept readable; past it, those already read go first, then new jobs get 503 (each API key gets an equal share)', integerBetween(1, 10_000_000), 10_000)
    .addOption(
      // The default named once, in words and in MiB: commander would add its own (default: N) after the help text's.
      new Option('--max-job-memory <MiB>', "most memory the ended jobs' results may hold, like --max-jobs")
        .argParser(heapShare(HEAP_MEBIBYTES))
        .default(Math.floor(HEAP_MEBIBYTES / 4), `a quarter of Node's heap, ${Math.floor(HEAP_MEBIBYTES / 4)}`),
    )
    .addOption(
      new Option('--job-store <url>', 'where jobs live: memory, sqlite:PATH to survive a crash, or redis://HOST:PORT[/DB] to share one queue among replicas (default: sqlite in the state directory for serverless compute; docs/jobs.md, docs/scaling.md)')
        .env(JOB_STORE_ENV)
        .argParser(jobStore),
    )
    .option('--webhook-allow-private', 'let job webhooks reach private, loopback and link-local addresses (refused by default: docs/webhooks.md)')
    .addOption(
      new Option('--webhook-retry-delays <seconds,...>', 'wait before each retry of a webhook delivery (±20%); past the last, the event is given up on')
        .argParser(secondsList)
        .default(DEFAULT_RETRY_DELAYS, DEFAULT_RETRY_DELAYS.join(',')),
    )
    .option('--webhook-timeout <seconds>', 'longest one webhook delivery attempt may take', seconds, 10)
    .option('--webhook-throttle <seconds>', "least time between two of a job's started, progress and streaming webhook events", seconds, 0.5)
    .option('--webhook-secrets <file>', 'the webhook secrets file svc webhook-secret writes (default: in the state directory, beside the job file)')
    .option('--max-wait <seconds>', 'longest "Prefer: wait=N" honoured', seconds, 60)
    .option('--public-url <url>', 'origin used in job URLs (default: the request\'s Host)', publicUrl)
    .addOption(
      new Option('--cors-origin <origin>', 'let web pages from this origin call the service, * for any (repeatable)').argParser(corsOrigin).default([], 'none'),
    )
    .action(async (target: string, _options: StartOptions, command: Command) => {
      const options = command.optsWithGlobals<StartOptions>();
      await runCommand(options, async (output) => {
        const dotenv = options.dotenv === undefined ? { variables: {}, ignoredLines: [] } : readDotenvFile(options.dotenv);
        for (const line of dotenv.ignoredLines) output.warn(`${options.dotenv}:${line}: not NAME=value; ignored`);
        const fromEnvFile = dotenv.variables;
        addMissing(process.env, fromEnvFile);
        const log = createServeLog(output.mode);
        const unread = options.dotenv === undefined ? unreadDotenv(target, options.entrypoint) : null;
        if (unread !== null) log.info(`${unread} is not read: svc start --dotenv ${unread} gives its variables to the service`);
        if (options.orchestrator === 'docker') {
          if (options.jobStore?.kind === 'sqlite') {
            throw new SvcError('usage', '--job-store sqlite: names a file on this machine: with --orchestrator docker, give the container a store it reaches (redis://HOST:PORT), or none (docs/jobs.md)');
          }
          if (options.webhookSecrets !== undefined) {
            throw new SvcError('usage', '--webhook-secrets names a file on this machine: with --orchestrator docker, the container keeps its own (docs/webhooks.md)');
          }
          if (options.reload) {
            throw new SvcError('usage', '--reload restarts local workers and cannot change a built image: leave out --orchestrator docker, or svc build --image after each change');
          }
          if (options.testInput) {
            throw new SvcError('usage', "--test-input needs --orchestrator local; with --orchestrator docker, a runpod image serves the provider library's test API (/run, /runsync) on --port");
          }
          // Loaded on use, like the local server below: dockerode is not in the bundle.
          const { runInDocker } = await import('../orchestrators/docker-run.js');
          const extraArgs = containerServeArgs(options, (option) => command.getOptionValueSource(option) === 'cli');
          await runInDocker({
            target,
            entrypoint: options.entrypoint,
            image: options.image,
            host: options.host,
            port: options.port,
            compute: options.compute,
            provider: options.provider,
            extraArgs,
            env: await containerSecrets(options, target, log),
            passEnv: [...Object.keys(fromEnvFile), ...(options.jobStore === undefined ? [] : [JOB_STORE_ENV])],
            stopTimeoutSeconds: options.gracePeriod + 5,
            log,
          }).finally(log.flush); // request lines held back go before a last error line
          return;
        }
        if (options.image !== undefined) throw new SvcError('usage', '--image chooses the image --orchestrator docker runs: add --orchestrator docker');
        // Started while the server's code loads: Python takes longer to import the service than
        // Node the gateway. Failures (no interpreter, too old) are reported where serveLocally
        // awaits them, in their turn. --reload starts its workers itself, and a runpod worker's
        // library is checked before any model loads: those ask the interpreter first.
        const project = locateProject(target, options.entrypoint);
        // Checked before any worker starts: a usage error must not leave one running.
        const checkedStore = checkedJobStore(options.jobStore);
        const startsEarly = !options.reload && options.provider !== 'runpod' && !options.testServer && options.testInput === undefined;
        const startedWorkers = startsEarly
          ? (await import('../orchestrators/local-workers.js')).startLocalWorkers({
              workers: options.workers,
              explicitPython: options.python,
              serviceFile: join(project.root, project.entrypoint),
              projectDir: project.root,
              queueSize: options.queueSize,
              cancelGraceMs: options.cancelGrace * 1000,
              log,
            })
          : undefined;
        const pythonLookup = startsEarly ? undefined : findPythonInterpreter({ explicit: options.python, projectDir: project.root, env: process.env });
        pythonLookup?.catch(() => {});
        // Loaded on use: the server's dependencies would slow every other command's start.
        const { serveLocally } = await import('../orchestrators/local-run.js');
        await serveLocally({
          target,
          entrypoint: options.entrypoint,
          host: options.host,
          port: options.port,
          workers: options.workers,
          python: options.python,
          pythonLookup,
          startedWorkers,
          maxBodyBytes: options.maxBodySize * 1024 * 1024,
          mediaUrlTimeoutMs: options.mediaUrls ? options.mediaUrlTimeout * 1000 : null,
          queueSize: options.queueSize,
          sendTimeoutMs: options.sendTimeout * 1000,
          gracePeriodMs: options.gracePeriod * 1000,
          cancelGraceMs: options.cancelGrace * 1000,
          compute: options.compute,
          provider: options.provider,
          runpodTrial: { testServer: options.testServer === true, testInputFile: options.testInput },
          corsOrigins: options.corsOrigin,
          apiKey: options.apiKey ?? process.env.SERVICE_API_KEY,
          apiKeysFile: options.apiKeys,
          jobStore: checkedStore,
          webhooks: {
            settings: {
              allowPrivate: options.webhookAllowPrivate === true,
              retryDelaysMs: options.webhookRetryDelays.map((delay) => delay * 1000),
              timeoutMs: options.webhookTimeout * 1000,
              throttleMs: options.webhookThrottle * 1000,
            },
            secretsFile: options.webhookSecrets,
          },
          jobs: {
            ttlMs: options.jobTtl * 1000,
            maxRetained: options.maxJobs,
            maxRetainedBytes: options.maxJobMemory * 2 ** 20,
            defaultTimeoutMs: options.jobTimeout * 1000,
            timeoutsMs: new Map([...(options.endpointTimeout ?? new Map<string, number>())].map(([path, limit]) => [path, limit * 1000])),
            maxWaitSeconds: options.maxWait,
            publicUrl: options.publicUrl ?? null,
          },
          reload: options.reload === true,
          debug: options.debug === true,
          version: packageJson.version,
          log,
        }).finally(log.flush); // request lines held back go before a last error line
      });
    });
}

function jobStore(text: string): JobStoreLocation {
  // Commander's message repeats the value: one holding a Redis password is checked in the
  // command's action instead (checkedJobStore), whose message shows it as ***.
  if (redacted(text) !== text) return { kind: 'redis', url: text };
  try {
    return parseJobStoreLocation(text, process.cwd());
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
}

function checkedJobStore(location: JobStoreLocation | undefined): JobStoreLocation | undefined {
  if (location?.kind !== 'redis') return location;
  try {
    return parseJobStoreLocation(location.url, process.cwd());
  } catch (error) {
    throw new SvcError('usage', `--job-store: ${(error as Error).message}`);
  }
}

/** The project's .env, as a path to give --dotenv, when it has one: svc reads none unless told, as Docker does. */
function unreadDotenv(target: string, entrypoint: string | undefined): string | null {
  const file = join(locateProject(target, entrypoint).root, '.env');
  return existsSync(file) ? relative(process.cwd(), file) : null;
}

/**
 * The secrets the container gets through its environment, never its command line: the
 * caller's, then `--api-key` and the `--api-keys` file's text, checked here as the local
 * server checks them, so that a bad key or file is named before any container starts.
 */
async function containerSecrets(options: StartOptions, target: string, log: ServeLog): Promise<NodeJS.ProcessEnv> {
  // Loaded on use, like the servers: every other command would pay for node:crypto.
  const { API_KEYS_ENV, ApiKeys, readKeysFile } = await import('../serve/api-keys.js');
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (options.apiKey !== undefined) env.SERVICE_API_KEY = options.apiKey;
  ApiKeys.from({ key: env.SERVICE_API_KEY, keysFile: options.apiKeys });
  if (options.apiKeys !== undefined) env[API_KEYS_ENV] = readKeysFile(options.apiKeys);
  // The project's webhook secrets, as svc webhook-secret made them here: the container has no other way to them.
  const { projectStateDirectory } = await import('../serve/jobs/job-store-location.js');
  const { WEBHOOK_SECRETS_ENV } = await import('../serve/webhooks/webhook-secrets.js');
  const secretsFile = join(projectStateDirectory(locateProject(target, options.entrypoint).root, process.env, homedir()), 'webhook-secrets.json');
  if (env[WEBHOOK_SECRETS_ENV] === undefined && existsSync(secretsFile)) env[WEBHOOK_SECRETS_ENV] = readFileSync(secretsFile, 'utf8');
  // In the environment, not the command: a Redis URL may hold a password, which `docker inspect` would show in the command.
  const jobStore = checkedJobStore(options.jobStore);
  if (jobStore !== undefined) {
    env[JOB_STORE_ENV] = jobStore.kind === 'redis' ? jobStore.url : 'memory';
    if (jobStore.kind === 'redis' && isLoopbackName(new URL(jobStore.url).hostname)) {
      log.warn(`--job-store ${redacted(jobStore.url)}: inside the container, that address is the container itself; give an address the container reaches (the host's on the Docker bridge, e.g. 172.17.0.1)`);
    }
  }
  return env;
}

/** A host name that means this machine: inside a container, the container. */
function isLoopbackName(host: string): boolean {
  return host === 'localhost' || host === '[::1]' || /^127\./.test(host);
}
