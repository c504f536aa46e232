import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { SvcError } from '../svc-error.js';

/** One accepted key: `endpoints` null means every endpoint. The key itself is kept only as a hash. */
export interface ApiKey {
  /** Names the key in logs and owns its jobs; never the key. */
  id: string;
  digest: Buffer;
  endpoints: ReadonlySet<string> | null;
}

export type KeyCheck = { kind: 'valid'; key: ApiKey } | { kind: 'unknown' };

/** Shorter keys are refused: an empty one (`--api-key "$UNSET"`) would otherwise turn authentication off. */
const MIN_KEY_LENGTH = 8;

/** A keys file's JSON in the environment, for where no file can go: a container. */
export const API_KEYS_ENV = 'SVC_API_KEYS';

/**
 * The keys a server accepts: `SERVICE_API_KEY` / `--api-key` (every endpoint), and a keys
 * file (`--api-keys`, or its text in `SVC_API_KEYS`) mapping keys to the endpoints they may call:
 *
 *   {"keys": [{"name": "ci", "key": "...", "endpoints": ["/hello"]}, {"key": "...", "endpoints": "*"}]}
 */
export class ApiKeys {
  private constructor(private readonly keys: readonly ApiKey[]) {}

  static none(): ApiKeys {
    return new ApiKeys([]);
  }

  static from(options: { key?: string | undefined; keysFile?: string | undefined; keysJson?: string | undefined }): ApiKeys {
    const keys: ApiKey[] = [];
    if (options.key !== undefined) {
      if (options.key.length < MIN_KEY_LENGTH) {
        const given = options.key === '' ? 'empty' : `${options.key.length} characters long`;
        throw new SvcError(
          'usage',
          `the API key (--api-key or $SERVICE_API_KEY) is ${given}: a key has at least ${MIN_KEY_LENGTH} characters; to serve without keys, unset it`,
        );
      }
      keys.push(makeKey(options.key, 'service-key', null));
    }
    if (options.keysFile !== undefined) keys.push(...parseKeys(readKeysFile(options.keysFile), { file: options.keysFile }));
    if (options.keysJson !== undefined && options.keysJson !== '') keys.push(...parseKeys(options.keysJson, { file: `$${API_KEYS_ENV}` }));
    return new ApiKeys(keys);
  }

  get enabled(): boolean {
    return this.keys.length > 0;
  }

  /** How many keys the server accepts: each gets its share of the job store (key-share.ts). */
  get count(): number {
    return this.keys.length;
  }

  /** The keys' ids (`name:hash`), which own jobs and name webhook secrets; never the keys. */
  get ids(): string[] {
    return this.keys.map((key) => key.id);
  }

  /** Compares against every key in constant time per key, without stopping at a match. */
  check(presented: string): KeyCheck {
    const digest = digestOf(presented);
    let found: ApiKey | null = null;
    for (const key of this.keys) {
      if (timingSafeEqual(key.digest, digest) && found === null) found = key;
    }
    return found ? { kind: 'valid', key: found } : { kind: 'unknown' };
  }
}

function digestOf(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

function makeKey(key: string, name: string, endpoints: ReadonlySet<string> | null): ApiKey {
  const digest = digestOf(key);
  return { id: `${name}:${digest.subarray(0, 4).toString('hex')}`, digest, endpoints };
}

/** The keys file's text; a file that cannot be read is a usage error naming it. */
export function readKeysFile(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    throw new SvcError('usage', 'the keys file cannot be read', { file });
  }
}

/** The keys in a keys file's text; `file` names where the text came from in errors. */
function parseKeys(text: string, { file }: { file: string }): ApiKey[] {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new SvcError('usage', `the keys file is not valid JSON: ${(error as Error).message}`, { file });
  }
  const entries = (data as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(entries)) throw new SvcError('usage', 'expected {"keys": [...]}', { file, field: 'keys' });
  if (entries.length === 0) {
    throw new SvcError('usage', 'lists no keys, which would leave the server open to everyone; to serve without keys, leave the file out', { file, field: 'keys' });
  }
  return entries.map((entry: unknown, index) => {
    const field = `keys[${index}]`;
    const { key, name, endpoints } = (entry ?? {}) as { key?: unknown; name?: unknown; endpoints?: unknown };
    if (typeof key !== 'string' || key.length < MIN_KEY_LENGTH) {
      throw new SvcError('usage', `needs a "key" string of at least ${MIN_KEY_LENGTH} characters`, { file, field: `${field}.key` });
    }
    if (name !== undefined && (typeof name !== 'string' || !/^[\w.-]+$/.test(name))) {
      throw new SvcError('usage', 'a name is letters, digits, "_", "-" or "."', { file, field: `${field}.name` });
    }
    if (endpoints === '*') return makeKey(key, (name as string | undefined) ?? `key${index}`, null);
    if (!Array.isArray(endpoints) || !endpoints.every((path) => typeof path === 'string' && path.startsWith('/'))) {
      throw new SvcError('usage', 'expected "*" or a list of endpoint paths like "/generate"', { file, field: `${field}.endpoints` });
    }
    return makeKey(key, (name as string | undefined) ?? `key${index}`, new Set(endpoints as string[]));
  });
}
