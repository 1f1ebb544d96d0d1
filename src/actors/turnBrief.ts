import type { TurnClaim } from '../machines/floorTypes.js';
import type { TurnBrief } from '../ports/model.js';

/**
 * The turn as a model sees it: a copy of what a generator may use, so model implementations never
 * hold the floor's claim (its rung, lane and anchors are the coordination core's business).
 */
export function turnBrief(claim: TurnClaim): TurnBrief {
  return {
    turnId: claim.turnId,
    kind: claim.kind,
    ...(claim.threadId !== undefined ? { threadId: claim.threadId } : {}),
    ...(claim.triggerMessageId !== undefined ? { triggerMessageId: claim.triggerMessageId } : {}),
    context: claim.context,
  };
}
