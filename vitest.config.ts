import { configDefaults, defineConfig } from 'vitest/config';

// test/compat compares real services written for the apipod toolkit, whose files are other
// projects' code and not in this repository: it runs where SVC_COMPAT_SOURCES names a
// directory holding them (test/compat/README.md).
const compatSuite = process.env.SVC_COMPAT_SOURCES ? [] : ['test/compat/**'];

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: [...configDefaults.exclude, ...compatSuite],
    testTimeout: 30_000,
    globalSetup: ['test/support/build-cli.ts'],
  },
});
