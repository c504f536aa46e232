import type { Node } from 'web-tree-sitter';

/** A node's children; web-tree-sitter's types allow null entries, which a parsed tree never holds. */
export function childrenOf(node: Node): Node[] {
  return node.children.filter((child): child is Node => child !== null);
}

/** A node's named children, comments and line continuations included. */
export function namedChildrenOf(node: Node): Node[] {
  return node.namedChildren.filter((child): child is Node => child !== null);
}
