import type { Compute } from './compat-requests.js';

/**
 * Who has to act for the difference to go: svc (a bug of its own), the work on issue 21's
 * import surface or job envelope, or nobody, where the apipod package itself refuses what a
 * client sends and svc serves it (svc a superset).
 */
export type Owner = 'svc' | 'svc, as its docs say' | 'import-surface (issue 21)' | 'job-envelope/openapi (issue 21)' | 'apipod refuses it';

/** A difference from the apipod package that the suite expects today, and why. */
export interface KnownFailure {
  owner: Owner;
  reason: string;
  /** What the failure says today: the suite checks it still fails this way. */
  says: RegExp;
  /** The computes it fails in; both when left out. */
  computes?: Compute[];
}

const UNKNOWN_FIELD: KnownFailure = {
  owner: 'svc, as its docs say',
  reason:
    "svc answers a form field that is no parameter with a 422 (`style: is not a parameter of this endpoint`), in every encoding, so a misspelt name never runs the function with a default; the apipod package (FastAPI) ignores it in forms",
  says: /is not a parameter of this endpoint/,
};

const GIVEN_TWICE: KnownFailure = {
  owner: 'svc, as its docs say',
  reason: 'a parameter given twice is a 422 in svc (docs/start.md); the apipod package takes the last value',
  says: /"status":422.*name: must be a string/,
};

const TEXT_AS_FILE: KnownFailure = {
  owner: 'svc',
  reason:
    "text that is no file, sent for a file parameter of a job: svc reads files in the worker, after it accepted the job, so the job fails naming the argument, where the apipod package refuses the submit with a 422 (in dedicated compute both answer 422)",
  says: /svc \{"kind":"job","status":"failed".*argument 'audio': not valid base64/,
  computes: ['serverless'],
};

const GET_READS_BODY: KnownFailure = {
  owner: 'apipod refuses it',
  reason:
    "apipod 1.0.33 reads a GET endpoint's parameters from a form body and answers a query string with 422 (body.text missing); svc reads the query string, as its docs say, and answers",
  says: /"status":422,"body":\{"detail":\[\{"type":"missing","loc":\["body","text"\]/,
};

const APIPOD_LACKS_USAGE: KnownFailure = {
  owner: 'apipod refuses it',
  reason:
    "the service builds its answer with apipod.common.schemas.Usage, which apipod 1.0.33 no longer has (a failed job, or a 500 where the job runs in the request); svc's schemas module gives socaity-schemas' Usage, and svc answers",
  says: /apipod (answered|\{)[^]*(has no attribute 'Usage'|Internal server error)/,
};

const CHAT_AS_SVC_ANSWERS_IT: KnownFailure = {
  owner: 'svc, as its docs say',
  reason:
    "a chat endpoint's completion: svc completes it (`id`, `model`, `usage`, docs/chat.md), and answers it in either compute, where the apipod package makes a job of it under serverless; the message itself is the same",
  says: /(body: apipod \{"choices".*svc \{"choices".*"id":"chatcmpl-|apipod answered \{"kind":"job".*svc \{"kind":"response","status":200)/,
};

const METHODS_AS_TEXT: KnownFailure = {
  owner: 'apipod refuses it',
  reason:
    "the endpoint is declared with methods=\"POST\", a string where a list is expected: apipod 1.0.33 hands it to FastAPI, which reads it letter by letter, so every method is a 405; svc reads a string as the one method it names, and serves the endpoint",
  says: /apipod[^{]*\{"kind":"response","status":405,"body":\{"detail":"Method Not Allowed"\}/,
};

/**
 * What fails today, per service: `start` when svc does not serve the service at all (its
 * requests then wait for it), or per request name. Each entry is asserted: a failure that
 * goes away fails the suite until its entry is removed, so nothing passes or fails unseen.
 */
export const KNOWN_FAILURES: Record<string, { start?: KnownFailure; envelope?: KnownFailure; requests?: Record<string, KnownFailure> }> = {
  'llm-mock-1.0.4': { requests: { 'chat-json': APIPOD_LACKS_USAGE, 'embeddings-json': APIPOD_LACKS_USAGE } },
  'qwen-llm-1.0.3': { requests: { 'chat-json': APIPOD_LACKS_USAGE, 'chat-json-options': APIPOD_LACKS_USAGE, 'embeddings-json': APIPOD_LACKS_USAGE } },
  'streaming-service-1.0.10': { requests: { 'chat-json': CHAT_AS_SVC_ANSWERS_IT } },
  'demo-1.0.0': { requests: { 'prompt-helper-get-with-progress': GET_READS_BODY } },
  'demo-no-queue-1.0.0': { requests: { 'prompt-helper-get-with-progress': GET_READS_BODY } },
  'demo-pypi-1.0.1': { requests: { 'prompt-helper-get-with-progress': GET_READS_BODY } },
  'demo-pypi-1.0.2': { requests: { 'prompt-helper-get-with-progress': GET_READS_BODY } },
  'demo-pypi-1.0.4': { requests: { 'prompt-helper-get-with-progress': GET_READS_BODY } },
  'core-functionalities-pypi-1.0.4': { requests: { 'make-fries-upload': METHODS_AS_TEXT, 'make-fries-without-file': METHODS_AS_TEXT } },
  'readme-1.0.33': {
    requests: {
      'hello-unknown-field': UNKNOWN_FIELD,
      'hello-name-twice': GIVEN_TWICE,
      'transcribe-text-that-is-no-file': TEXT_AS_FILE,
    },
  },
};
