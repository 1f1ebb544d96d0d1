/**
 * What "every state" and "every transition" mean for an XState machine, and a live actor that
 * records which of them a run visits and takes: the coverage half of the model-based tests.
 */
import {
  type AnyStateMachine,
  type AnyStateNode,
  type AnyTransitionDefinition,
  createActor,
  type InspectionEvent,
  SimulatedClock,
} from 'xstate';
import { getStateNodes } from 'xstate/graph';

/** Every state node below the root (compound, parallel, atomic and final). */
export function allStateIds(machine: AnyStateMachine): string[] {
  return getStateNodes(machine.root).map((n) => n.id);
}

/** A stable name for one transition definition: source, event (or `always`), branch and guard. */
export function transitionKey(t: AnyTransitionDefinition): string {
  const source = t.source;
  const isAlways = source.always?.includes(t) ?? false;
  const branches = isAlways ? (source.always ?? []) : (source.transitions.get(t.eventType) ?? []);
  const guard = t.guard === undefined ? 'unguarded' : typeof t.guard === 'string' ? t.guard : 'inline guard';
  const target = t.target?.map((n) => n.id).join(',') ?? '(stays)';
  return `${source.id} --${isAlways ? 'always' : t.eventType}[${branches.indexOf(t)}: ${guard}]--> ${target}`;
}

/** Every transition the machine defines: each branch of each `on` event and of each `always`. */
export function allTransitionKeys(machine: AnyStateMachine): string[] {
  const keys: string[] = [];
  for (const node of [machine.root, ...getStateNodes(machine.root)]) {
    for (const branches of node.transitions.values()) for (const t of branches) keys.push(transitionKey(t));
    for (const t of node.always ?? []) keys.push(transitionKey(t));
  }
  return keys;
}

/** A live actor on a simulated clock that records every transition it takes and every state it visits. */
export function recordingActor<TMachine extends AnyStateMachine>(
  machine: TMachine,
  input: unknown,
  taken: Set<string>,
  visited: Set<string>,
) {
  const actor = createActor(machine, {
    input,
    clock: new SimulatedClock(),
    inspect: (ev: InspectionEvent) => {
      if (ev.type !== '@xstate.microstep') return;
      for (const t of (ev as unknown as { _transitions: AnyTransitionDefinition[] })._transitions) {
        taken.add(transitionKey(t));
      }
      for (const node of (ev.snapshot as unknown as { _nodes: AnyStateNode[] })._nodes) visited.add(node.id);
    },
  } as never);
  actor.start();
  return actor;
}

/** The expected keys a run did not reach. */
export function missing(expected: Iterable<string>, seen: Set<string>): string[] {
  return [...new Set(expected)].filter((k) => !seen.has(k));
}
