import type { Node, Point, Range, Tree } from 'web-tree-sitter';
import type { PythonParser } from './python-parser.js';

/**
 * Parses Python source around a gap in tree-sitter-python, where it refuses what Python reads: a
 * line inside brackets indented less than its block ends the block (tree-sitter/tree-sitter-python#256),
 * so a second parse skips the line breaks inside brackets, as Python does.
 * A source that parses is left alone; a new reading is kept only if it has no errors.
 */
export function parsePython(parser: PythonParser, text: string): Tree {
  const tree = parser.parse(text);
  if (!tree.rootNode.hasError) return tree;
  const skipped = lineBreaksInsideBrackets(tokensOf(tree.rootNode), text);
  if (skipped.length === 0) return tree;
  const reparsed = parser.parse(text, includedRanges(text, skipped));
  if (reparsed.rootNode.hasError) {
    reparsed.delete();
    return tree;
  }
  tree.delete();
  return reparsed;
}

/** The leaves in source order, a string (with its replacement fields) as one. */
function tokensOf(root: Node): Node[] {
  const tokens: Node[] = [];
  const cursor = root.walk();
  for (;;) {
    const node = cursor.currentNode;
    const isToken = node.type === 'string' || node.childCount === 0;
    if (isToken && node.endIndex > node.startIndex) tokens.push(node);
    if (!isToken && cursor.gotoFirstChild()) continue;
    while (!cursor.gotoNextSibling()) {
      if (!cursor.gotoParent()) {
        cursor.delete();
        return tokens;
      }
    }
  }
}

const OPENING = new Set(['(', '[', '{']);
const CLOSING = new Set([')', ']', '}']);

interface Span {
  start: number;
  end: number;
}

/** Each line break between two tokens inside brackets, but the one that ends a comment. */
function lineBreaksInsideBrackets(tokens: Node[], text: string): Span[] {
  const breaks: Span[] = [];
  let depth = 0;
  tokens.forEach((token, index) => {
    if (OPENING.has(token.type)) depth += 1;
    else if (CLOSING.has(token.type) && depth > 0) depth -= 1;
    const next = tokens[index + 1];
    if (depth === 0 || next === undefined || token.type === 'comment') return;
    for (let at = text.indexOf('\n', token.endIndex); at !== -1 && at < next.startIndex; at = text.indexOf('\n', at + 1)) {
      breaks.push({ start: text[at - 1] === '\r' ? at - 1 : at, end: at + 1 });
    }
  });
  return breaks;
}

/** The text around the skipped spans, with tree-sitter's points (rows, and columns in UTF-16 code units). */
function includedRanges(text: string, skipped: Span[]): Range[] {
  let row = 0;
  let lineStart = 0;
  // The spans are in order: count the rows once, as the ranges go.
  const pointAt = (index: number): Point => {
    for (let at = text.indexOf('\n', lineStart); at !== -1 && at < index; at = text.indexOf('\n', at + 1)) {
      row += 1;
      lineStart = at + 1;
    }
    return { row, column: index - lineStart };
  };
  const ranges: Range[] = [];
  let from = 0;
  for (const { start, end } of [...skipped, { start: text.length, end: text.length }]) {
    if (start > from) ranges.push({ startIndex: from, endIndex: start, startPosition: pointAt(from), endPosition: pointAt(start) });
    from = end;
  }
  return ranges;
}
