import type { AnyStateMachine, StateValue } from 'xstate';
import { exportStatechart, type StatechartState } from '../inspect/statechartModel.js';
import { avatarPresenceMachine } from '../machines/avatarPresence.machine.js';
import { conversationThreadMachine } from '../machines/conversationThread.machine.js';
import { emailLifecycleMachine } from '../machines/emailLifecycle.machine.js';
import type { StudioMachine } from './studioState.js';

/** The machines of the studio's actors, by the id their chart has. */
export const studioMachines: Readonly<Record<StudioMachine, AnyStateMachine>> = {
  avatarPresence: avatarPresenceMachine,
  conversationThread: conversationThreadMachine,
  emailLifecycle: emailLifecycleMachine,
};

const roots = new Map<StudioMachine, StatechartState>();

/**
 * The ids of the states a value makes active (ancestors first, the root left out), read from the
 * same chart export the SVG is drawn from, so each is the `state:<id>` element the page highlights.
 * Keys the chart does not know are skipped (a value from an older snapshot).
 */
export function activeStateIds(machine: StudioMachine, value: StateValue): string[] {
  let root = roots.get(machine);
  if (!root) {
    root = exportStatechart(studioMachines[machine]).root;
    roots.set(machine, root);
  }
  const ids: string[] = [];
  const walk = (node: StatechartState, v: StateValue) => {
    if (typeof v === 'string') {
      const child = node.states.find((s) => s.key === v);
      if (child) ids.push(child.id);
      return;
    }
    for (const [key, sub] of Object.entries(v)) {
      const child = node.states.find((s) => s.key === key);
      if (!child) continue;
      ids.push(child.id);
      if (sub !== undefined) walk(child, sub);
    }
  };
  walk(root, value);
  return ids;
}
