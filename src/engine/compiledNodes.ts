import type { Unsupported } from './unsupportedFeature.js';
import type { MachineArgs, StateNodeReading } from './xstateInternals.js';

export type Guard = (args: MachineArgs) => boolean;
/**
 * An `assign` as the compiled engine runs it: writes its update into the microstep's fresh context
 * (`target`, which `args.context` is too), so no partial object is made and merged per step.
 */
export type Assigner = (target: Record<string, unknown>, args: MachineArgs) => void;

/** A transition with its targets resolved, its guard and assigns read, its domain worked out. */
export interface Transition {
  source: Node;
  targets: readonly Node[];
  guard: Guard | undefined;
  assigns: readonly Assigner[];
  domain: Node | undefined;
}

/** A state node of the compiled machine. */
export interface Node {
  def: StateNodeReading;
  parent: Node | undefined;
  children: Node[];
  ancestors: Node[]; // parent first, root last
  path: Node[]; // this node, then its ancestors
  depth: number;
  order: number;
  on: Map<string, Transition[]>;
  always: Transition[];
  /** The child a compound node starts in, when its definition names one. */
  initial: Node | undefined;
}

/** The machine's state nodes: the root, and every node by id in document order. */
export interface NodeTree {
  readonly root: Node;
  readonly byId: ReadonlyMap<string, Node>;
}

/**
 * Builds the node tree of a machine's definition, refusing the kinds of state the compiled engine
 * does not run. Transitions are filled in afterwards (they name nodes anywhere in the tree).
 */
export function buildNodes(rootDef: StateNodeReading, unsupported: Unsupported): NodeTree {
  const byId = new Map<string, Node>();
  let order = 0;
  const build = (def: StateNodeReading, parent: Node | undefined): Node => {
    refuseUnsupportedState(def, parent, unsupported);
    const ancestors = parent ? [parent, ...parent.ancestors] : [];
    const node: Node = {
      def,
      parent,
      children: [],
      ancestors,
      path: [],
      depth: parent ? parent.depth + 1 : 0,
      order: order++,
      on: new Map(),
      always: [],
      initial: undefined,
    };
    node.path = [node, ...ancestors];
    byId.set(def.id, node);
    for (const child of def.children) node.children.push(build(child, node));
    return node;
  };
  return { root: build(rootDef, undefined), byId };
}

function refuseUnsupportedState(
  def: StateNodeReading,
  parent: Node | undefined,
  unsupported: Unsupported,
): void {
  if (def.type === 'history') throw unsupported('a history state', def.id);
  // Checked first: xstate implements delays and invokes with entry/exit actions of its own.
  if (def.delayedTransitions > 0) throw unsupported('delayed transitions', def.id);
  if (def.invokes > 0) throw unsupported('invoke', def.id);
  if (def.entryActions > 0 || def.exitActions > 0) throw unsupported('entry/exit actions', def.id);
  if (def.initialActions > 0) throw unsupported('actions on its initial transition', def.id);
  if (def.type === 'final' && parent !== undefined && parent.parent !== undefined) {
    throw unsupported('a nested final state', def.id);
  }
}
