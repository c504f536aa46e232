import { PlainStringText } from '../../worker/json-text.js';
import type { LongString } from '../../worker/protocol.js';
import type { Arguments } from '../input-validation.js';
import { EVERY_KEY, splitLongStrings } from '../long-strings.js';
import { releaseLongStrings } from '../released-buffers.js';
import type { JobArguments } from './job-journal.js';

/*
 * A job's long string arguments (long-strings.ts) stay the bytes the client sent: in its
 * arguments as PlainStringText, which a job store writes as the string, and beside its call,
 * as a dedicated call sends them.
 */

/**
 * A job's arguments from the request's: each long string put back in as its bytes, which the
 * job's arguments then hold alone (the request's are emptied: a route waiting on its job
 * outlives the young collections that would free them, released-buffers.ts).
 */
export function jobArguments(args: Arguments, longStrings: readonly LongString[] | undefined): JobArguments {
  if (longStrings === undefined) return args;
  const whole: JobArguments = { ...args };
  for (const { parameter, bytes } of longStrings) whole[parameter] = new PlainStringText(bytes);
  releaseLongStrings(longStrings);
  return whole;
}

/**
 * A job's arguments as a store wrote them (storedJson): each long string without an escape
 * back as its bytes, which its call sends beside it, as the request's were. A 2 MB string
 * read from Redis cost the gateway a parse and its escaping into the call's line, ~5 ms.
 */
export function storedJobArguments(stored: Buffer): JobArguments {
  const split = splitLongStrings(stored, EVERY_KEY);
  if (split === null) return JSON.parse(stored.toString('utf8')) as JobArguments;
  const args = JSON.parse(split.rest) as JobArguments;
  for (const { parameter, bytes } of split.strings) args[parameter] = new PlainStringText(bytes);
  return args;
}

/** Once its job has ended: the bytes of its long strings are not read again. */
export function releaseJobArguments(args: JobArguments): void {
  for (const value of Object.values(args)) if (value instanceof PlainStringText) value.release();
}

/** A job's arguments as its call sends them: each string kept as its bytes goes beside the call, `""` in its place. */
export function callOf(args: JobArguments): { callArguments: Arguments; longStrings: LongString[] | undefined } {
  const callArguments: Arguments = {};
  const longStrings: LongString[] = [];
  for (const [parameter, value] of Object.entries(args)) {
    if (value instanceof PlainStringText) {
      callArguments[parameter] = '';
      longStrings.push({ parameter, bytes: value.utf8 });
    } else {
      callArguments[parameter] = value;
    }
  }
  return { callArguments, longStrings: longStrings.length > 0 ? longStrings : undefined };
}
