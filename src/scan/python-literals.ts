import type { Node } from 'web-tree-sitter';
import { childrenOf, namedChildrenOf } from './syntax-nodes.js';

/**
 * Python literals and call arguments, read from the tree without running anything; and values
 * and source quoted back as Python writes them, for messages.
 */

/** A Python literal read statically, or the expression's source text when it is not a literal. */
export type StaticValue =
  | string
  | number
  | boolean
  | null
  | StaticValue[]
  | { [key: string]: StaticValue }
  | { expression: string };

export interface CallArguments {
  positional: Node[];
  keywords: Map<string, Node>;
  /** `*args` and `**kwargs` arguments, whose contents are unknown statically. */
  splats: Node[];
}

export function readCallArguments(call: Node): CallArguments {
  const result: CallArguments = { positional: [], keywords: new Map(), splats: [] };
  const argumentList = call.childForFieldName('arguments');
  if (argumentList?.type !== 'argument_list') return result;
  for (const argument of namedChildrenOf(argumentList)) {
    if (argument.type === 'comment') continue;
    if (argument.type === 'keyword_argument') {
      const name = argument.childForFieldName('name')?.text;
      const value = argument.childForFieldName('value');
      if (name !== undefined && value !== null) result.keywords.set(name, value);
    } else if (argument.type === 'list_splat' || argument.type === 'dictionary_splat') {
      result.splats.push(argument);
    } else {
      result.positional.push(argument);
    }
  }
  return result;
}

export function readStaticValue(node: Node): StaticValue {
  const expression = { expression: sourceText(node) };
  switch (node.type) {
    case 'string':
    case 'concatenated_string':
      return readStringLiteral(node) ?? expression;
    case 'integer':
    case 'float':
      return readNumber(node.text) ?? expression;
    case 'true':
      return true;
    case 'false':
      return false;
    case 'none':
      return null;
    case 'unary_operator': {
      const operand = node.childForFieldName('argument');
      const sign = node.childForFieldName('operator')?.type;
      const value = operand === null ? null : readStaticValue(operand);
      if (typeof value === 'number' && (sign === '-' || sign === '+')) return sign === '-' ? -value : value;
      return expression;
    }
    case 'parenthesized_expression': {
      const inner = namedChildrenOf(node).filter((child) => child.type !== 'comment');
      return inner.length === 1 && inner[0] !== undefined ? readStaticValue(inner[0]) : expression;
    }
    case 'list':
    case 'tuple':
    case 'set': {
      const items = namedChildrenOf(node).filter((child) => child.type !== 'comment');
      if (items.some((item) => item.type === 'list_splat')) return expression;
      return items.map(readStaticValue);
    }
    case 'dictionary': {
      const entries: { [key: string]: StaticValue } = {};
      for (const entry of namedChildrenOf(node).filter((child) => child.type !== 'comment')) {
        const key = entry.type === 'pair' ? entry.childForFieldName('key') : null;
        const value = entry.type === 'pair' ? entry.childForFieldName('value') : null;
        const keyText = key === null ? null : readStringLiteral(key);
        if (keyText === null || value === null) return expression;
        entries[keyText] = readStaticValue(value);
      }
      return entries;
    }
    default:
      return expression;
  }
}

const RADIX_PREFIXES: ReadonlyMap<string, number> = new Map([
  ['0x', 16],
  ['0o', 8],
  ['0b', 2],
]);

/** Python 3 int and float literals (PEP 515 underscores, 0x/0o/0b); not complex, not beyond 2^53. */
function readNumber(literal: string): number | null {
  const digits = literal.replaceAll('_', '').toLowerCase();
  if (digits.endsWith('j')) return null;
  const radix = RADIX_PREFIXES.get(digits.slice(0, 2));
  const value = radix === undefined ? Number(digits) : Number.parseInt(digits.slice(2), radix);
  const isExact = radix === undefined && /[.e]/u.test(digits) ? Number.isFinite(value) : Number.isSafeInteger(value);
  return isExact ? value : null;
}

/** The value of a str literal, implicit concatenation included; null for bytes and f-strings with fields. */
export function readStringLiteral(node: Node): string | null {
  if (node.type === 'concatenated_string') {
    const parts = namedChildrenOf(node)
      .filter((child) => child.type !== 'comment')
      .map(readStringLiteral);
    return parts.every((part): part is string => part !== null) ? parts.join('') : null;
  }
  if (node.type !== 'string') return null;
  const opening = childrenOf(node).find((child) => child.type === 'string_start')?.text ?? '';
  const closing = childrenOf(node).find((child) => child.type === 'string_end')?.text ?? '';
  const prefix = opening.replace(/["']+$/u, '').toLowerCase();
  if (/[bt]/u.test(prefix)) return null;
  const hasFields = node.descendantsOfType('interpolation').length > 0;
  if (prefix.includes('f') && hasFields) return null;
  // Python reads any line ending inside a literal as "\n".
  let value = node.text.slice(opening.length, node.text.length - closing.length).replace(/\r\n?/gu, '\n');
  if (!prefix.includes('r')) value = decodeEscapes(value);
  if (prefix.includes('f')) value = value.replaceAll('{{', '{').replaceAll('}}', '}');
  return value;
}

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  '\n': '', // a backslash at the end of a line continues the literal
  '\\': '\\',
  "'": "'",
  '"': '"',
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
};

/** Python's string escapes; an unknown escape such as `\d` stays as written, as in Python. */
function decodeEscapes(body: string): string {
  return body.replace(
    /\\(?:([\n\\'"abfnrtv])|([0-7]{1,3})|x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8}))/gu,
    (escape, simple?: string, octal?: string, byte?: string, unit?: string, wide?: string) => {
      if (simple !== undefined) return SIMPLE_ESCAPES[simple] ?? escape;
      const code = Number.parseInt(octal ?? byte ?? unit ?? wide ?? '', octal !== undefined ? 8 : 16);
      return code <= 0x10ffff ? String.fromCodePoint(code) : escape;
    },
  );
}

/**
 * An expression's source as written, on one line: comments dropped and line breaks inside
 * brackets folded, so a multi-line annotation reads like `Literal["a", "b"]`.
 */
export function sourceText(node: Node): string {
  const comments = node.descendantsOfType('comment').filter((comment): comment is Node => comment !== null);
  let text = node.text;
  for (const comment of comments.reverse()) {
    const start = comment.startIndex - node.startIndex;
    text = text.slice(0, start) + text.slice(start + comment.text.length);
  }
  if (!/[\r\n]/u.test(text)) return text;
  return text
    .replace(/\s*\\?\r?\n\s*/gu, ' ')
    .replace(/([([{]) /gu, '$1')
    .replace(/ ([)\]},])/gu, '$1')
    .trim();
}

/** A node's first line, shortened, to quote in a message. */
export function firstLineOf(text: string): string {
  const line = (text.split('\n')[0] ?? '').trim();
  return line.length > 40 ? `${line.slice(0, 40)}...` : line;
}

/** A value as Python writes it: `'serverless'`, `None`, `True`; an expression as written. */
export function pythonRepr(value: StaticValue): string {
  if (typeof value === 'string') return `'${value.replace(/\\/gu, '\\\\').replace(/'/gu, "\\'")}'`;
  if (value === null) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'object' && 'expression' in value) return String(value.expression);
  return JSON.stringify(value);
}
