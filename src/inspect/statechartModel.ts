import type { AnyStateMachine } from 'xstate';
import {
  type ActionReading,
  type GuardReading,
  readMachine,
  type StateNodeReading,
  type TransitionReading,
} from '../engine/xstateInternals.js';

/** The version of {@link StatechartJson}; it changes only when a field changes meaning or goes away. */
export const STATECHART_JSON_VERSION = 1;

/** One state of a chart, with its children in document order. */
export interface StatechartState {
  /** The state's xstate id (`machine.parent.child`, or the id the author gave). */
  id: string;
  /** Its key under its parent (the machine's id for the root). */
  key: string;
  type: 'atomic' | 'compound' | 'parallel' | 'final' | 'history';
  /** The id of the child a compound state starts in; null for other states. */
  initial: string | null;
  /** xstate's `description`, or null. */
  description: string | null;
  /** Names of its entry and exit actions (see {@link StatechartTransition.actions} for naming). */
  entry: string[];
  exit: string[];
  /** The actors it invokes while active: the invoke's id and the logic's name (its id when inline). */
  invoke: { id: string; src: string }[];
  /** For a history state: shallow or deep; null otherwise. */
  history: 'shallow' | 'deep' | null;
  states: StatechartState[];
}

/** One transition, from a state, on an event, after a delay or eventless. */
export interface StatechartTransition {
  /** The id of the state it leaves from. */
  source: string;
  /** `event` for `on` (and done/error events), `always` for eventless, `after` for delayed. */
  kind: 'event' | 'always' | 'after';
  /** The event type (for `after`: the event xstate raises, `xstate.after.<delay>.<state id>`); null for `always`. */
  event: string | null;
  /** Ids of the target states; empty for a targetless transition (it stays, running its actions). */
  targets: string[];
  /** The guard's name, a higher-order guard's name (`not`, `and`…), or `guard` for an inline one. */
  guard: string | null;
  /** Whether it is the unguarded fallback after guarded transitions of the same trigger (drawn `[else]`). */
  fallback: boolean;
  /** Action names: the name a named action is referred to by, a built-in's (`assign`, `raise`…) or `action` for an inline function. */
  actions: string[];
  /** For `after`: the delay in ms (null when it names a delay that is a function) and its name, if named. */
  delay: { ms: number | null; name: string | null } | null;
  /** What every drawing writes on the arrow: `event [guard] / action, action`. */
  label: string;
}

/**
 * A machine's statechart as plain data: what `troupe charts --format json` writes, and what every
 * other format (Mermaid, DOT, SCXML, SVG) is drawn from, so they cannot disagree.
 */
export interface StatechartJson {
  format: 'troupe-statechart';
  version: typeof STATECHART_JSON_VERSION;
  /** The machine's id. */
  id: string;
  /** The machine's root state (its children are the top-level states). */
  root: StatechartState;
  /** Every transition of every state, in document order. */
  transitions: StatechartTransition[];
}

const guardName = (g: GuardReading | undefined): string | null => {
  if (g === undefined) return null;
  if (g.name !== undefined) return g.name;
  if (g.kind === 'combinator') return g.combinator;
  return 'guard';
};

// An inline arrow function takes its property's name (`entry: () => …` is called "entry").
const ANONYMOUS = new Set(['', 'actions', 'entry', 'exit']);

const actionName = (a: ActionReading): string => {
  if (a.name !== undefined) return a.name;
  if (a.kind === 'assign') return 'assign';
  if (a.type !== undefined) return a.type.replace(/^xstate\./, '');
  return a.functionName !== undefined && !ANONYMOUS.has(a.functionName) ? a.functionName : 'action';
};

/** `45s`, `2min`, `1h` or `250ms`: the delay as a person reads it. */
export function delayText(ms: number): string {
  if (ms >= 3_600_000 && ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000}min`;
  if (ms >= 1000 && ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

function readDelay(
  delay: number | string,
  delays: Readonly<Record<string, unknown>>,
): NonNullable<StatechartTransition['delay']> {
  if (typeof delay === 'number') return { ms: delay, name: null };
  const implemented = delays[delay];
  return { ms: typeof implemented === 'number' ? implemented : null, name: delay };
}

function labelOf(t: Omit<StatechartTransition, 'label'>): string {
  const trigger =
    t.kind === 'always'
      ? 'always'
      : t.kind === 'after' && t.delay !== null
        ? `after ${t.delay.ms !== null ? delayText(t.delay.ms) : t.delay.name}`
        : (t.event ?? '');
  const guard = t.guard !== null ? ` [${t.guard}]` : t.fallback ? ' [else]' : '';
  const actions = t.actions.length > 0 ? ` / ${t.actions.join(', ')}` : '';
  return `${trigger}${guard}${actions}`;
}

function readState(node: StateNodeReading): StatechartState {
  return {
    id: node.id,
    key: node.key,
    type: node.type,
    initial: node.initialId ?? null,
    description: node.description ?? null,
    entry: node.entry.map(actionName),
    exit: node.exit.map(actionName),
    invoke: node.invoked.map((inv) => ({ id: inv.id, src: inv.src ?? inv.id })),
    history: node.history ?? null,
    states: node.children.map(readState),
  };
}

function transitionsOf(
  node: StateNodeReading,
  delays: Readonly<Record<string, unknown>>,
): StatechartTransition[] {
  const out: StatechartTransition[] = [];
  const add = (t: TransitionReading, kind: StatechartTransition['kind'], fallback: boolean) => {
    const partial: Omit<StatechartTransition, 'label'> = {
      source: node.id,
      kind,
      event: t.eventType,
      targets: [...t.targetIds],
      guard: guardName(t.guard),
      fallback,
      actions: t.actions.map(actionName),
      delay: t.delay !== undefined ? readDelay(t.delay, delays) : null,
    };
    out.push({ ...partial, label: labelOf(partial) });
  };
  for (const ts of node.on.values()) {
    ts.forEach((t, i) => {
      add(t, t.delay !== undefined ? 'after' : 'event', i > 0 && t.guard === undefined);
    });
  }
  node.always.forEach((t, i) => {
    add(t, 'always', i > 0 && t.guard === undefined);
  });
  return out;
}

function allNodes(node: StateNodeReading): StateNodeReading[] {
  return [node, ...node.children.flatMap(allNodes)];
}

/**
 * Reads a machine's statechart from its definition: states (nested, parallel, final, history) with
 * their initial child, description, entry and exit actions and invoked actors, and every transition
 * with its event, targets, guard, actions and delay. Named delays are resolved through the
 * machine's `setup({ delays })` when they are numbers.
 */
export function exportStatechart(machine: AnyStateMachine): StatechartJson {
  const reading = readMachine(machine);
  return {
    format: 'troupe-statechart',
    version: STATECHART_JSON_VERSION,
    id: reading.id,
    root: readState(reading.root),
    transitions: allNodes(reading.root).flatMap((n) => transitionsOf(n, reading.delays)),
  };
}

/** Every state of a chart, the root first, in document order. */
export function chartStates(chart: StatechartJson): StatechartState[] {
  const walk = (s: StatechartState): StatechartState[] => [s, ...s.states.flatMap(walk)];
  return walk(chart.root);
}
