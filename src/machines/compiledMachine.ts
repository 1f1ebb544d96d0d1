import type { AnyStateMachine, ContextFrom, EventFromLogic, InputFrom, StateValue } from 'xstate';

/** The part of a snapshot the channel floor reads: plain, shared, JSON-serialisable data. */
export interface MachineState<TContext> {
  readonly value: StateValue;
  readonly context: TContext;
  readonly status: 'active' | 'done';
}

/** A pure `(state, event) => state` function for one machine, and its start state. */
export interface CompiledMachine<TMachine extends AnyStateMachine> {
  readonly machine: TMachine;
  initial(input: InputFrom<TMachine>): CompiledState<TMachine>;
  step(state: CompiledState<TMachine>, event: EventFromLogic<TMachine>): CompiledState<TMachine>;
  /**
   * The state for a persisted value and context (a snapshot restored from a store). Throws when
   * the value names states the machine does not have (a foreign or stale snapshot).
   */
  restore(value: StateValue, context: ContextFrom<TMachine>): CompiledState<TMachine>;
}

/** A state produced by a {@link CompiledMachine}. */
export interface CompiledState<TMachine extends AnyStateMachine> extends MachineState<ContextFrom<TMachine>> {
  /** Active state nodes, shared between states with the same configuration. */
  readonly config: Configuration;
}

// ---- the definition shapes we read from xstate's StateNode objects ----
interface NodeDef {
  id: string;
  key: string;
  type: 'atomic' | 'compound' | 'parallel' | 'final' | 'history';
  parent?: NodeDef;
  machine: unknown;
  states: Record<string, NodeDef>;
  initial?: { target: readonly NodeDef[] };
  transitions: Map<string, readonly TransitionDef[]>;
  always?: readonly TransitionDef[];
  entry: readonly unknown[];
  exit: readonly unknown[];
  invoke: readonly unknown[];
  after?: readonly unknown[];
  order: number;
}
interface TransitionDef {
  target?: readonly NodeDef[];
  guard?: unknown;
  actions: readonly unknown[];
  reenter?: boolean;
  source: NodeDef;
}

type Args = { context: unknown; event: { type: string } };
type Guard = (args: Args) => boolean;
type Assigner = (args: Args) => Record<string, unknown>;

interface Transition {
  source: Node;
  targets: readonly Node[];
  guard: Guard | undefined;
  assigns: readonly Assigner[];
  domain: Node | undefined;
}

interface Node {
  def: NodeDef;
  parent: Node | undefined;
  children: Node[];
  ancestors: Node[]; // parent first, root last
  path: Node[]; // this node, then its ancestors
  depth: number;
  order: number;
  on: Map<string, Transition[]>;
  always: Transition[];
}

/** A set of active nodes, with its value; shared by every state in that configuration. */
interface Configuration {
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

const unsupported = (what: string, where: string) =>
  new Error(
    `compileMachine: ${what} at ${where} is not supported; step this machine with createMachineStepper instead.`,
  );

/**
 * Compiles an XState v5 machine into a pure step function over plain data, following the
 * machine's own definition: its states, transitions, guards and `assign` actions are read from
 * the machine, so the machine stays the single source of truth (for diagrams, model-based tests
 * and inspection) while the channel floor steps presences and threads without xstate's
 * per-transition bookkeeping (about 5x faster; see bench/coordination.ts).
 *
 * Supported: atomic, compound, parallel and top-level final states; event and eventless
 * transitions; named or inline guards; named or inline `assign` actions. Anything else (entry or
 * exit actions, invokes, delays, history, re-entering or self-targeting transitions, non-assign
 * actions) is refused when compiling. `test/compiledMachine.test.ts` checks on random event
 * sequences that every state, context and status equals what xstate itself computes.
 */
export function compileMachine<TMachine extends AnyStateMachine>(
  machine: TMachine,
): CompiledMachine<TMachine> {
  const impl = machine.implementations as {
    guards: Record<string, unknown>;
    actions: Record<string, unknown>;
  };
  const rootDef = machine.root as unknown as NodeDef;
  const byDef = new Map<NodeDef, Node>();
  let order = 0;

  const build = (def: NodeDef, parent: Node | undefined): Node => {
    if (def.type === 'history') throw unsupported('a history state', def.id);
    // Checked first: xstate implements delays and invokes with entry/exit actions of its own.
    if (def.after && def.after.length > 0) throw unsupported('delayed transitions', def.id);
    if (def.invoke.length > 0) throw unsupported('invoke', def.id);
    if (def.entry.length > 0 || def.exit.length > 0) throw unsupported('entry/exit actions', def.id);
    if (def.type === 'final' && parent !== undefined && parent.parent !== undefined) {
      throw unsupported('a nested final state', def.id);
    }
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
    };
    node.path = [node, ...ancestors];
    byDef.set(def, node);
    for (const child of Object.values(def.states)) node.children.push(build(child, node));
    return node;
  };
  const root = build(rootDef, undefined);

  const resolveGuard = (guard: unknown, where: string): Guard | undefined => {
    if (guard === undefined) return undefined;
    const name = typeof guard === 'string' ? guard : (guard as { type?: unknown }).type;
    const fn = typeof guard === 'function' ? guard : typeof name === 'string' ? impl.guards[name] : undefined;
    if (typeof fn !== 'function') throw unsupported(`guard ${String(name)}`, where);
    return fn as Guard;
  };
  const resolveAssign = (action: unknown, where: string): Assigner => {
    let a = action;
    if (typeof a === 'string') a = impl.actions[a];
    else if (a && typeof a === 'object' && 'type' in a && typeof a.type === 'string')
      a = impl.actions[a.type];
    const fn = a as { type?: string; assignment?: unknown } | undefined;
    if (fn?.type !== 'xstate.assign') throw unsupported(`action ${String(action)}`, where);
    const assignment = fn.assignment;
    if (typeof assignment === 'function') return assignment as Assigner;
    const entries = Object.entries(assignment as Record<string, unknown>);
    return (args) => {
      const partial: Record<string, unknown> = {};
      for (const [key, value] of entries) partial[key] = typeof value === 'function' ? value(args) : value;
      return partial;
    };
  };
  const lcca = (nodes: readonly Node[]): Node | undefined => {
    // The least common proper ancestor of the targets and the source: the transition's domain
    // (as xstate computes it for transitions that are not re-entering).
    const [first, ...rest] = nodes;
    if (!first) return undefined;
    for (const anc of first.ancestors) if (rest.every((n) => n.ancestors.includes(anc))) return anc;
    return root;
  };
  const compileTransition = (t: TransitionDef, source: Node): Transition => {
    const where = source.def.id;
    if (t.reenter) throw unsupported('a re-entering transition', where);
    const targets = (t.target ?? []).map((d) => {
      const n = byDef.get(d);
      if (!n) throw unsupported('a target outside the machine', where);
      if (n === source || n.ancestors.includes(source))
        throw unsupported('a transition into its own source', where);
      return n;
    });
    return {
      source,
      targets,
      guard: resolveGuard(t.guard, where),
      assigns: t.actions.map((a) => resolveAssign(a, where)),
      domain: targets.length > 0 ? lcca([...targets, source]) : undefined,
    };
  };
  for (const node of byDef.values()) {
    for (const [event, ts] of node.def.transitions) {
      node.on.set(
        event,
        ts.map((t) => compileTransition(t, node)),
      );
    }
    node.always = (node.def.always ?? []).map((t) => compileTransition(t, node));
  }

  // Configurations are interned: equal sets of active nodes share one object (and one value).
  const configurations = new Map<string, Configuration>();
  const configurationOf = (active: ReadonlySet<Node>): Configuration => {
    const nodes = [...active].sort((a, b) => a.order - b.order);
    const key = nodes.map((n) => n.order).join(',');
    let c = configurations.get(key);
    if (!c) {
      const atomic = nodes.filter((n) => n.children.length === 0);
      c = {
        key,
        nodes,
        atomic,
        value: valueFrom(root, active),
        done: nodes.some((n) => n.parent === root && n.def.type === 'final'),
        hasAlways: nodes.some((n) => n.always.length > 0),
        after: new Map(),
      };
      configurations.set(key, c);
    }
    return c;
  };
  const valueFrom = (node: Node, active: ReadonlySet<Node>): StateValue => {
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
  };

  const enterDefaults = (node: Node, into: Set<Node>) => {
    into.add(node);
    if (node.def.type === 'parallel') for (const c of node.children) enterDefaults(c, into);
    else if (node.children.length > 0) {
      const initial = node.def.initial?.target[0];
      const child = initial ? byDef.get(initial) : node.children[0];
      if (child) enterDefaults(child, into);
    }
  };

  // Which transitions are enabled, and with no two exiting the same states (document order wins).
  const select = (config: Configuration, eventType: string | null, args: Args) => {
    const chosen: Transition[] = [];
    for (const atomic of config.atomic) {
      found: for (const n of atomic.path) {
        const ts = eventType === null ? n.always : n.on.get(eventType);
        if (!ts || ts.length === 0) continue;
        for (const t of ts) {
          if (t.guard && !t.guard(args)) continue;
          if (!chosen.includes(t)) chosen.push(t);
          break found;
        }
      }
    }
    if (chosen.length < 2) return chosen;
    const exits = chosen.map((t) => exitSet(t, config));
    return chosen.filter((_, i) => {
      for (let j = 0; j < i; j++) {
        for (const n of exits[i] ?? []) if (exits[j]?.has(n)) return false;
      }
      return true;
    });
  };
  const exitSet = (t: Transition, config: Configuration): Set<Node> => {
    const domain = t.domain;
    if (!domain) return new Set();
    return new Set(config.nodes.filter((n) => n.ancestors.includes(domain)));
  };

  const microstep = (
    transitions: readonly Transition[],
    config: Configuration,
    context: unknown,
    event: { type: string },
  ): { config: Configuration; context: unknown } => {
    let ctx = context;
    let copied = false;
    for (const t of transitions) {
      for (const assign of t.assigns) {
        // One fresh context per microstep, updated in place by each assign in turn: each sees the
        // previous one's result, as in xstate, and the caller's context is never touched.
        const partial = assign({ context: ctx, event });
        if (!copied) {
          ctx = { ...(ctx as object) };
          copied = true;
        }
        Object.assign(ctx as object, partial);
      }
    }
    if (!transitions.some((t) => t.targets.length > 0)) return { config, context: ctx };
    const only = transitions.length === 1 ? transitions[0] : undefined;
    const known = only ? config.after.get(only) : undefined;
    if (known) return { config: known, context: ctx };
    const active = new Set(config.nodes);
    for (const t of transitions) {
      if (!t.domain) continue;
      for (const n of exitSet(t, config)) active.delete(n);
    }
    for (const t of transitions) {
      const domain = t.domain;
      if (!domain) continue;
      for (const target of t.targets) {
        for (const anc of target.ancestors) {
          if (anc === domain || anc.depth < domain.depth) break;
          active.add(anc);
        }
        enterDefaults(target, active);
      }
      // Regions of a parallel ancestor that nothing entered start in their defaults.
      for (const n of [...active]) {
        if (n.def.type === 'parallel')
          for (const region of n.children) if (!active.has(region)) enterDefaults(region, active);
      }
    }
    const next = configurationOf(active);
    if (only) config.after.set(only, next);
    return { config: next, context: ctx };
  };

  const settle = (config: Configuration, context: unknown, event: { type: string }) => {
    let c = config;
    let ctx = context;
    for (let i = 0; i < 100 && !c.done && c.hasAlways; i++) {
      const ts = select(c, null, { context: ctx, event });
      if (ts.length === 0) break;
      ({ config: c, context: ctx } = microstep(ts, c, ctx, event));
    }
    return { config: c, context: ctx };
  };

  const toState = (config: Configuration, context: unknown): CompiledState<TMachine> => ({
    value: config.value,
    context: context as ContextFrom<TMachine>,
    status: config.done ? 'done' : 'active',
    config,
  });

  const contextFactory = (machine.config as { context?: unknown }).context;
  return {
    machine,
    initial(input) {
      const event = { type: 'xstate.init', input };
      const context =
        typeof contextFactory === 'function'
          ? (contextFactory as (a: { input: unknown }) => unknown)({ input })
          : contextFactory;
      const active = new Set<Node>();
      enterDefaults(root, active);
      active.delete(root);
      const settled = settle(configurationOf(active), context, event);
      return toState(settled.config, settled.context);
    },
    restore(value, context) {
      const active = new Set<Node>();
      const walk = (node: Node, v: StateValue) => {
        const entries = typeof v === 'string' ? [[v, undefined] as const] : Object.entries(v);
        for (const [key, sub] of entries) {
          const child = node.children.find((c) => c.def.key === key);
          if (!child) throw new Error(`compileMachine: state "${key}" is not a child of "${node.def.id}"`);
          if (sub === undefined || (typeof sub === 'object' && Object.keys(sub).length === 0))
            enterDefaults(child, active);
          else {
            active.add(child);
            walk(child, sub as StateValue);
          }
        }
      };
      walk(root, value);
      return toState(configurationOf(active), context);
    },
    step(state, event) {
      if (state.status === 'done') return state;
      const config = state.config;
      const args = { context: state.context, event: event as { type: string } };
      const ts = select(config, event.type, args);
      if (ts.length === 0) return state;
      const next = microstep(ts, config, state.context, event as { type: string });
      const settled = settle(next.config, next.context, event as { type: string });
      return toState(settled.config, settled.context);
    },
  };
}
