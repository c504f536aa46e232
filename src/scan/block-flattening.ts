import type { Node } from 'web-tree-sitter';
import { readStringLiteral } from './python-literals.js';
import { placementInside, type Placement, type PlacedStatement } from './statement-placement.js';
import { childrenOf, namedChildrenOf } from './syntax-nodes.js';

/**
 * The statements the import runs inside a module-level `if`, `try` or `with`, lifted to the
 * module's level with where they sit among the arms, so that the rest of the scan reads them
 * as it reads top-level ones; an `if __name__ == "__main__":` body, which a worker never runs,
 * is left out.
 */

/** Statements whose blocks run on import, so what they define exists when the service loads. */
export const BLOCK_STATEMENTS = new Set(['if_statement', 'try_statement', 'with_statement']);
const BLOCK_CLAUSES = new Set([
  'elif_clause',
  'else_clause',
  'except_clause',
  'except_group_clause',
  'finally_clause',
]);

/** The statements of an `if`, `try` or `with` block, each placed among the arms around it (statement-placement.ts). */
export function flattenBlocks(statement: Node, placement: Placement): PlacedStatement[] {
  if (!BLOCK_STATEMENTS.has(statement.type)) return [{ node: statement, placement }];
  const blocks: Array<{ block: Node; placement: Placement }> = [];
  const add = (holder: Node, where: Placement): void => {
    for (const block of namedChildrenOf(holder).filter((node) => node.type === 'block')) blocks.push({ block, placement: where });
  };
  const clauses = namedChildrenOf(statement).filter((child) => child.type === 'block' || BLOCK_CLAUSES.has(child.type));
  if (statement.type === 'if_statement') {
    // A worker imports the file under another name than `__main__`: a guard decides its arm before it runs.
    const guard = mainGuardSense(statement);
    if (guard === 'runs-body') {
      add(statement, placement);
    } else {
      const arms = guard === 'skips-body' ? clauses.filter((clause) => clause.type !== 'block') : clauses;
      const isOnlyElse = arms.length === 1 && arms[0]?.type === 'else_clause';
      arms.forEach((clause, arm) => add(clause.type === 'block' ? statement : clause, isOnlyElse ? placement : placementInside(placement, statement, { arm })));
    }
  } else if (statement.type === 'try_statement') {
    // Handlers that re-raise let no exception go by: the body then runs whenever the import gets past it.
    const handlers = clauses.filter((clause) => clause.type === 'except_clause' || clause.type === 'except_group_clause');
    const swallows = handlers.some((handler) => lastStatementOf(handler)?.type !== 'raise_statement');
    let handler = 0;
    for (const clause of clauses) {
      if (clause.type === 'block') add(statement, placementInside(placement, statement, { guarded: swallows }));
      else if (handlers.includes(clause)) add(clause, placementInside(placement, statement, { arm: (handler += 1) }));
      else if (clause.type === 'else_clause') add(clause, placementInside(placement, statement, { guarded: handlers.length > 0 }));
      else add(clause, placement);
    }
  } else {
    add(statement, placement);
  }
  return blocks.flatMap(({ block, placement: inner }) =>
    namedChildrenOf(block)
      .filter((node) => !node.isExtra)
      .flatMap((node) => flattenBlocks(node, inner)),
  );
}

function lastStatementOf(clause: Node): Node | undefined {
  const block = namedChildrenOf(clause).find((node) => node.type === 'block');
  return block === undefined ? undefined : namedChildrenOf(block).filter((node) => !node.isExtra).at(-1);
}

/**
 * `if __name__ == "__main__":` runs its body only when the file is executed as a script,
 * never when svc imports it ('skips-body'); `!=` the other way round ('runs-body').
 */
export function mainGuardSense(statement: Node): 'skips-body' | 'runs-body' | null {
  const condition = statement.childForFieldName('condition');
  if (statement.type !== 'if_statement' || condition?.type !== 'comparison_operator') return null;
  const operands = namedChildrenOf(condition);
  const operator = childrenOf(condition).find((child) => !child.isNamed)?.type;
  const isGuard =
    operands.length === 2 &&
    operands.some((operand) => operand.type === 'identifier' && operand.text === '__name__') &&
    operands.some((operand) => readStringLiteral(operand) === '__main__');
  if (!isGuard) return null;
  return operator === '==' ? 'skips-body' : operator === '!=' ? 'runs-body' : null;
}
