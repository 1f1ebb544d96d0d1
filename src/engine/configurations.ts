import type { StateValue } from 'xstate';
import type { Node, Transition } from './compiledNodes.js';
import { StateValueIndex } from './stateValueIndex.js';

/** A set of active nodes, with its value; shared by every state in that configuration. */
export interface Configuration {
  readonly key: string;
  readonly nodes: readonly Node[]; // all active nodes except the root, in document order
  readonly atomic: readonly Node[];
  readonly value: StateValue;
  readonly done: boolean;
  /** Whether any active node has eventless transitions (most configurations have none). */
  readonly hasAlways: boolean;
  /** Memo: the configuration one targeted transition leads to from here. */
  readonly after: Map<Transition, Configuration>;
}

/** One machine's configurations, interned: equal sets of active nodes share one object (and one value). */
export class Configurations {
  private readonly interned = new Map<string, Configuration>();
  /**
   * Restored values' configurations, by value (a record is restored on every step of it); found by
   * walking the value, not by serialising it (restoring a stored floor looks up one per presence).
   */
  private readonly restored = new StateValueIndex<Configuration>();

  constructor(readonly root: Node) {}

  of(active: ReadonlySet<Node>): Configuration {
    const nodes = [...active].sort((a, b) => a.order - b.order);
    const key = nodes.map((n) => n.order).join(',');
    let c = this.interned.get(key);
    if (!c) {
      const root = this.root;
      c = {
        key,
        nodes,
        atomic: nodes.filter((n) => n.children.length === 0),
        value: valueFrom(root, active),
        done: nodes.some((n) => n.parent === root && n.def.type === 'final'),
        hasAlways: nodes.some((n) => n.always.length > 0),
        after: new Map(),
      };
      this.interned.set(key, c);
    }
    return c;
  }

  /** The configuration the machine starts in, before eventless transitions. */
  initial(): Configuration {
    const active = new Set<Node>();
    enterDefaults(this.root, active);
    active.delete(this.root);
    return this.of(active);
  }

  /** The configuration of a persisted value; throws when it names a state the machine lacks. */
  ofValue(value: StateValue): Configuration {
    const known = this.restored.get(value);
    if (known) return known;
    const active = new Set<Node>();
    activateValue(this.root, value, active);
    const config = this.of(active);
    // Bounded by the machine's configurations; a value that names no state threw above.
    this.restored.set(value, config);
    return config;
  }
}

/** Adds the node and the states it starts in (every region of a parallel node, else its initial child). */
export function enterDefaults(node: Node, into: Set<Node>): void {
  into.add(node);
  if (node.def.type === 'parallel') for (const c of node.children) enterDefaults(c, into);
  else if (node.children.length > 0) {
    const child = node.initial ?? node.children[0];
    if (child) enterDefaults(child, into);
  }
}

function valueFrom(node: Node, active: ReadonlySet<Node>): StateValue {
  const activeChildren = node.children.filter((c) => active.has(c));
  if (activeChildren.length === 1 && node.def.type !== 'parallel') {
    const [child] = activeChildren as [Node];
    return child.children.length === 0 ? child.def.key : { [child.def.key]: valueFrom(child, active) };
  }
  const value: Record<string, StateValue> = {};
  for (const child of activeChildren) {
    value[child.def.key] = child.children.length === 0 ? {} : valueFrom(child, active);
  }
  return value;
}

function activateValue(node: Node, v: StateValue, active: Set<Node>): void {
  const entries = typeof v === 'string' ? [[v, undefined] as const] : Object.entries(v);
  for (const [key, sub] of entries) {
    const child = node.children.find((c) => c.def.key === key);
    if (!child) throw new Error(`compileMachine: state "${key}" is not a child of "${node.def.id}"`);
    if (sub === undefined || (typeof sub === 'object' && Object.keys(sub).length === 0))
      enterDefaults(child, active);
    else {
      active.add(child);
      activateValue(child, sub as StateValue, active);
    }
  }
}
