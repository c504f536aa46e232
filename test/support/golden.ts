import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { expect } from 'vitest';

/**
 * Compares generated text with the reviewed copy under test/golden. `UPDATE_GOLDEN=1`
 * rewrites the copies; the diff is then reviewed and committed like code. A missing copy
 * fails, locally as in CI: written on the fly, a deleted golden would pass unnoticed.
 */
export function expectGolden(actual: string, goldenPath: string): void {
  if (process.env.UPDATE_GOLDEN === '1') {
    mkdirSync(dirname(goldenPath), { recursive: true });
    writeFileSync(goldenPath, actual);
  } else if (!existsSync(goldenPath)) {
    throw new Error(`golden file ${goldenPath} is missing: run the test with UPDATE_GOLDEN=1 to write it, then review and commit it`);
  }
  expect(actual, `differs from ${goldenPath}; if the change is intended, rerun with UPDATE_GOLDEN=1 and review the diff`).toBe(readFileSync(goldenPath, 'utf8'));
}
