// Bundles the CLI into one ES module so `svc` starts by loading one file, not hundreds.
// Packages that load files beside themselves at run time (wasm) stay external, and so does
// dockerode (with its gRPC and protobuf dependencies): only `svc build` and
// `svc start --orchestrator docker` load it, so the runtime copied into images never needs it.
import { build } from 'esbuild';

await build({
  entryPoints: ['src/cli/main.ts'],
  outfile: 'dist/svc.js',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20.19',
  external: ['web-tree-sitter', 'tree-sitter-python', 'dockerode'],
  banner: {
    // Bundled CommonJS dependencies call require(); give them one.
    js: "import { createRequire as __svcCreateRequire } from 'node:module'; const require = __svcCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
});

// The client the package exports (`import { run } from 'svc'`): fetch only, no dependencies.
// Its type declarations come from `tsc -p tsconfig.client.json` (npm run build).
await build({
  entryPoints: ['src/client/index.ts'],
  outfile: 'dist/client/index.js',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20.19',
  logLevel: 'warning',
});
