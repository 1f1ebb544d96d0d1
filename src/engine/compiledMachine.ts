import type { AnyStateMachine, ContextFrom, EventFromLogic, InputFrom, StateValue } from 'xstate';
import { buildNodes } from './compiledNodes.js';
import { compileTransitions } from './compileTransitions.js';
import { type Configuration, Configurations } from './configurations.js';
import { createContextCopier } from './contextCopier.js';
import { microstep, selectTransitions, settle } from './microsteps.js';
import { unsupportedIn } from './unsupportedFeature.js';
import { readMachine } from './xstateInternals.js';

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
  const unsupported = unsupportedIn(reading.id);
  const tree = buildNodes(reading.root, unsupported);
  compileTransitions(tree, unsupported);
  const configs = new Configurations(tree.root);
  const toState = (config: Configuration, context: unknown): CompiledState<TMachine> => ({
    value: config.value,
    context: context as ContextFrom<TMachine>,
    status: config.done ? 'done' : 'active',
    config,
  });
  const contextFactory = reading.context;
  const copy = createContextCopier();
  return {
    machine,
    initial(input) {
      const event = { type: 'xstate.init', input };
      const context =
        typeof contextFactory === 'function'
          ? (contextFactory as (a: { input: unknown }) => unknown)({ input })
          : contextFactory;
      const settled = settle(configs, configs.initial(), context, event, copy);
      return toState(settled.config, settled.context);
    },
    restore(value, context) {
      return toState(configs.ofValue(value), context);
    },
    step(state, event) {
      if (state.status === 'done') return state;
      const config = state.config;
      const args = { context: state.context, event: event as { type: string } };
      const ts = selectTransitions(config, event.type, args);
      if (ts.length === 0) return state;
      const next = microstep(configs, ts, config, state.context, event as { type: string }, copy);
      const settled = settle(configs, next.config, next.context, event as { type: string }, copy);
      return toState(settled.config, settled.context);
    },
  };
}
