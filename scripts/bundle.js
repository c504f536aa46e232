// Bundles the CLI into ES modules so `svc` starts by loading a few files, not hundreds:
// dist/svc.js holds the command line (commander, every command's options and help), and each
// `import()` of a command's work becomes a chunk in dist/chunks/, so a command parses only its
// own code: `svc scan` never loads the gateway's router and ajv. The chunks directory is
// emptied first, so it holds exactly this build's chunks (runtime-staging.ts copies them all).
// Packages that load files beside themselves at run time (wasm) stay external, and so does
// dockerode (with its gRPC and protobuf dependencies): only `svc build` and
// `svc start --orchestrator docker` load it, so the runtime copied into images never needs it.
import { rmSync } from 'node:fs';
import { build } from 'esbuild';

rmSync('dist/chunks', { recursive: true, force: true });
await build({
  entryPoints: { svc: 'src/cli/main.ts' },
  outdir: 'dist',
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20.19',
  external: ['web-tree-sitter', 'tree-sitter-python', 'dockerode'],
  // V8 keeps each chunk's source text for the process's life, and a line-end table once a
  // stack trace is formatted: without indentation and line breaks the gateway holds ~1.6 MiB
  // less. Names are kept, so a --debug stack trace still names every function.
  minifyWhitespace: true,
  banner: {
    // Bundled CommonJS dependencies call require(); give them one (in every chunk).
    js: "import { createRequire as __svcCreateRequire } from 'node:module'; const require = __svcCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
});

// The client the package exports (`import { run } from 'svc-ml'`): fetch only, no dependencies.
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
