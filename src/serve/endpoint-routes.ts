import type { HttpApp } from './http/http-app.js';
import type { HttpReply } from './http/http-reply.js';
import type { HttpRequest } from './http/http-request.js';
import { HTTP_METHODS } from '../http-methods.js';
import type { EndpointReport } from '../worker/protocol.js';
import { SvcError } from '../svc-error.js';
import type { CallOptions, CallOutcome } from '../worker/worker-process.js';
import type { GatewayOptions } from './gateway-options.js';
import { cancelledWhenClientLeaves } from './client-disconnect.js';
import { HttpError } from './http-error.js';
import { compileEndpointInputs } from './endpoint-inputs.js';
import type { Arguments } from './input-validation.js';
import type { JobRoutesOptions } from './jobs/job-routes.js';
import { jobArguments } from './jobs/job-arguments.js';
import type { JobArguments } from './jobs/job-journal.js';
import type { Job } from './jobs/job.js';
import { baseUrlOf, envelopeOf, sendEnvelope, streamJob, SVC_FRAMING } from './jobs/job-stream.js';
import { asksForWebhook, readWebhookRequest, type WebhookRequest } from './webhooks/webhook-request.js';
import type { WebhookSecrets } from './webhooks/webhook-secrets.js';
import { acceptsEventStream } from './accept-header.js';
import { readPreferences } from './prefer-header.js';
import { readArguments } from './request-arguments.js';
import { removeStagedFiles } from '../worker/transit-files.js';
import { planRouteAliases, withoutTrailingSlash } from './route-aliases.js';
import { sendOutcome, submitFailure } from './call-outcome-http.js';
import { generatorResult } from './generator-result.js';
import { takeNumberLists } from './number-lists.js';
import { releaseLongStrings, releaseOutcomeWhenSent } from './released-buffers.js';
import { refusalBeforeCall } from './result-answer.js';
import { CallDeadline, callTimedOut, timeoutMsFor } from './call-timeout.js';

type EndpointRoutesOptions = GatewayOptions & { jobRoutes: JobRoutesOptions };

/**
 * One route per endpoint, at its own path and under /v1, and at the path as the apipod
 * package spells it (route-aliases.ts) where that differs. Dedicated compute answers with
 * the function's return value; serverless compute (but for an endpoint marked
 * `use_queue=False`, which answers as dedicated does) or `Prefer: respond-async` with a job
 * envelope at once, or when the job ends within `Prefer: wait=N`; `Accept: text/event-stream`
 * with the job's server-sent events (a generator's chunks as they come). A result that is one
 * media file comes as its bytes when `Accept` asks for its type (result-answer.ts).
 */
export function registerEndpointRoutes(app: HttpApp, options: EndpointRoutesOptions): void {
  const endpointsByRoute = new Map<string, { endpoint: EndpointReport; isCopy: boolean }>();
  // Planned before any endpoint route exists: svc's own routes (and chat's) are the ones taken.
  const aliases = planRouteAliases(options.runner.endpoints, (method, url) =>
    [url, `${url}/`].some((candidate) => app.hasRoute(method, candidate)),
  );
  for (const { endpoint, alias, reason } of aliases.refused) {
    options.log?.warn(`${endpoint.methods.join(',')} ${endpoint.path} is not also served at ${alias}, where the apipod package serves it: ${reason}`);
  }
  for (const endpoint of options.runner.endpoints) {
    if (endpoint.is_chat) continue; // served by the chat plugin (src/serve/chat/)
    const inputs = compileEndpointInputs(endpoint);
    // Serverless compute answers with a job, but for an endpoint the service marked use_queue=False.
    const submitsJobs = options.compute === 'serverless' && !endpoint.direct;
    const handler = async (request: HttpRequest, reply: HttpReply) => {
      const preferences = readPreferences(request.headers.prefer, options.jobs.maxWaitSeconds);
      const eventStream = acceptsEventStream(request.headers.accept);
      const answersWithJob = eventStream || submitsJobs || preferences.respondAsync;
      // Checked before the arguments are read: a refused webhook stages no upload. Awaited
      // only when asked for: most calls name none, and an await costs each a turn.
      const webhook = asksForWebhook(request.headers) ? await readJobWebhook(request, options, answersWithJob) : null;
      // Before the arguments are read: a client that leaves while its media URLs download stops them.
      const cancel = cancelledWhenClientLeaves(reply);
      const staging = { dir: options.fileDir, mediaUrls: options.mediaUrls, cancel };
      const { arguments: args, stagedFiles, argumentsJson, longStrings } = await readArguments(request, inputs, staging, { forJob: answersWithJob });
      if (cancel.aborted) {
        // Nobody would read its answer or learn its job's id.
        await removeStagedFiles(stagedFiles);
        throw new HttpError(503, 'unavailable', 'cancelled', 'the client left before the call started');
      }
      if (eventStream) {
        // The call as server-sent events: a generator's chunks as it yields them, whatever the compute.
        const job = await submitJob(request, options, endpoint, jobArguments(args, longStrings), webhook, () => void removeStagedFiles(stagedFiles));
        streamJob(request, reply, job, options.jobRoutes, { cancelWhenClientLeaves: true, framing: SVC_FRAMING });
        return;
      }
      if (submitsJobs || preferences.respondAsync) {
        const waitMs = preferences.waitSeconds === null ? null : preferences.waitSeconds * 1000;
        const job = await submitJob(request, options, endpoint, jobArguments(args, longStrings), webhook, () => void removeStagedFiles(stagedFiles), waitMs);
        if (preferences.waitSeconds !== null) {
          reply.header('preference-applied', `wait=${preferences.waitSeconds}`);
        } else if (preferences.respondAsync) {
          reply.header('preference-applied', 'respond-async');
        }
        // The hosted API answers a submit with 200; a dedicated server asked to go async says 202.
        // Either way the job's URL is a header too, as on an event stream.
        reply.header('content-location', `/v1/jobs/${job.id}`);
        return sendEnvelope(reply.code(submitsJobs ? 200 : 202), envelopeOf(request, job, options.jobRoutes), options.sendTimeoutMs);
      }
      const subject = `the result of ${endpoint.path}`;
      const refusal = refusalBeforeCall(request.headers.accept, endpoint.output_schema, subject);
      if (refusal !== null) {
        await removeStagedFiles(stagedFiles);
        throw refusal;
      }
      const deadline = new CallDeadline(cancel, timeoutMsFor(endpoint.path, options.jobs));
      try {
        const { arguments: callArguments, numberLists } = takeNumberLists(args, inputs.numberListParameters);
        const sentAs = numberLists.length > 0 ? { numberLists } : { argumentsJson };
        const outcome = await submitCall(options, endpoint, callArguments, { signal: cancel, onStart: deadline.start, longStrings, ...sentAs });
        if (deadline.timedOut && outcome.kind === 'cancelled') throw callTimedOut(endpoint.path, options.jobs);
        const answer: CallOutcome = endpoint.is_generator && outcome.kind === 'result' ? { kind: 'result', value: generatorResult(outcome.value) } : outcome;
        releaseOutcomeWhenSent(reply.raw, answer);
        return sendOutcome(reply, answer, options, { accept: request.headers.accept, subject });
      } finally {
        releaseLongStrings(longStrings);
        deadline.clear();
        if (stagedFiles.length > 0) await removeStagedFiles(stagedFiles);
      }
    };
    const methods = checkedMethods(endpoint);
    const config = { endpoint: endpoint.path, longStringParameters: inputs.longStringParameters, base64Parameters: inputs.base64Parameters };
    const route = (url: string) => app.route({ method: methods, url, handler, config });
    for (const [url, isCopy] of [[endpoint.path, false], [`/v1${endpoint.path}`, true]] as const) {
      refuseTakenRoute(app, endpointsByRoute, endpoint, { url, isCopy });
      route(url);
    }
    // Also where clients of the apipod package look for it (/make_fries at /make-fries).
    for (const { alias } of aliases.aliases.filter((planned) => planned.endpoint === endpoint)) {
      [alias, `/v1${alias}`].forEach(route);
      options.log?.info(`${endpoint.methods.join(',')} ${endpoint.path} is also served at ${alias}, as the apipod package spells it`);
    }
  }

}

/**
 * Each method once, and one the router serves: the toolkit refuses others on import, so a
 * worker that reports one is not svc's, and gets an error naming the endpoint.
 */
function checkedMethods(endpoint: EndpointReport): string[] {
  const unknown = endpoint.methods.find((method) => !(HTTP_METHODS as readonly string[]).includes(method));
  if (unknown !== undefined) {
    throw new SvcError(
      'invalid-project',
      `endpoint ${endpoint.function} (${endpoint.path}): ${unknown} is not an HTTP method svc serves (${HTTP_METHODS.join(', ')})`,
    );
  }
  return [...new Set(endpoint.methods)] as string[];
}

/**
 * A route can be had once, and routes ignore a trailing slash. svc's own (health, docs, the
 * job API) are registered first, and another endpoint's may come before this one; either
 * would make the route table throw an internal error, so name the endpoint and what it collides with.
 */
function refuseTakenRoute(
  app: HttpApp,
  endpointsByRoute: Map<string, { endpoint: EndpointReport; isCopy: boolean }>,
  endpoint: EndpointReport,
  { url, isCopy }: { url: string; isCopy: boolean },
): void {
  const bare = withoutTrailingSlash(url);
  const described = `endpoint ${endpoint.function} (${endpoint.methods.join(', ')} ${endpoint.path})`;
  for (const method of endpoint.methods) {
    const taken = endpointsByRoute.get(`${method} ${bare}`);
    if (taken !== undefined) {
      const why = taken.isCopy || isCopy ? 'svc serves every endpoint under /v1 too' : 'a trailing slash makes no difference';
      throw new SvcError('invalid-project', `${described}: endpoint ${taken.endpoint.function} (${taken.endpoint.path}) answers ${method} ${bare} already; ${why}`);
    }
    if ([url, bare, `${bare}/`].some((candidate) => app.hasRoute(method, candidate))) {
      throw new SvcError('invalid-project', `${described}: svc serves ${method} ${bare} itself; choose another path`);
    }
  }
  for (const method of endpoint.methods) endpointsByRoute.set(`${method} ${bare}`, { endpoint, isCopy });
}

/**
 * Creates the job and queues its call, kept before it is answered (after waiting up to
 * `waitMs` for its end, when the client asked to wait); a key that holds its share
 * of the job store is a 429, a full queue, ended jobs waiting to be read that fill what the
 * server keeps or a job store out of reach, a 503; either leaves no job behind.
 */
async function submitJob(
  request: HttpRequest,
  options: EndpointRoutesOptions,
  endpoint: EndpointReport,
  args: JobArguments,
  webhook: WebhookRequest | null,
  onEnd: () => void,
  waitMs: number | null = null,
) {
  const webhooks = webhook === null ? null : (options.webhooks ?? null);
  const subscription = webhook === null || webhooks === null ? {} : {
    // Before the job can start: its first event must find the subscription.
    created: (job: Job) => webhooks.dispatcher.subscribe(job, { ...webhook, baseUrl: baseUrlOf(request, options.jobRoutes) }),
    discarded: (job: Job) => webhooks.dispatcher.unsubscribe(job.id),
  };
  const submission = { endpoint: endpoint.path, owner: request.apiKey?.id ?? null, streams: endpoint.is_generator, args, keyCount: options.keys.count, ...subscription };
  const { jobs } = options.jobRoutes;
  let job: Job;
  try {
    // A webhook may tell of the job before it is answered: such a job is written at once.
    job = await (waitMs === null || webhooks !== null ? jobs.submit(submission, onEnd) : jobs.submitAndWait(submission, onEnd, waitMs));
  } catch (error) {
    throw submitFailure(error, endpoint, options);
  }
  if (webhooks === null) return job;
  try {
    await webhooks.dispatcher.persisted();
  } catch (error) {
    // Its webhook could not be written (a full disk): the job is not run without it.
    await jobs.cancel(job);
    throw error;
  }
  return waitMs === null ? job : jobs.waitUntilEnded(job, waitMs);
}

/**
 * The webhook a submit that asks for one (asksForWebhook) names. Only a job has one: a call answered with its result
 * has nothing to notify. A key with no webhook secret yet is told how to make one.
 */
async function readJobWebhook(request: HttpRequest, options: EndpointRoutesOptions, makesJob: boolean): Promise<WebhookRequest | null> {
  const webhooks = options.webhooks ?? null;
  if (webhooks === null) throw new HttpError(400, 'invalid_request', 'webhooks_unavailable', 'the Webhook header: this server sends no webhooks (a provider worker: the provider notifies; jobs kept in Redis, --job-store redis://: not yet)');
  if (!makesJob) {
    throw new HttpError(400, 'invalid_request', 'webhook_needs_job', 'the Webhook header notifies of a job, and this call answers with its result: add "Prefer: respond-async" to make it a job');
  }
  const webhook = await readWebhookRequest(request.headers, webhooks.allowPrivate);
  if (webhook !== null && signingSecretsOf(webhooks.secrets, request.apiKey?.id ?? null).length === 0) {
    throw new HttpError(409, 'invalid_request', 'webhook_secret_missing', 'the Webhook header: this server has no webhook secret for this API key yet; `svc webhook-secret` in the project makes one and shows it');
  }
  return webhook;
}

/** The owner's secrets; a secrets file that went bad while serving is the server's fault, said plainly (503). */
function signingSecretsOf(secrets: WebhookSecrets, owner: string | null): string[] {
  try {
    return secrets.signingSecrets(owner);
  } catch (error) {
    throw new HttpError(503, 'unavailable', 'webhook_secrets_unreadable', `the Webhook header: this server cannot read its webhook secrets (${(error as Error).message}); its operator can fix or rewrite the file`);
  }
}

async function submitCall(
  options: GatewayOptions,
  endpoint: EndpointReport,
  args: Arguments,
  callOptions: Pick<CallOptions, 'signal' | 'onStart' | 'argumentsJson' | 'longStrings' | 'numberLists'>,
): Promise<CallOutcome> {
  try {
    return await options.runner.submit(endpoint.path, args, callOptions);
  } catch (error) {
    throw submitFailure(error, endpoint, options);
  }
}
