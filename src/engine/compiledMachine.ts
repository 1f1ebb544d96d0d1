import type { AnyStateMachine, ContextFrom, EventFromLogic, InputFrom, StateValue } from 'xstate';
import { runtimeErrorCodes } from '../ports/errorCodes.js';
import { TroupeError } from '../ports/troupeError.js';
import { StateValueIndex } from './stateValueIndex.js';
import {
  type ActionReading,
  type GuardReading,
  type MachineArgs,
  readMachine,
  type StateNodeReading,
  type TransitionReading,
} from './xstateInternals.js';

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

type Guard = (args: MachineArgs) => boolean;
type Assigner = (args: MachineArgs) => Record<string, unknown>;

interface Transition {
  source: Node;
  targets: readonly Node[];
  guard: Guard | undefined;
  assigns: readonly Assigner[];
  domain: Node | undefined;
}

interface Node {
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

/** How to step a machine the compiled engine refuses. */
const STEPPER_ADVICE =
  "step this machine with createMachineStepper instead (a channel floor: engine: 'xstate')";

/**
 * Compiles an XState v5 machine into a pure step function over plain data, following the
 * machine's own definition: its states, transitions, guards and `assign` actions are read from
 * the machine, so the machine stays the single source of truth (for diagrams, model-based tests
 * and inspection) while the channel floor steps presences and threads without xstate's
 * per-transition bookkeeping (about 5x faster; see bench/coordination.ts).
 *
 * Supported: atomic, compound, parallel and top-level final states; event and eventless
 * transitions on exact event types; named or inline guards that are plain predicates; named or
 * inline `assign` actions. Refused when compiling, with a `TROUPE_MACHINE_UNSUPPORTED` error that
 * names the machine, the state and the transition: entry or exit actions, invokes, delays,
 * history, nested final states, wildcard event descriptors, re-entering or self-targeting
 * transitions, actions on an `initial` transition, non-assign actions, guards or actions given
 * `params`, and the higher-order guards `not`, `and`, `or` and `stateIn`. Reading the definition
 * checks the installed xstate first (`TROUPE_XSTATE_UNSUPPORTED`; see `xstateInternals.ts`).
 * `test/engine/compiledMachine.test.ts` checks on random event sequences that every state, context and
 * status equals what xstate itself computes.
 */
export function compileMachine<TMachine extends AnyStateMachine>(
  machine: TMachine,
): CompiledMachine<TMachine> {
  const reading = readMachine(machine);
  const unsupported = (what: string, state: string, eventType?: string | null, advice = STEPPER_ADVICE) => {
    const on =
      eventType === undefined ? '' : eventType === null ? ', eventless transition' : `, on "${eventType}"`;
    return new TroupeError(
      runtimeErrorCodes.machineUnsupported,
      `compileMachine: machine "${reading.id}" uses ${what} at state "${state}"${on}, which the compiled ` +
        `engine does not run; ${advice}.`,
      { details: { machine: reading.id, state, ...(eventType === undefined ? {} : { event: eventType }) } },
    );
  };
  const byId = new Map<string, Node>();
  let order = 0;

  const build = (def: StateNodeReading, parent: Node | undefined): Node => {
    if (def.type === 'history') throw unsupported('a history state', def.id);
    // Checked first: xstate implements delays and invokes with entry/exit actions of its own.
    if (def.delayedTransitions > 0) throw unsupported('delayed transitions', def.id);
    if (def.invokes > 0) throw unsupported('invoke', def.id);
    if (def.entryActions > 0 || def.exitActions > 0) throw unsupported('entry/exit actions', def.id);
    if (def.initialActions > 0) throw unsupported('actions on its initial transition', def.id);
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
      initial: undefined,
    };
    node.path = [node, ...ancestors];
    byId.set(def.id, node);
    for (const child of def.children) node.children.push(build(child, node));
    return node;
  };
  const root = build(reading.root, undefined);

  const compileGuard = (guard: GuardReading | undefined, t: TransitionReading, where: string) => {
    if (guard === undefined) return undefined;
    const named = guard.name === undefined ? 'an inline guard' : `guard "${guard.name}"`;
    switch (guard.kind) {
      case 'combinator':
        throw unsupported(
          `${named} made with ${guard.combinator}()`,
          where,
          t.eventType,
          guard.combinator === 'stateIn'
            ? 'test the context or event instead of the active state (or split the transition by state), or ' +
                STEPPER_ADVICE
            : `write it as one named guard that combines the checks in code (e.g. isReady: (args) => !isBusy(args)), or ${STEPPER_ADVICE}`,
        );
      case 'unimplemented':
        throw unsupported(`guard "${guard.name}", which no function implements`, where, t.eventType);
      case 'predicate':
        if (guard.hasParams) {
          throw unsupported(
            `${named} with params`,
            where,
            t.eventType,
            `read the values from the context or the event inside the guard (or write one guard per value), or ${STEPPER_ADVICE}`,
          );
        }
        return guard.test;
    }
  };
  const compileAction = (action: ActionReading, t: TransitionReading, where: string): Assigner => {
    const named = action.name === undefined ? 'an inline action' : `action "${action.name}"`;
    if (action.kind === 'other') {
      throw unsupported(
        `${named}${action.type === undefined ? '' : ` (${action.type})`} that is not an assign`,
        where,
        t.eventType,
        `keep the machine to assign actions and perform effects outside it, or ${STEPPER_ADVICE}`,
      );
    }
    if (action.hasParams) {
      throw unsupported(
        `${named} (an assign) with params`,
        where,
        t.eventType,
        `read the values from the context or the event inside the assign, or ${STEPPER_ADVICE}`,
      );
    }
    return action.update;
  };
  const lcca = (nodes: readonly Node[]): Node | undefined => {
    // The least common proper ancestor of the targets and the source: the transition's domain
    // (as xstate computes it for transitions that are not re-entering).
    const [first, ...rest] = nodes;
    if (!first) return undefined;
    for (const anc of first.ancestors) if (rest.every((n) => n.ancestors.includes(anc))) return anc;
    return root;
  };
  const compileTransition = (t: TransitionReading, source: Node): Transition => {
    const where = source.def.id;
    if (t.reenter) throw unsupported('a re-entering transition', where, t.eventType);
    const targets = t.targetIds.map((id) => {
      const n = byId.get(id);
      if (!n) throw unsupported('a target outside the machine', where, t.eventType);
      if (n === source || n.ancestors.includes(source))
        throw unsupported('a transition into its own source', where, t.eventType);
      return n;
    });
    return {
      source,
      targets,
      guard: compileGuard(t.guard, t, where),
      assigns: t.actions.map((a) => compileAction(a, t, where)),
      domain: targets.length > 0 ? lcca([...targets, source]) : undefined,
    };
  };
  for (const node of byId.values()) {
    for (const [event, ts] of node.def.on) {
      // xstate matches "*" and "prefix.*" against every event; the compiled engine looks events up
      // by exact type.
      if (event === '*' || event.endsWith('.*')) {
        throw unsupported(
          'a wildcard event descriptor',
          node.def.id,
          event,
          `list the event types, or ${STEPPER_ADVICE}`,
        );
      }
      node.on.set(
        event,
        ts.map((t) => compileTransition(t, node)),
      );
    }
    node.always = node.def.always.map((t) => compileTransition(t, node));
    const initialId = node.def.initialId;
    node.initial = initialId === undefined ? undefined : byId.get(initialId);
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
      const child = node.initial ?? node.children[0];
      if (child) enterDefaults(child, into);
    }
  };

  // Which transitions are enabled, and with no two exiting the same states (document order wins).
  const select = (config: Configuration, eventType: string | null, args: MachineArgs) => {
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

  const contextFactory = reading.context;
  const restored = new StateValueIndex<Configuration>();
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
      // A record is restored on every step of it; the configuration of a value is worked out once.
      const known = restored.get(value);
      if (known) return toState(known, context);
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
      const config = configurationOf(active);
      // Bounded by the machine's configurations; a value that names no state threw above.
      restored.set(value, config);
      return toState(config, context);
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
