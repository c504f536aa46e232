import { createRequire } from 'node:module';
import { setFlagsFromString } from 'node:v8';
import type { Range, Tree } from 'web-tree-sitter';

/** Parses Python source into a tree-sitter syntax tree. The caller owns the tree and must `delete()` it. */
export interface PythonParser {
  /** `includedRanges`: only these parts of the source, in order (by default all of it). */
  parse(source: string, includedRanges?: Range[]): Tree;
}

// Not named `require`: the esbuild bundle's banner already declares a top-level `require`.
const resolvePackageFile = createRequire(import.meta.url).resolve;

let loading: Promise<PythonParser> | undefined;

/**
 * Loads the tree-sitter runtime and the Python grammar (both WebAssembly) once per process.
 * The files are resolved from node_modules, so this works from `src/` under vitest and from
 * the bundle in `dist/`, where both packages stay external.
 */
export function loadPythonParser(): Promise<PythonParser> {
  loading ??= createPythonParser().catch((error: unknown) => {
    loading = undefined; // let a later call retry instead of caching the failure
    throw error;
  });
  return loading;
}

async function createPythonParser(): Promise<PythonParser> {
  // A scan parses one small file and exits: optimising the grammar's WebAssembly with
  // TurboFan costs more CPU than it saves, and starves the rest of the scan on small
  // machines (measured: 400 -> 310 ms for `svc scan examples/hello` on 2 cores).
  setFlagsFromString('--liftoff-only');
  // Imported on first use, so commands that never parse (start, inside the image) run
  // without the grammar's packages.
  const { Language, Parser } = await import('web-tree-sitter');
  await Parser.init({
    locateFile: () => resolvePackageFile('web-tree-sitter/tree-sitter.wasm'),
  });
  const python = await Language.load(resolvePackageFile('tree-sitter-python/tree-sitter-python.wasm'));
  const parser = new Parser();
  parser.setLanguage(python);
  return {
    parse(source: string, includedRanges?: Range[]): Tree {
      const tree = parser.parse(source, null, includedRanges === undefined ? undefined : { includedRanges });
      if (tree === null) throw new Error('tree-sitter returned no tree for Python source');
      return tree;
    },
  };
}
