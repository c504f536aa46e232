import type { Node } from 'web-tree-sitter';

/**
 * Where a module-level statement sits among the `if` and `try` blocks around it, which
 * decides whether it runs when the service is imported: one arm of an `if` runs, or none; a
 * `try` body runs unless something in it raises, and then at most one of its handlers.
 */
export interface Placement {
  /** The arms of `if` statements and the `except` handlers the statement is in, outermost first. */
  arms: Arm[];
  /**
   * The `try` statements whose body (or `else`) the statement is in, when a handler of theirs
   * may swallow an exception: the import may then go on without the statement having run.
   */
  guards: number[];
}

export interface Arm {
  /** Start of the `if` or `try` statement. */
  owner: number;
  /** 0 for the `if`, 1.. for each `elif` and the `else`; 1.. for each `except` of a `try`. */
  index: number;
}

export interface PlacedStatement {
  node: Node;
  placement: Placement;
}

export const TOP_LEVEL: Placement = { arms: [], guards: [] };

/** Runs on every import that gets that far, and an error it raises is not caught. */
export function isCertain(placement: Placement): boolean {
  return placement.arms.length === 0 && placement.guards.length === 0;
}

/** Never both run: different arms of one `if`, or different handlers of one `try`. */
export function areExclusive(a: Placement, b: Placement): boolean {
  for (let depth = 0; depth < Math.min(a.arms.length, b.arms.length); depth += 1) {
    const [left, right] = [a.arms[depth] as Arm, b.arms[depth] as Arm];
    if (left.owner !== right.owner) return false;
    if (left.index !== right.index) return true;
  }
  return false;
}

/** Whenever `later` runs, `earlier` (which comes first in the file) has run before it: it sits in the same arms and guarded blocks, or fewer. */
export function runsBefore(earlier: Placement, later: Placement): boolean {
  return earlier.arms.length <= later.arms.length &&
    earlier.arms.every((arm, depth) => arm.owner === later.arms[depth]?.owner && arm.index === later.arms[depth]?.index) &&
    earlier.guards.every((owner, depth) => later.guards[depth] === owner);
}

/** The placement of a block's statements: `arm` when the block is one arm of `owner`, `guarded` when `owner` may swallow its exceptions. */
export function placementInside(outer: Placement, owner: Node, block: { arm?: number; guarded?: boolean }): Placement {
  return {
    arms: block.arm === undefined ? outer.arms : [...outer.arms, { owner: owner.startIndex, index: block.arm }],
    guards: block.guarded === true ? [...outer.guards, owner.startIndex] : outer.guards,
  };
}
