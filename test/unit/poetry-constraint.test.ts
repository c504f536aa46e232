import { describe, expect, it } from 'vitest';
import { poetryToPep440 } from '../../src/scan/poetry-constraint.js';

describe('Poetry constraints as PEP 440', () => {
  it.each([
    ['^2.1.0', '>=2.1.0,<3'],
    ['^0.2.3', '>=0.2.3,<0.3'],
    ['^0.0.3', '>=0.0.3,<0.0.4'],
    ['~1.2.3', '>=1.2.3,<1.3'],
    ['~1', '>=1,<2'],
    ['2.1.0', '==2.1.0'],
    ['2.1.*', '==2.1.*'],
    ['*', ''],
    ['>=1.2,<2.0', '>=1.2,<2.0'],
    ['>= 1.2 < 2.0', '>=1.2,<2.0'],
  ])('%s becomes %s', (constraint, expected) => {
    expect(poetryToPep440(constraint)).toEqual({ alternatives: [expected] });
  });

  it('keeps || alternatives apart', () => {
    expect(poetryToPep440('^3.10 || ^4.0')).toEqual({ alternatives: ['>=3.10,<4', '>=4.0,<5'] });
  });

  it('reports what it cannot read', () => {
    expect(poetryToPep440('^latest')).toEqual({ error: "cannot read the Poetry constraint '^latest'" });
  });
});
