import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCompatServices, REGISTRY_SOURCES, type CompatService, type Compute } from './compat-requests.js';
import { differenceOf, missingEnvelopeFields } from './compare-answers.js';
import { startSvcServer, startUpstream, type CompatServer } from './compat-servers.js';
import { KNOWN_FAILURES, type KnownFailure } from './known-failures.js';
import { toolkitPython } from '../support/toolkit-venv.js';

/** The interpreter of the virtualenv .ci/setup makes: apipod 1.0.33 from PyPI, with its dependencies. */
const PYTHON = toolkitPython();
/**
 * The services' own files, which are other projects' code and not in this repository
 * (README.md here): those PyPI serves, which .ci/setup extracts, and those a developer
 * gathered under SVC_COMPAT_SOURCES.
 */
const SOURCES = [REGISTRY_SOURCES, ...(process.env.SVC_COMPAT_SOURCES ? [process.env.SVC_COMPAT_SOURCES] : [])];
/** `fromRegistry`: the services scripts/ci/compat-sources.sh extracts, which run wherever .ci/setup has run, CI included. */
const { services, missing, fromRegistry } = readCompatServices(SOURCES);

function knownFor(failure: KnownFailure | undefined, compute: Compute): KnownFailure | undefined {
  return failure && (failure.computes ?? ['dedicated', 'serverless']).includes(compute) ? failure : undefined;
}

function expectKnown(failure: KnownFailure, what: string, actual: string | undefined): void {
  if (actual === undefined) throw new Error(`${what} now works like the apipod package: remove its entry from test/compat/known-failures.ts (${failure.reason})`);
  expect(actual, failure.reason).toMatch(failure.says);
}

function describeService(service: CompatService, compute: Compute): void {
  const known = KNOWN_FAILURES[service.name] ?? {};
  const knownStart = knownFor(known.start, compute);
  describe(`${service.name} under --compute ${compute}`, () => {
    let upstream: CompatServer | undefined;
    let svc: CompatServer | undefined;
    let svcFailure: string | undefined;
    beforeAll(async () => {
      const [upstreamStart, svcStart] = await Promise.allSettled([
        startUpstream(service, compute, PYTHON),
        startSvcServer(service, compute, PYTHON),
      ]);
      if (svcStart.status === 'fulfilled') svc = svcStart.value;
      else svcFailure = String(svcStart.reason?.message ?? svcStart.reason);
      if (upstreamStart.status === 'rejected') throw upstreamStart.reason;
      upstream = upstreamStart.value;
    }, 130_000);
    afterAll(async () => {
      await Promise.all([upstream?.stop(), svc?.stop()]);
    }, 30_000);

    it('starts under svc as under apipod 1.0.33', () => {
      expect(upstream).toBeDefined();
      if (knownStart) expectKnown(knownStart, `svc start of ${service.name}`, svcFailure);
      else expect(svcFailure).toBeUndefined();
    });
    if (knownStart) return;

    if (compute === 'serverless') {
      const knownEnvelope = knownFor(known.envelope, compute);
      it("answers a job's submit with an envelope that has every field the apipod package's has", async () => {
        if (!svc || !upstream) throw new Error(`svc did not start the service: ${svcFailure}`);
        for (const request of service.requests) {
          const [expected, actual] = await Promise.all([upstream.submit(request), svc.submit(request)]);
          if (!isJob(expected.body) || !isJob(actual.body)) continue;
          const missing = missingEnvelopeFields(expected.body, actual.body);
          const difference = missing.length === 0 ? undefined : `svc's envelope lacks ${missing.join(', ')}`;
          if (knownEnvelope) expectKnown(knownEnvelope, `${service.name}'s job envelope`, difference);
          else expect(difference).toBeUndefined();
          return;
        }
        throw new Error('no request of the table made a job on both servers');
      }, 70_000);
    }

    for (const request of service.requests) {
      const knownRequest = knownFor(known.requests?.[request.name], compute);
      it(`answers ${request.name} (${request.method ?? 'POST'} ${request.path}) as apipod 1.0.33 does`, async () => {
        if (!svc || !upstream) throw new Error(`svc did not start the service: ${svcFailure}`);
        const [expected, actual] = await Promise.all([upstream.outcome(request), svc.outcome(request)]);
        const difference = differenceOf(expected, actual, request);
        if (knownRequest) expectKnown(knownRequest, `${service.name} ${request.name}`, difference);
        else expect(difference).toBeUndefined();
      }, 70_000);
    }
  });
}

function isJob(body: unknown): boolean {
  return typeof body === 'object' && body !== null && 'job_id' in body;
}

describe('real apipod services answer alike under apipod 1.0.33 and svc start', () => {
  it('has the files of the services a registry serves, and says which it cannot run', () => {
    expect(missing.filter((name) => fromRegistry.includes(name)), 'run scripts/ci/compat-sources.sh (.ci/setup does)').toEqual([]);
    if (missing.length > 0) console.log(`test/compat: without SVC_COMPAT_SOURCES, not run: ${missing.join(', ')}`);
  });
  for (const service of services) for (const compute of service.computes) describeService(service, compute);
});
