import type { Node, Tree } from 'web-tree-sitter';
import { reportMissingApp, resolveServedApp, type AppDeclaration } from './app-resolution.js';
import { sortDiagnostics, type Diagnostic, type Report } from './diagnostic.js';
import { readEndpoints, type EndpointDeclaration } from './endpoint-decorators.js';
import { findHiddenRegistrations } from './hidden-registrations.js';
import { findCompileErrors, type TargetPython } from './python-compile-errors.js';
import { parsePython } from './python-grammar-gaps.js';
import type { PythonParser } from './python-parser.js';
import { describeSyntaxErrors, firstFew, lineOfIndex, readRecoverableStatements } from './python-syntax-recovery.js';
import { findRouteProblems } from './route-rules.js';
import type { PlacedStatement } from './statement-placement.js';

/**
 * The scan's read of `service.py`, without running it: parse (python-grammar-gaps.ts), recover
 * the statements around syntax errors (python-syntax-recovery.ts, block-flattening.ts), resolve
 * the served app (app-resolution.ts, toolkit-imports.ts), read its endpoints
 * (endpoint-decorators.ts, function-signature.ts) and check their routes (route-rules.ts), then
 * warn of registrations it cannot read (hidden-registrations.ts) and add what the image's Python
 * refuses to compile (python-compile-errors.ts).
 */

/** What a static read of `service.py` found: the APIPod app, its endpoints, and what got in the way. */
export interface ServiceFile {
  /** The `APIPod(...)` instance the endpoints hang off. */
  app: AppDeclaration | null;
  /** In source order. */
  endpoints: EndpointDeclaration[];
  /** Syntax errors, unreadable decorator arguments, a missing app, duplicate routes, ... in line order. */
  diagnostics: Diagnostic[];
  /**
   * Among them, what certainly stops the service: syntax errors and what else the image's
   * Python refuses to compile, what fails the import (a bad APIPod argument, route or method),
   * and routes svc start refuses.
   */
  serviceErrors: Diagnostic[];
  /**
   * Registrations svc start serves that the scan cannot list (a decorator inside a function, the
   * app handed to another function, `add_api_route`, ...): each has a warning among `diagnostics`.
   */
  unreadRegistrations: number;
}

export function readServiceFile(parser: PythonParser, source: string, fileName: string, python: TargetPython): ServiceFile {
  // Python ends a line at a lone CR too (universal newlines); tree-sitter only at LF. Same length, so offsets hold.
  const code = (source.startsWith('\uFEFF') ? source.slice(1) : source).replace(/\r(?!\n)/gu, '\n');
  const trees: Tree[] = [];
  /** Parses `python` as if it began at `firstRow` of the file, so every node reports its real line; with the text it read. */
  const parseModule = (python: string, firstRow = 0): { root: Node; text: string } => {
    const { tree, text } = parsePython(parser, python);
    trees.push(tree);
    return { root: tree.rootNodeWithOffset(0, { row: firstRow, column: 0 }), text };
  };
  try {
    const { root, text } = parseModule(code);
    const { statements, syntaxProblems } = readRecoverableStatements(root, text, (python, firstRow) => parseModule(python, firstRow).root);
    const { errors, servedNames, ...declarations } = readDeclarations(root, statements, text, fileName);
    const hidden = declarations.app === null || syntaxProblems.length > 0 ? [] : findHiddenRegistrations(root, servedNames, fileName);
    const compileErrors = firstFew(
      text.includes('\0')
        ? [{ file: fileName, line: lineOfIndex(text, text.indexOf('\0')), message: 'source code string cannot contain null bytes' }]
        : syntaxProblems.length > 0
          ? describeSyntaxErrors(syntaxProblems, fileName)
          : findCompileErrors(root, text, python).map((error) => ({ file: fileName, ...error })),
    );
    // A file that does not parse is read as well as it can be, which is not well enough to be sure of more.
    const serviceErrors = [...compileErrors, ...(syntaxProblems.length > 0 ? [] : errors)];
    return {
      ...declarations,
      diagnostics: sortDiagnostics([...compileErrors, ...declarations.diagnostics, ...hidden]),
      serviceErrors: sortDiagnostics(serviceErrors),
      unreadRegistrations: hidden.length,
    };
  } finally {
    // The trees live in WebAssembly memory, which the garbage collector does not reclaim.
    for (const tree of trees) tree.delete();
  }
}

interface Declarations {
  app: AppDeclaration | null;
  endpoints: EndpointDeclaration[];
  diagnostics: Diagnostic[];
  /** Among the diagnostics, what certainly stops the service: the import fails, or svc start refuses its routes. */
  errors: Diagnostic[];
  /** The names that hold the served app when the import ends (`app`, its aliases). */
  servedNames: Set<string>;
}

function readDeclarations(root: Node, statements: readonly PlacedStatement[], source: string, file: string): Declarations {
  const diagnostics: Diagnostic[] = [];
  const errors: Diagnostic[] = [];
  const report: Report = (line, message, failure) => {
    const diagnostic = { file, line, message };
    diagnostics.push(diagnostic);
    if (failure?.certain === true) errors.push(diagnostic);
  };
  const resolution = resolveServedApp(statements, source, report);
  const { endpoints, routes } = readEndpoints(statements, resolution, source, report);
  for (const problem of findRouteProblems(routes)) {
    report(problem.line, problem.message, { certain: problem.isCertain });
  }
  reportMissingApp(resolution.trace, root, statements, resolution.imports, file, report);
  return { app: resolution.app, endpoints, diagnostics, errors, servedNames: resolution.trace.servedNames };
}
