import type { Node, Point, Range, Tree } from 'web-tree-sitter';
import type { PythonParser } from './python-parser.js';

/**
 * Parses Python source around two gaps in tree-sitter-python, where it refuses what Python reads:
 * - a line inside brackets indented less than its block ends the block
 *   (tree-sitter/tree-sitter-python#256): a second parse skips the line breaks inside brackets, as Python does;
 * - in an annotation, a bare name's subscript is a generic type, which holds no slice and takes
 *   no subscript, call or attribute after it (`x: uint8_t[:]`, `x: a[b][c]`): such a name is read parenthesised,
 *   `(uint8_t)[:]`, which Python reads alike, and the text returned is the one with parentheses.
 * A source that parses is left alone; a new reading is kept only if it has no errors.
 */
export function parsePython(parser: PythonParser, text: string): { tree: Tree; text: string } {
  const tree = parser.parse(text);
  if (!tree.rootNode.hasError) return { tree, text };
  const tokens = tokensOf(tree.rootNode);
  const rejoined = reparseSkippingLineBreaks(parser, text, tokens);
  if (rejoined !== null) {
    tree.delete();
    return { tree: rejoined, text };
  }
  const parenthesised = parenthesiseSubscriptedNames(tokens, text);
  if (parenthesised !== text) {
    const renamed = parser.parse(parenthesised);
    const readable = renamed.rootNode.hasError ? reparseSkippingLineBreaks(parser, parenthesised, tokensOf(renamed.rootNode)) : renamed;
    if (readable !== renamed) renamed.delete();
    if (readable !== null) {
      tree.delete();
      return { tree: readable, text: parenthesised };
    }
  }
  return { tree, text };
}

/** `text` parsed again without the line breaks inside brackets (`tokens`: a first parse's); null if it still has errors. */
function reparseSkippingLineBreaks(parser: PythonParser, text: string, tokens: Node[]): Tree | null {
  const skipped = lineBreaksInsideBrackets(tokens, text);
  if (skipped.length === 0) return null;
  const tree = parser.parse(text, includedRanges(text, skipped));
  if (!tree.rootNode.hasError) return tree;
  tree.delete();
  return null;
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

/**
 * `text` with `(name)[` for each bare `name[` whose brackets hold a slice or are followed by a
 * subscript, a call or an attribute; not the name a `def`, a `class` or a `type` statement declares with its type parameters.
 */
function parenthesiseSubscriptedNames(tokens: Node[], text: string): string {
  const code = tokens.filter((token) => token.type !== 'comment' && token.type !== 'line_continuation');
  const names: Node[] = [];
  code.forEach((token, index) => {
    const previous = code[index - 1]?.text ?? '';
    if (token.type !== 'identifier' || code[index + 1]?.type !== '[' || ['.', 'def', 'class', 'type'].includes(previous)) return;
    let depth = 0;
    let hasSlice = false;
    for (let at = index + 1; at < code.length; at += 1) {
      const inner = code[at] as Node;
      if (OPENING.has(inner.type)) depth += 1;
      else if (CLOSING.has(inner.type)) depth -= 1;
      else if (inner.type === ':' && depth === 1) hasSlice = true;
      if (depth > 0) continue;
      if (hasSlice || ['[', '(', '.'].includes(code[at + 1]?.type ?? '')) names.push(token);
      return;
    }
  });
  let result = '';
  let from = 0;
  for (const name of names) {
    result += `${text.slice(from, name.startIndex)}(${name.text})`;
    from = name.endIndex;
  }
  return result + text.slice(from);
}
