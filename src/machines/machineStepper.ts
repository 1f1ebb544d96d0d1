import {
  type ActorScope,
  type AnyStateMachine,
  type ContextFrom,
  createActor,
  type EventFromLogic,
  type InputFrom,
  initialTransition,
  type SnapshotFrom,
  type StateValue,
  transition,
} from 'xstate';

/**
 * Steps a machine's snapshot through events as a pure function, without a running actor.
 *
 * Presences and threads are data (DESIGN invariant 8): the channel floor keeps their snapshots in
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

/** Creates a {@link MachineStepper} for a machine whose actions are all `assign`. */
export function createMachineStepper<TMachine extends AnyStateMachine>(
  machine: TMachine,
): MachineStepper<TMachine> {
  // xstate's public `transition()` builds a fresh inert actor scope on every call (~12 µs); one
  // reused scope makes a step ~2 µs. Falls back to the public function if the field ever moves.
  const scope = (createActor(machine) as unknown as { _actorScope?: ActorScope<never, never> })._actorScope;
  if (scope) scope.actionExecutor = () => {};
  return {
    machine,
    initial: scope
      ? (input) => machine.getInitialSnapshot(scope as never, input) as SnapshotFrom<TMachine>
      : (input) => initialTransition(machine, input)[0] as SnapshotFrom<TMachine>,
    restore: (value, context) => machine.resolveState({ value, context }) as SnapshotFrom<TMachine>,
    step: scope
      ? (snapshot, event) => machine.transition(snapshot, event, scope as never) as SnapshotFrom<TMachine>
      : (snapshot, event) => transition(machine, snapshot, event)[0] as SnapshotFrom<TMachine>,
  };
}
