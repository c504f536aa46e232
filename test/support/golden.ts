import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { expect } from 'vitest';

/**
 * Compares generated text with the reviewed copy under test/golden. `UPDATE_GOLDEN=1`
 * rewrites the copies; the diff is then reviewed and committed like code.
 */
export function expectGolden(actual: string, goldenPath: string): void {
  if (process.env.UPDATE_GOLDEN === '1' || !existsSync(goldenPath)) {
    if (process.env.CI) throw new Error(`golden file ${goldenPath} is missing; run with UPDATE_GOLDEN=1 and commit it`);
    mkdirSync(dirname(goldenPath), { recursive: true });
    writeFileSync(goldenPath, actual);
  }
  expect(actual).toBe(readFileSync(goldenPath, 'utf8'));
}
