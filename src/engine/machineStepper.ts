import {
  type ActorScope,
  type AnyStateMachine,
  type ContextFrom,
  createActor,
  type EventFromLogic,
  type InputFrom,
  type SnapshotFrom,
  type StateValue,
} from 'xstate';

/**
 * Steps a machine's snapshot through events as a pure function, without a running actor.
 *
 * Presences and threads are data (docs/architecture.md, invariant 8): the channel floor keeps their snapshots in
 * plain maps and steps only the ones an event touches. Troupe's machines only `assign`, so no
 * action needs executing.
 */
export interface MachineStepper<TMachine extends AnyStateMachine> {
  readonly machine: TMachine;
  /** The snapshot the machine starts in for this input. */
  initial(input: InputFrom<TMachine>): SnapshotFrom<TMachine>;
  /** The snapshot after one event. Never mutates `snapshot`. */
  step(snapshot: SnapshotFrom<TMachine>, event: EventFromLogic<TMachine>): SnapshotFrom<TMachine>;
  /** The snapshot for a persisted value and context (xstate's `resolveState`). */
  restore(value: StateValue, context: ContextFrom<TMachine>): SnapshotFrom<TMachine>;
}

/**
 * An actor scope in which nothing happens: actions, deferred work, emitted events and logs are
 * dropped. Built like xstate's own `createInertActorScope` (behind its `transition` and
 * `initialTransition`), from public parts only: an unstarted actor as `self`, and its system.
 * Typed as `ActorScope` without casts, so a field a new xstate adds fails the typecheck here.
 */
function inertActorScope<TMachine extends AnyStateMachine>(
  machine: TMachine,
): ActorScope<SnapshotFrom<TMachine>, EventFromLogic<TMachine>> {
  const self = createActor(machine);
  return {
    self,
    system: self.system,
    id: '',
    sessionId: '',
    logger: () => {},
    defer: () => {},
    emit: () => {},
    stopChild: () => {},
    actionExecutor: () => {},
  };
}

/**
 * Creates a {@link MachineStepper} for a machine whose actions are all `assign`. It uses xstate's
 * public API only (`getInitialSnapshot`, `transition`, `resolveState`), so it works with any xstate
 * v5 release.
 */
export function createMachineStepper<TMachine extends AnyStateMachine>(
  machine: TMachine,
): MachineStepper<TMachine> {
  // xstate's `transition()` builds the same inert scope on every call (about 20 µs a step); one
  // reused scope makes a step about 6 µs. Safe to share: the scope keeps no state of its own.
  const scope = inertActorScope(machine);
  return {
    machine,
    initial: (input) => machine.getInitialSnapshot(scope, input) as SnapshotFrom<TMachine>,
    restore: (value, context) => machine.resolveState({ value, context }) as SnapshotFrom<TMachine>,
    step: (snapshot, event) => machine.transition(snapshot, event, scope) as SnapshotFrom<TMachine>,
  };
}
