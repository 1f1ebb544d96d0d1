import type { Assigner } from './compiledNodes.js';
import { STEPPER_ADVICE, type Unsupported } from './unsupportedFeature.js';
import type { ActionReading, TransitionReading } from './xstateInternals.js';

/** A transition's action as the update its `assign` computes; refuses any other action and params. */
export function compileAction(
  action: ActionReading,
  t: TransitionReading,
  where: string,
  unsupported: Unsupported,
): Assigner {
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
  return action.write;
}
