import { PlainStringText } from '../../worker/json-text.js';
import type { LongString } from '../../worker/protocol.js';
import type { Arguments } from '../input-validation.js';
import type { JobArguments } from './job-journal.js';

/*
 * A job's long string arguments (long-strings.ts) stay the bytes the client sent: in its
 * arguments as PlainStringText, which a job store writes as the string, and beside its call,
 * as a dedicated call sends them.
 */

/** A job's arguments from the request's: each long string put back in as its bytes. */
export function jobArguments(args: Arguments, longStrings: readonly LongString[] | undefined): JobArguments {
  if (longStrings === undefined) return args;
  const whole: JobArguments = { ...args };
  for (const { parameter, bytes } of longStrings) whole[parameter] = new PlainStringText(bytes);
  return whole;
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
