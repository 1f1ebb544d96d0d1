import { createRequire } from 'node:module';
import type { AnyStateMachine } from 'xstate';
import { runtimeErrorCodes } from '../ports/errorCodes.js';
import { TroupeError } from '../ports/troupeError.js';

/**
 * Everything Troupe reads of xstate beyond its documented API, in one place. The compiled engine
 * (`compiledMachine.ts`) and the chart export (`src/inspect/statechartModel.ts`) read a machine's
 * state nodes, transitions, guards, delays, invokes and actions, whose shapes xstate does not
 * promise to keep. This module turns them into plain, Troupe-owned readings and refuses to read
 * an xstate it was not verified with, so an xstate upgrade is one deliberate change: bump the
 * exact pin in package.json, run the equivalence tests (`test/engine/compiledMachine.test.ts`,
 * `test/engine/machineStepper.test.ts`), update {@link XSTATE_VERIFIED_VERSION}.
 */

/** The xstate release the compiled engine was checked against (package.json pins it exactly). */
export const XSTATE_VERIFIED_VERSION = '5.33.3';

/** The version of the xstate package this module resolves (the one `import 'xstate'` loads). */
export function installedXstateVersion(): string {
  const require = createRequire(import.meta.url);
  return (require('xstate/package.json') as { version: string }).version;
}

const majorMinor = (version: string): string | undefined => /^(\d+\.\d+)\./.exec(version)?.[1];

/**
 * Throws `TROUPE_XSTATE_UNSUPPORTED` unless `installed` has the same major and minor version as
 * `verified`. Patch releases are accepted: they fix bugs without reshaping the internals read here,
 * while minor releases add features and have moved internals before.
 */
export function checkXstateVersion(installed: string, verified: string = XSTATE_VERIFIED_VERSION): void {
  const line = majorMinor(verified);
  if (line !== undefined && majorMinor(installed) === line) return;
  throw new TroupeError(
    runtimeErrorCodes.xstateUnsupported,
    `Troupe's compiled machine engine reads xstate internals and was verified with xstate ${verified} ` +
      `(any ${line ?? verified}.x), but xstate ${installed} is installed. Install xstate@${verified} ` +
      `(the version Troupe pins), or create the channel floor with engine: 'xstate', which uses ` +
      `xstate's public API only.`,
    { details: { installed, verified } },
  );
}

let versionChecked = false;

/** {@link checkXstateVersion} for the installed xstate, once per process. */
export function assertSupportedXstate(): void {
  if (versionChecked) return;
  checkXstateVersion(installedXstateVersion());
  versionChecked = true;
}

/** What a guard or an `assign` is called with by the compiled engine. */
export interface MachineArgs {
  context: unknown;
  event: { type: string };
}

/** How a transition's guard reads. */
export type GuardReading =
  /** A plain predicate: inline, or named and implemented by a function. */
  | {
      kind: 'predicate';
      name: string | undefined;
      test: (args: MachineArgs) => boolean;
      /** Whether the transition passes it `params` (a value, or a function of context and event). */
      hasParams: boolean;
    }
  /** Made with one of xstate's higher-order guards: `not`, `and`, `or` or `stateIn`. */
  | { kind: 'combinator'; name: string | undefined; combinator: string }
  /** Named, but the machine has no function implementing that name. */
  | { kind: 'unimplemented'; name: string };

/** How one of a transition's actions reads. */
export type ActionReading =
  | {
      kind: 'assign';
      name: string | undefined;
      /** The partial context the `assign` produces, whether it was given a function or a map. */
      update: (args: MachineArgs) => Record<string, unknown>;
      /**
       * The same update written straight into a context the caller owns. For a property map every
       * value is computed from the context as it was before any is written, as xstate does.
       */
      write: (target: Record<string, unknown>, args: MachineArgs) => void;
      hasParams: boolean;
    }
  /** Any other action: inline functions, `raise`, `sendTo`, `enqueueActions`, unknown names. */
  | {
      kind: 'other';
      name: string | undefined;
      type: string | undefined;
      /** The JavaScript name of an inline function action (often empty or its property's name). */
      functionName: string | undefined;
    };

/** One transition of a state node. */
export interface TransitionReading {
  /** The event descriptor it is listed under (null for an eventless `always` transition). */
  readonly eventType: string | null;
  /** Ids of the state nodes it targets (none for a targetless transition). */
  readonly targetIds: readonly string[];
  readonly reenter: boolean;
  readonly guard: GuardReading | undefined;
  readonly actions: readonly ActionReading[];
  /** For a delayed (`after`) transition: its delay, in ms or as the name of a delay implementation. */
  readonly delay: number | string | undefined;
}

/** An actor a state node invokes while it is active. */
export interface InvokeReading {
  /** The invoke's id (given, or made up by xstate from the state's id). */
  readonly id: string;
  /** The name of the actor logic in `setup({ actors })`, or undefined for logic given inline. */
  readonly src: string | undefined;
}

/** One state node, with its children in document order. */
export interface StateNodeReading {
  readonly id: string;
  readonly key: string;
  readonly type: 'atomic' | 'compound' | 'parallel' | 'final' | 'history';
  readonly children: readonly StateNodeReading[];
  /** The id of the child a compound node starts in, when it names one. */
  readonly initialId: string | undefined;
  /** Actions of its `initial` transition. */
  readonly initialActions: number;
  /** Entry and exit actions, including those xstate adds itself for delays and invokes. */
  readonly entryActions: number;
  readonly exitActions: number;
  readonly invokes: number;
  readonly delayedTransitions: number;
  /** The node's `description`, for charts. */
  readonly description: string | undefined;
  /** The entry and exit actions the machine's author wrote (without those xstate adds for delays). */
  readonly entry: readonly ActionReading[];
  readonly exit: readonly ActionReading[];
  /** The actors it invokes, in order. */
  readonly invoked: readonly InvokeReading[];
  /** For a history node: shallow or deep. */
  readonly history: 'shallow' | 'deep' | undefined;
  /** Transitions by event descriptor (delayed, done and invoke events included), in order. */
  readonly on: ReadonlyMap<string, readonly TransitionReading[]>;
  readonly always: readonly TransitionReading[];
}

/** A machine as the compiled engine reads it. */
export interface MachineReading {
  readonly id: string;
  readonly root: StateNodeReading;
  /** The machine's `context`: a value, or a function of `{ input }`. */
  readonly context: unknown;
  /** Named delays of `setup({ delays })`: a number of ms, or a function of context and event. */
  readonly delays: Readonly<Record<string, unknown>>;
}

// ---- the shapes read from xstate 5.33 objects ----
interface XStateNode {
  id: string;
  key: string;
  description?: string;
  history?: 'shallow' | 'deep' | false;
  config: { entry?: unknown; exit?: unknown };
  type: StateNodeReading['type'];
  states: Record<string, XStateNode>;
  initial?: { target: readonly XStateNode[]; actions?: readonly unknown[] };
  transitions: Map<string, readonly XTransition[]>;
  always?: readonly XTransition[];
  entry: readonly unknown[];
  exit: readonly unknown[];
  invoke: readonly { id: string; src: unknown }[];
  after?: readonly unknown[];
}
interface XTransition {
  delay?: number | string;
  target?: readonly XStateNode[];
  guard?: unknown;
  actions: readonly unknown[];
  reenter?: boolean;
}
interface Implementations {
  guards: Record<string, unknown>;
  actions: Record<string, unknown>;
  delays?: Record<string, unknown>;
}

/** xstate names the logic of an inline `invoke: { src: someLogic }` after the invoke itself. */
const INLINE_INVOKE_PREFIX = 'xstate.invoke.';

const toArray = (value: unknown): readonly unknown[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];

/** xstate marks its higher-order guards with a `check` function; their function name says which. */
const combinatorOf = (fn: unknown): string | undefined =>
  typeof fn === 'function' && 'check' in fn ? fn.name || 'a higher-order guard' : undefined;

const hasParams = (ref: unknown): boolean =>
  typeof ref === 'object' && ref !== null && (ref as { params?: unknown }).params !== undefined;

/** The name a guard or action is referred to by (`'name'` or `{ type: 'name', params }`). */
const nameOf = (ref: unknown): string | undefined =>
  typeof ref === 'string'
    ? ref
    : typeof ref === 'object' && ref !== null && typeof (ref as { type?: unknown }).type === 'string'
      ? (ref as { type: string }).type
      : undefined;

function readGuard(guard: unknown, impl: Implementations): GuardReading | undefined {
  if (guard === undefined) return undefined;
  const name = typeof guard === 'function' ? undefined : nameOf(guard);
  const fn = typeof guard === 'function' ? guard : name !== undefined ? impl.guards[name] : undefined;
  const combinator = combinatorOf(fn);
  if (combinator !== undefined) return { kind: 'combinator', name, combinator };
  if (typeof fn !== 'function') return { kind: 'unimplemented', name: name ?? String(guard) };
  return { kind: 'predicate', name, test: fn as (args: MachineArgs) => boolean, hasParams: hasParams(guard) };
}

function readAction(action: unknown, impl: Implementations): ActionReading {
  const name = typeof action === 'function' ? undefined : nameOf(action);
  const fn = typeof action === 'function' ? action : name !== undefined ? impl.actions[name] : undefined;
  const built = fn as { type?: unknown; assignment?: unknown } | undefined;
  if (built?.type !== 'xstate.assign') {
    return {
      kind: 'other',
      name,
      type: typeof built?.type === 'string' ? built.type : undefined,
      functionName: typeof action === 'function' ? action.name : undefined,
    };
  }
  const assignment = built.assignment;
  const { update, write } =
    typeof assignment === 'function'
      ? updateByFunction(assignment as (args: MachineArgs) => Record<string, unknown>)
      : updateByMap(assignment as Record<string, unknown>);
  return { kind: 'assign', name, update, write, hasParams: hasParams(action) };
}

type Update = Pick<Extract<ActionReading, { kind: 'assign' }>, 'update' | 'write'>;

function updateByFunction(fn: (args: MachineArgs) => Record<string, unknown>): Update {
  return { update: fn, write: (target, args) => Object.assign(target, fn(args)) };
}

function updateByMap(assignment: Record<string, unknown>): Update {
  const entries = Object.entries(assignment);
  const resolve = (value: unknown, args: MachineArgs): unknown =>
    typeof value === 'function' ? value(args) : value;
  const update = (args: MachineArgs) => {
    const partial: Record<string, unknown> = {};
    for (const [key, value] of entries) partial[key] = resolve(value, args);
    return partial;
  };
  const only = entries.length === 1 ? entries[0] : undefined;
  if (only) {
    const [key, value] = only;
    return {
      update,
      write: (target, args) => {
        target[key] = resolve(value, args);
      },
    };
  }
  return { update, write: (target, args) => Object.assign(target, update(args)) };
}

function readTransition(t: XTransition, eventType: string | null, impl: Implementations): TransitionReading {
  return {
    eventType,
    targetIds: (t.target ?? []).map((n) => n.id),
    reenter: t.reenter === true,
    guard: readGuard(t.guard, impl),
    actions: t.actions.map((a) => readAction(a, impl)),
    delay: t.delay,
  };
}

function readNode(node: XStateNode, impl: Implementations): StateNodeReading {
  const on = new Map<string, readonly TransitionReading[]>();
  for (const [eventType, ts] of node.transitions) {
    on.set(
      eventType,
      ts.map((t) => readTransition(t, eventType, impl)),
    );
  }
  return {
    id: node.id,
    key: node.key,
    type: node.type,
    children: Object.values(node.states).map((child) => readNode(child, impl)),
    initialId: node.initial?.target[0]?.id,
    initialActions: node.initial?.actions?.length ?? 0,
    entryActions: node.entry.length,
    exitActions: node.exit.length,
    invokes: node.invoke.length,
    delayedTransitions: node.after?.length ?? 0,
    description: node.description,
    // The config's own lists: xstate appends a raise and a cancel per delay to `node.entry`/`exit`.
    entry: toArray(node.config.entry).map((a) => readAction(a, impl)),
    exit: toArray(node.config.exit).map((a) => readAction(a, impl)),
    invoked: node.invoke.map((inv) => ({
      id: inv.id,
      src: typeof inv.src === 'string' && !inv.src.startsWith(INLINE_INVOKE_PREFIX) ? inv.src : undefined,
    })),
    history: node.type === 'history' ? (node.history === 'deep' ? 'deep' : 'shallow') : undefined,
    on,
    always: (node.always ?? []).map((t) => readTransition(t, null, impl)),
  };
}

/**
 * Reads a machine's definition into plain data (after checking the installed xstate, see
 * {@link assertSupportedXstate}). Guards and `assign` functions are the machine's own, not copies.
 */
export function readMachine(machine: AnyStateMachine): MachineReading {
  assertSupportedXstate();
  const impl = machine.implementations as unknown as Implementations;
  return {
    id: machine.id,
    root: readNode(machine.root as unknown as XStateNode, impl),
    context: (machine.config as { context?: unknown }).context,
    delays: impl.delays ?? {},
  };
}
