import { InvalidArgumentError } from 'commander';
import { parseImageReference } from '../image/image-reference.js';

/** A commander option parser for whole numbers within bounds; bad values are usage errors (exit 2). */
export function integerBetween(minimum: number, maximum: number): (text: string) => number {
  return (text) => {
    const value = Number(text);
    if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(value) || value < minimum || value > maximum) {
      throw new InvalidArgumentError(`expected a whole number from ${minimum} to ${maximum}`);
    }
    return value;
  };
}

/**
 * MiB of Node's heap that a server may give to results it keeps, at most three quarters of
 * the heap: past the heap's limit, Node aborts and every job in memory is lost.
 */
export function heapShare(heapMebibytes: number): (text: string) => number {
  const most = Math.floor((heapMebibytes * 3) / 4);
  return (text) => {
    const value = Number(text);
    if (!/^\d+$/.test(text.trim()) || value < 1 || value > most) {
      throw new InvalidArgumentError(
        `expected MiB from 1 to ${most}, three quarters of Node's heap (${heapMebibytes} MiB; NODE_OPTIONS=--max-old-space-size=MiB raises it)`,
      );
    }
    return value;
  };
}

/** Seconds, possibly fractional, at least 0. */
export function seconds(text: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < 0) {
    throw new InvalidArgumentError('expected a number of seconds, 0 or more');
  }
  return value;
}

/** A comma-separated list of seconds (`1,2,5`); an empty list is allowed as `''`: no retries. */
export function secondsList(text: string): number[] {
  if (text.trim() === '') return [];
  return text.split(',').map((part) => {
    try {
      return seconds(part);
    } catch {
      throw new InvalidArgumentError(`expected seconds separated by commas (1,2,5), not ${JSON.stringify(part.trim())}`);
    }
  });
}

/**
 * One value of an enum, of which only `implemented` work in this version: the others are
 * named as known but unavailable, so a typo and a not-yet-supported value read differently.
 */
export function oneOf<T extends string>(all: readonly T[], implemented: readonly T[]): (text: string) => T {
  return (text) => {
    if (!(all as readonly string[]).includes(text)) throw new InvalidArgumentError(`expected one of ${all.join(', ')}`);
    if (!(implemented as readonly string[]).includes(text)) {
      throw new InvalidArgumentError(`'${text}' is not available in this version of svc; use ${implemented.join(' or ')}`);
    }
    return text as T;
  };
}

/** An http(s) URL without query or fragment, as an origin (and optional path prefix) for job URLs; no trailing slash. */
export function publicUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new InvalidArgumentError('expected an http or https URL, e.g. https://api.example.com');
  }
  if (!['http:', 'https:'].includes(url.protocol) || url.search !== '' || url.hash !== '') {
    throw new InvalidArgumentError('expected an http or https URL without query or fragment, e.g. https://api.example.com');
  }
  return text.replace(/\/+$/, '');
}

/** `PATH=SECONDS`, collected into a map by endpoint path. */
export function endpointSeconds(text: string, previous: Map<string, number> = new Map()): Map<string, number> {
  const match = /^(\/[^=\s]*)=(.+)$/.exec(text);
  if (!match) throw new InvalidArgumentError('expected PATH=SECONDS, e.g. /generate=600');
  previous.set(match[1] as string, seconds(match[2] as string));
  return previous;
}

/** A file name that is not empty: `--entrypoint ""` would otherwise name the project directory itself. */
export function fileName(text: string): string {
  if (text.trim() === '') throw new InvalidArgumentError('expected a file name, e.g. service.py');
  return text;
}

/** An image reference as the engine reads one (`name[:tag][@digest]`); anything else would reach its API mangled. */
export function imageReference(text: string): string {
  if (parseImageReference(text) === null) throw new InvalidArgumentError('expected an image reference, e.g. my-service:latest');
  return text;
}

/** `--cors-origin`, repeatable: `*`, or a web origin (`https://app.example.com`, no path), added to those before. */
export function corsOrigin(text: string, previous: string[]): string[] {
  if (text === '*') return [...previous, text];
  let origin: string | null = null;
  try {
    const url = new URL(text);
    origin = (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === text.replace(/\/$/, '') ? url.origin : null;
  } catch {
    origin = null;
  }
  if (origin === null) throw new InvalidArgumentError('expected * or an origin such as https://app.example.com (scheme, host and port; no path)');
  return [...previous, origin];
}
