import type { ServerResponse } from 'node:http';
import type { LongString } from '../worker/protocol.js';
import type { CallOutcome } from '../worker/worker-process.js';
import { mediaBytesOf, releaseMediaBytes } from '../worker/file-references.js';

/*
 * A request's large buffers, let go of as soon as the request is done with them.
 *
 * V8 frees a young buffer at its next young collection only if no old object points to it.
 * The small objects a call passes its payload through (async functions waiting on the
 * worker, promises, the pool's records) often live long enough to be moved to the old
 * generation, and when they die they still point to what they held: those buffers then
 * wait for a full collection. V8 counts them against the old generation's limit, so on
 * 2 MB payloads it ran a full collection every ~10 requests, each ~10 ms of one request's
 * latency and ~19 ms of CPU with its helper threads (bench/RESULTS.md, "Large payloads: the
 * buffers that waited for a full collection"). Emptying the holders once they are done lets
 * the buffers go young.
 */

const NO_BYTES = Buffer.alloc(0);

/** After the call that sent them (or after they were staged or put back into the arguments): the bytes are not read again. */
export function releaseLongStrings(strings: readonly LongString[] | undefined): void {
  for (const string of strings ?? []) string.bytes = NO_BYTES;
}

/**
 * Once `response` is sent (or its client has left): the result's bytes, as the worker wrote
 * them or as the file it named. A result without such bytes (most) adds no listener.
 */
export function releaseOutcomeWhenSent(response: ServerResponse, outcome: CallOutcome): void {
  if (outcome.kind !== 'result') return;
  const { json } = outcome;
  if (json !== undefined) {
    response.once('close', () => json.release());
  } else if (mediaBytesOf(outcome.value) !== undefined) {
    const { value } = outcome;
    response.once('close', () => releaseMediaBytes(value));
  }
}
