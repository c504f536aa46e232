import { describe, expect, it } from 'vitest';
import { ApiKeys } from '../../src/serve/api-keys.js';
import { SvcError } from '../../src/svc-error.js';

const MAIN = 'Main-Key-4f9Q';
const SCOPED = 'ci-Only-Key-7zX';
const LONG = `Long-${'aB3'.repeat(3000)}`;

/** Keys a caller might send by mistake or by guessing: each one character or one case away from `key`. */
function nearMisses(key: string): string[] {
  const flipped = (index: number) => {
    const character = key[index] as string;
    const other = character === character.toUpperCase() ? character.toLowerCase() : character.toUpperCase();
    return key.slice(0, index) + other + key.slice(index + 1);
  };
  const letter = [...key].findIndex((character) => character.toLowerCase() !== character.toUpperCase());
  const lastLetter = key.length - 1 - [...key].reverse().findIndex((character) => character.toLowerCase() !== character.toUpperCase());
  return [
    key.toUpperCase(),
    key.toLowerCase(),
    flipped(letter),
    flipped(lastLetter),
    key.slice(0, -1),
    key.slice(1),
    key.slice(0, 8),
    `${key}x`,
    `x${key}`,
    `${key}${key}`,
    ` ${key}`,
    `${key} `,
    `${key}\n`,
    `\t${key}`,
    key.replace(key[4] as string, ' '),
    '',
    ' ',
    'x'.repeat(1_000_000),
  ];
}

function checkAll(keys: ApiKeys, presented: string[]): Record<string, string> {
  return Object.fromEntries(presented.map((text) => [JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}...(${text.length})` : text), keys.check(text).kind]));
}

describe('API keys', () => {
  const keys = ApiKeys.from({
    key: MAIN,
    keysJson: JSON.stringify({
      keys: [
        { name: 'ci', key: SCOPED, endpoints: ['/hello'] },
        { name: 'long', key: LONG, endpoints: '*' },
      ],
    }),
  });

  it('accepts the main key exactly, for every endpoint', () => {
    const check = keys.check(MAIN);
    expect(check.kind).toBe('valid');
    expect(check.kind === 'valid' && [check.key.id.startsWith('service-key:'), check.key.endpoints]).toEqual([true, null]);
  });

  it('accepts a scoped key exactly, with its endpoints, and a very long key exactly', () => {
    const scoped = keys.check(SCOPED);
    expect(scoped.kind === 'valid' && [scoped.key.id.split(':')[0], [...(scoped.key.endpoints ?? [])]]).toEqual(['ci', ['/hello']]);
    const long = keys.check(LONG);
    expect(long.kind === 'valid' && [long.key.id.split(':')[0], long.key.endpoints]).toEqual(['long', null]);
  });

  it.each([
    ['the main key', MAIN],
    ['a scoped key', SCOPED],
    ['a very long key', LONG],
  ])('refuses every near miss of %s: case variants, prefixes, suffixes, whitespace, empty and huge keys', (_name, key) => {
    const presented = nearMisses(key);
    expect(new Set(presented).size).toBe(presented.length);
    const results = checkAll(keys, presented);
    expect(results).toEqual(Object.fromEntries(Object.keys(results).map((text) => [text, 'unknown'])));
  });

  it('names a key only by its name and a digest prefix, never by the key itself', () => {
    for (const key of [MAIN, SCOPED, LONG]) {
      const check = keys.check(key);
      expect(check.kind === 'valid' && check.key.id).toMatch(/^[\w.-]+:[0-9a-f]{8}$/);
      expect(check.kind === 'valid' && check.key.id).not.toContain(key.slice(0, 8));
    }
  });

  it('refuses to start with an empty or short main key, which would turn authentication off', () => {
    const usage = (key: string) => {
      try {
        ApiKeys.from({ key });
      } catch (error) {
        return error instanceof SvcError ? [error.exitCode, error.message] : error;
      }
      return 'accepted';
    };
    expect(usage('')).toEqual([2, expect.stringContaining('the API key (--api-key or $SERVICE_API_KEY) is empty')]);
    expect(usage('1234567')).toEqual([2, expect.stringContaining('is 7 characters long: a key has at least 8 characters')]);
  });

  it('refuses an empty or short scoped key, naming its field', () => {
    for (const key of ['', 'short']) {
      const keysJson = JSON.stringify({ keys: [{ key: 'long-enough-key', endpoints: '*' }, { key, endpoints: ['/hello'] }] });
      expect(() => ApiKeys.from({ keysJson })).toThrow(expect.objectContaining({ location: { file: '$SVC_API_KEYS', field: 'keys[1].key' } }));
    }
  });

  it('with no keys configured, is not enabled and knows no key', () => {
    const none = ApiKeys.none();
    expect([none.enabled, none.check(MAIN).kind, none.check('').kind]).toEqual([false, 'unknown', 'unknown']);
    expect(keys.enabled).toBe(true);
  });
});
