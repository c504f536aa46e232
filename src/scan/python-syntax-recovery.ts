import type { Node } from 'web-tree-sitter';
import { BLOCK_STATEMENTS, flattenBlocks } from './block-flattening.js';
import type { Diagnostic } from './diagnostic.js';
import { describeInvalidCharacter, isTypeParameterDefault } from './python-compile-errors.js';
import { firstLineOf } from './python-literals.js';
import { TOP_LEVEL, type PlacedStatement } from './statement-placement.js';
import { childrenOf, namedChildrenOf } from './syntax-nodes.js';

/** A file that does not parse: where its syntax errors are, and the statements still worth reading around them. */

const MAX_SYNTAX_DIAGNOSTICS = 3;

/** One diagnostic for each syntax error, at its line, naming what Python would name. */
export function describeSyntaxErrors(problems: Node[], file: string): Diagnostic[] {
  return problems.map((node): Diagnostic => {
    const character = node.isMissing ? null : strayCharacter(node);
    return {
      file,
      line: (character?.node ?? node).startPosition.row + 1,
      message: node.isMissing
        ? `syntax error: missing \`${node.type}\``
        : character !== null
          ? `syntax error: ${describeInvalidCharacter(character.text)}`
          : `syntax error near \`${firstLineOf(node.text)}\``,
    };
  });
}

/**
 * A character no Python token can hold (a no-break space or a curly quote pasted from a web
 * page), which tree-sitter leaves alone in an ERROR node: Python names it, and so does svc,
 * rather than showing it between backticks, where it cannot be seen.
 */
function strayCharacter(error: Node): { node: Node; text: string } | null {
  for (const candidate of [error, ...error.descendantsOfType('ERROR')]) {
    const first = candidate?.text.replace(/^[ \t\f\r\n]+/u, '').codePointAt(0);
    if (candidate == null || first === undefined || first < 0x80) continue;
    const text = String.fromCodePoint(first);
    if (!/\p{ID_Continue}/u.test(text)) return { node: candidate, text };
  }
  return null;
}

/** A broken file can hold hundreds of errors; the first few say where to look. */
export function firstFew(errors: Diagnostic[]): Diagnostic[] {
  const shown = errors.slice(0, MAX_SYNTAX_DIAGNOSTICS).map((error) => ({ ...error }));
  const hidden = errors.length - shown.length;
  const last = shown[shown.length - 1];
  if (last !== undefined && hidden > 0) last.message += ` (and ${hidden} more syntax error${hidden === 1 ? '' : 's'})`;
  return shown;
}

/** The 1-based line of a character of `text`. */
export function lineOfIndex(text: string, index: number): number {
  let line = 1;
  for (let at = text.indexOf('\n'); at !== -1 && at < index; at = text.indexOf('\n', at + 1)) line += 1;
  return line;
}

/** The outermost ERROR nodes and the MISSING nodes, in source order; a PEP 696 default is left to the compile checks. */
function findSyntaxProblems(node: Node): Node[] {
  if (node.isMissing || (node.isError && !isTypeParameterDefault(node))) return [node];
  if (!node.hasError) return [];
  return childrenOf(node).flatMap(findSyntaxProblems);
}

/**
 * The module-level statements worth reading, and where the syntax errors are. tree-sitter
 * recovers from errors, but an unclosed bracket can swallow every statement after it into one
 * ERROR node. So each broken region is cut again at lines that start a new top-level statement,
 * and each piece is parsed alone: the endpoints after a broken function are still found, and
 * each error is located in its own piece rather than wherever the recovery gave up.
 */
export function readRecoverableStatements(
  root: Node,
  text: string,
  parseModule: (python: string, firstRow: number) => Node,
): { statements: PlacedStatement[]; syntaxProblems: Node[] } {
  const { readable, brokenRows } = readModuleStatements(root, { flattenBrokenBlocks: false });
  const lines = text.split('\n');
  const pieces = mergeRowRanges(brokenRows).flatMap((range) =>
    splitIntoTopLevelChunks(lines, range).map((chunk) =>
      parseModule(lines.slice(chunk.start, chunk.end + 1).join('\n'), chunk.start),
    ),
  );
  const recovered = pieces.flatMap((piece) => readModuleStatements(piece, { flattenBrokenBlocks: true }).readable);
  const localised = [...readable.map((statement) => statement.node), ...pieces].flatMap(findSyntaxProblems);
  return {
    statements: dedupeByPosition([...readable, ...recovered]).sort((a, b) => comparePositions(a.node, b.node)),
    // Cutting can in principle parse a broken region cleanly; the whole-file errors then still count.
    syntaxProblems: sortByPosition(localised.length > 0 ? localised : findSyntaxProblems(root)),
  };
}

function sortByPosition(nodes: Node[]): Node[] {
  return [...nodes].sort(comparePositions);
}

function comparePositions(a: Node, b: Node): number {
  return a.startPosition.row - b.startPosition.row || a.startPosition.column - b.startPosition.column;
}

interface RowRange {
  start: number;
  end: number;
}

function readModuleStatements(
  root: Node,
  options: { flattenBrokenBlocks: boolean },
): { readable: PlacedStatement[]; brokenRows: RowRange[] } {
  const readable: PlacedStatement[] = [];
  const brokenRows: RowRange[] = [];
  for (const statement of namedChildrenOf(root)) {
    if (statement.type === 'comment') continue;
    if (statement.hasError && !(options.flattenBrokenBlocks && BLOCK_STATEMENTS.has(statement.type))) {
      if (hasReadableSignature(statement)) readable.push({ node: statement, placement: TOP_LEVEL });
      else brokenRows.push({ start: statement.startPosition.row, end: statement.endPosition.row });
      continue;
    }
    for (const inner of flattenBlocks(statement, TOP_LEVEL)) {
      if (!inner.node.hasError || hasReadableSignature(inner.node)) readable.push(inner);
    }
  }
  return { readable, brokenRows };
}

/** A function whose decorators and signature parsed cleanly can be read even if its body is broken. */
function hasReadableSignature(statement: Node): boolean {
  if (statement.type !== 'decorated_definition') return false;
  const definition = statement.childForFieldName('definition');
  if (definition?.type !== 'function_definition') return false;
  const decorators = namedChildrenOf(statement).filter((node) => node.type === 'decorator');
  const signature = ['name', 'parameters', 'return_type'].map((field) => definition.childForFieldName(field));
  return (
    signature[0] != null &&
    signature[1] != null &&
    [...decorators, ...signature].every((node) => node == null || !(node.hasError || node.isMissing))
  );
}

function mergeRowRanges(ranges: RowRange[]): RowRange[] {
  const merged: RowRange[] = [];
  for (const range of [...ranges].sort((a, b) => a.start - b.start)) {
    const last = merged[merged.length - 1];
    if (last !== undefined && range.start <= last.end + 1) last.end = Math.max(last.end, range.end);
    else merged.push({ ...range });
  }
  return merged;
}

/**
 * Cuts a row range where a line starts a new top-level statement: it begins in column 0 and is
 * not a comment, a closing bracket or a clause that continues the statement above. Decorators
 * stay with the definition below them.
 */
function splitIntoTopLevelChunks(lines: string[], range: RowRange): RowRange[] {
  const chunks: RowRange[] = [];
  let start = range.start;
  let previousStarter = '';
  for (let row = range.start; row <= range.end; row += 1) {
    const line = lines[row] ?? '';
    const startsStatement = /^[^\s#)\]}]/u.test(line) && !/^(else|elif|except|finally)\b/u.test(line);
    if (!startsStatement) continue;
    if (row > start && !previousStarter.startsWith('@')) {
      chunks.push({ start, end: row - 1 });
      start = row;
    }
    previousStarter = line;
  }
  chunks.push({ start, end: range.end });
  return chunks;
}

function dedupeByPosition(statements: PlacedStatement[]): PlacedStatement[] {
  const seen = new Set<string>();
  return statements.filter(({ node }) => {
    const key = `${node.startPosition.row}:${node.startPosition.column}:${node.type}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
