// Bundles the CLI into one ES module so `svc` starts by loading one file, not hundreds.
// Packages that load files beside themselves at run time (wasm) stay external.
import { build } from 'esbuild';

await build({
  entryPoints: ['src/cli/main.ts'],
  outfile: 'dist/svc.js',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20.19',
  external: ['web-tree-sitter', 'tree-sitter-python'],
  banner: {
    // Bundled CommonJS dependencies call require(); give them one.
    js: "import { createRequire as __svcCreateRequire } from 'node:module'; const require = __svcCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
