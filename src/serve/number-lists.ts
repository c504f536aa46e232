/**
 * Long lists of numbers in a call's arguments (a `list[float]`: an embedding, a feature
 * vector, a signal), sent to the worker beside the call as doubles rather than as JSON
 * (docs/worker-protocol.md, `numbers`): the gateway has parsed them already to validate
 * them, and Python's json takes ~40 ms to parse 200,000 numbers again where the worker
 * reads their doubles in ~7 ms. The worker gives such a parameter floats, as it does a list
 * JSON sent; each double is the one both sides read the client's number as.
 */

import type { NumberList } from '../worker/protocol.js';
import type { Arguments } from './input-validation.js';

/** A list this long goes as doubles: a shorter one costs the worker little to parse as JSON (~0.2 ms for 1,024 numbers). */
export const LONG_LIST_NUMBERS = 1024;

/**
 * The arguments with an empty list in place of each long list of numbers of `parameters`,
 * and those lists; the arguments themselves when there is none. A list holding -0 stays JSON:
 * Python's json reads `-0` as the integer 0, so only JSON gives the worker what it always had.
 */
export function takeNumberLists(args: Arguments, parameters: ReadonlySet<string>): { arguments: Arguments; numberLists: NumberList[] } {
  const numberLists: NumberList[] = [];
  let taken = args;
  for (const parameter of parameters) {
    const numbers = args[parameter];
    if (!Array.isArray(numbers) || numbers.length < LONG_LIST_NUMBERS || !arePlainNumbers(numbers)) continue;
    if (taken === args) taken = { ...args };
    taken[parameter] = [];
    numberLists.push({ parameter, numbers: numbers as number[] });
  }
  return { arguments: taken, numberLists };
}

/** Numbers, none of them -0. A plain loop: `every` with Object.is took ~1.5 ms for 200,000. */
function arePlainNumbers(items: readonly unknown[]): boolean {
  for (const item of items) {
    if (typeof item !== 'number' || (item === 0 && 1 / item < 0)) return false;
  }
  return true;
}
