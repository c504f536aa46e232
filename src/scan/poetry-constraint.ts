/**
 * Poetry version constraints (https://python-poetry.org/docs/dependency-specification/)
 * as PEP 440 specifiers. Poetry's `||` has no PEP 440 equivalent, so the result is a list
 * of alternatives: a version satisfies the constraint when it satisfies any of them.
 */
export function poetryToPep440(constraint: string): { alternatives: string[] } | { error: string } {
  const alternatives: string[] = [];
  for (const alternative of constraint.split('||')) {
    const parts = alternative
      .replace(/([<>=!~^]+)\s+/g, '$1') // ">= 1.2" is one clause
      .split(/,|\s+/)
      .map((part) => part.trim())
      .filter(Boolean);
    const specifiers: string[] = [];
    for (const part of parts) {
      const converted = convertOne(part);
      if (converted === null) return { error: `cannot read the Poetry constraint '${constraint}'` };
      if (converted !== '') specifiers.push(converted);
    }
    alternatives.push(specifiers.join(','));
  }
  return { alternatives };
}

const VERSION = /^\d+(\.\d+)*([a-z0-9.+-]*)$/i;

function convertOne(part: string): string | null {
  if (part === '*' || part === '') return '';
  if (part.startsWith('^')) return caret(part.slice(1).trim());
  if (part.startsWith('~') && !part.startsWith('~=')) return tilde(part.slice(1).trim());
  const operator = /^(===|==|!=|<=|>=|~=|<|>|=)\s*(.+)$/.exec(part);
  if (operator) {
    const [, op, version] = operator as unknown as [string, string, string];
    if (!VERSION.test(version) && !/^\d+(\.\d+)*\.\*$/.test(version)) return null;
    return `${op === '=' ? '==' : op}${version}`;
  }
  if (/^\d+(\.\d+)*\.\*$/.test(part)) return `==${part}`;
  return VERSION.test(part) ? `==${part}` : null;
}

function numericParts(version: string): number[] | null {
  if (!/^\d+(\.\d+)*$/.test(version)) return null;
  return version.split('.').map(Number);
}

/** ^1.2.3 allows changes that do not modify the left-most non-zero part. */
function caret(version: string): string | null {
  const parts = numericParts(version);
  if (!parts) return null;
  const firstNonZero = parts.findIndex((part) => part !== 0);
  const bumpAt = firstNonZero === -1 ? parts.length - 1 : firstNonZero;
  return `>=${version},<${bump(parts, bumpAt)}`;
}

/** ~1.2.3 allows patch changes; ~1 allows minor changes. */
function tilde(version: string): string | null {
  const parts = numericParts(version);
  if (!parts) return null;
  return `>=${version},<${bump(parts, parts.length === 1 ? 0 : 1)}`;
}

function bump(parts: number[], index: number): string {
  const upper = parts.slice(0, index + 1);
  upper[index] = (upper[index] ?? 0) + 1;
  return upper.join('.');
}
