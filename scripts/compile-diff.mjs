#!/usr/bin/env node
// Differential test of the scan's compile checks against CPython: every .py file of each given
// interpreter's standard library and site-packages is read by svc (readServiceFile, its
// service_errors from the parse and the compile checks) with each interpreter's version as the
// image's Python, and compiled by that interpreter's own compile(). A false alarm (svc refuses
// what CPython compiles) blocks `svc build` and must be fixed; a miss is left to the image's
// compile check. Takes a few minutes for the four Pythons svc supports.
// Usage: node scripts/compile-diff.mjs /root/.pyenv/versions/3.1{0,1,2,3}.*/bin/python
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

const pythons = process.argv.slice(2);
if (pythons.length === 0) {
  console.error('usage: node scripts/compile-diff.mjs PYTHON...');
  process.exit(2);
}

// The scan's TypeScript, bundled beside node_modules so the grammar's WebAssembly resolves.
const bundle = 'node_modules/.cache/compile-diff/svc.mjs';
await build({
  stdin: {
    contents: "export { projectTextReader } from './src/scan/project-text.ts';\n" +
      "export { loadPythonParser } from './src/scan/python-parser.ts';\n" +
      "export { readServiceFile } from './src/scan/service-file.ts';\n",
    resolveDir: process.cwd(),
    loader: 'ts',
  },
  outfile: bundle,
  bundle: true,
  platform: 'node',
  format: 'esm',
  external: ['web-tree-sitter', 'tree-sitter-python'],
  logLevel: 'warning',
});
const { projectTextReader, loadPythonParser, readServiceFile } = await import(join(process.cwd(), bundle));

const COMPILE = `
import json, sys, warnings
warnings.simplefilter('ignore')
verdicts = []
for path in json.load(sys.stdin):
    try:
        with open(path, 'rb') as source:
            compile(source.read(), path, 'exec', dont_inherit=True)
        verdicts.append(None)
    except SyntaxError as error:
        verdicts.append('%s:%s: %s' % (type(error).__name__, error.lineno, error.msg))
    except Exception as error:
        verdicts.append('%s: %s' % (type(error).__name__, error))
print(json.dumps(verdicts))
`;
const LOCATE = "import json, sys, sysconfig; p = sysconfig.get_paths(); print(json.dumps(['%d.%d' % sys.version_info[:2], p['stdlib'], p['purelib']]))";

const interpreters = pythons.map((python) => {
  const [version, ...roots] = JSON.parse(execFileSync(python, ['-c', LOCATE], { encoding: 'utf8' }));
  // site-packages is usually inside the standard library's directory.
  return { python, version, roots: roots.filter((root) => !roots.some((other) => root.startsWith(`${other}/`))) };
});

/** One file per content, with the versions whose libraries hold it. */
const files = new Map();
for (const { version, roots } of interpreters) {
  for (const root of roots) {
    for (const path of pythonFiles(root)) {
      const hash = createHash('sha1').update(readFileSync(path)).digest('hex');
      const file = files.get(hash) ?? { path, from: new Set() };
      file.from.add(version);
      files.set(hash, file);
    }
  }
}
const list = [...files.values()];
for (const interpreter of interpreters) {
  const input = JSON.stringify(list.map((file) => file.path));
  interpreter.verdicts = JSON.parse(execFileSync(interpreter.python, ['-c', COMPILE], { input, encoding: 'utf8', maxBuffer: 1 << 28 }));
}

const parser = await loadPythonParser();
const tally = new Map();
list.forEach((file, index) => {
  const undecodable = [];
  const text = projectTextReader((path) => readFileSync(path), { pythonSource: file.path, toml: 'pyproject.toml' }, [], new Map(), undecodable)(file.path) ?? '';
  for (const { version, verdicts } of interpreters) {
    const service = readServiceFile(parser, text, file.path, { version, source: 'default' });
    // A library creates no APIPod app: only what the compile checks and the parse say counts here.
    const ours = [...undecodable, ...service.serviceErrors].filter((error) => !error.message.includes('creates no APIPod app'));
    const key = `${version}, ${file.from.has(version) ? 'its own library' : 'other versions only'}`;
    const counts = tally.get(key) ?? { files: 0, falseAlarms: [], misses: [] };
    counts.files += 1;
    const python = verdicts[index];
    if (ours.length > 0 && python === null) counts.falseAlarms.push(`${file.path}:${ours[0].line ?? 0}: ${ours[0].message}`);
    if (ours.length === 0 && python !== null) counts.misses.push(`${file.path}: ${python}`);
    tally.set(key, counts);
  }
});
for (const [key, { files: count, falseAlarms, misses }] of [...tally].sort()) {
  console.log(`Python ${key}: ${count} files, ${falseAlarms.length} false alarms, ${misses.length} misses`);
  for (const alarm of falseAlarms) console.log(`  false alarm ${alarm}`);
  for (const miss of misses) console.log(`  miss ${miss}`);
}
process.exitCode = [...tally.values()].some((counts) => counts.falseAlarms.length > 0) ? 1 : 0;

function pythonFiles(directory) {
  return readdirSync(directory, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.py'))
    .map((entry) => join(entry.parentPath ?? entry.path, entry.name));
}
