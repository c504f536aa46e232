import { describe, expect, it } from 'vitest';
import { normaliseName, parseRequirement, pinnedVersion, unmatchableVersions } from '../../src/scan/pep508.js';

function parse(text: string) {
  const result = parseRequirement(text);
  if ('error' in result) throw new Error(result.error);
  return result.requirement;
}

function errorOf(text: string): string {
  const result = parseRequirement(text);
  if (!('error' in result)) throw new Error(`'${text}' parsed`);
  return result.error;
}

describe('PEP 508 requirements', () => {
  it('reads a name, extras, a specifier and a marker', () => {
    expect(parse('Transformers[Torch, sentencepiece] >= 4.44 , <5 ; python_version >= "3.10"')).toEqual({
      name: 'Transformers',
      key: 'transformers',
      extras: ['sentencepiece', 'torch'],
      specifier: '>=4.44,<5',
      marker: 'python_version >= "3.10"',
      url: null,
      editable: false,
    });
  });

  it('reads a direct URL reference', () => {
    expect(parse('mylib @ https://example.org/mylib-1.0.tar.gz')).toMatchObject({
      name: 'mylib',
      url: 'https://example.org/mylib-1.0.tar.gz',
      specifier: '',
    });
  });

  it('accepts a parenthesised specifier and local versions with ==', () => {
    expect(parse('torch (==2.1.0+cu121)').specifier).toBe('==2.1.0+cu121');
  });

  it('normalises names per PEP 503', () => {
    expect(normaliseName('Flash_Attn')).toBe('flash-attn');
    expect(normaliseName('zope.interface')).toBe('zope-interface');
  });

  it('explains what is wrong with a bad requirement', () => {
    expect(errorOf('-torch')).toBe("invalid package name '-torch'");
    expect(errorOf('==1.0')).toBe('expected a package name');
    expect(errorOf('torch >= ')).toBe("invalid version specifier '>='");
    expect(errorOf('torch ~= 2')).toBe("invalid version specifier '~= 2'");
    expect(errorOf('torch[cuda')).toBe("expected ']' to close the extras");
    expect(errorOf('torch ; os_name === ')).toMatch(/^invalid marker: /);
    expect(errorOf('torch 2.0')).toBe("unexpected '2.0' after the requirement");
  });

  it('knows the one version an exact pin allows', () => {
    expect(pinnedVersion('==2.4.1')).toBe('2.4.1');
    expect(pinnedVersion('>=2,==2.4.1')).toBe('2.4.1');
    expect(pinnedVersion('==2.4.*')).toBeNull();
    expect(pinnedVersion('>=2.4')).toBeNull();
    expect(pinnedVersion('===2.4.1')).toBe('2.4.1');
  });

  it('pins nothing with an exact clause whose version is not PEP 440, which no release can match', () => {
    expect(parse('torch===>2').specifier).toBe('===>2');
    expect(pinnedVersion('===>2')).toBeNull();
    expect(unmatchableVersions('===>2')).toEqual(['>2']);
    expect(unmatchableVersions('>=1,===foo')).toEqual(['foo']);
    expect(unmatchableVersions('===2.4.1+cu121,==2.4.*,>=2')).toEqual([]);
  });
});
