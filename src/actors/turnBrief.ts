import type { TurnClaim } from '../floor/floorTypes.js';
import type { TurnBrief } from '../ports/model.js';

/**
 * The turn as a model sees it: a copy of what a generator may use, so model implementations never
 * hold the floor's claim (its rung, lane and anchors are the coordination core's business).
 */
export function turnBrief(claim: TurnClaim): TurnBrief {
  // Built by assignment, not spreads (one is made for every turn), in the same key order.
  const brief = { turnId: claim.turnId, kind: claim.kind } as TurnBrief;
  if (claim.threadId !== undefined) brief.threadId = claim.threadId;
  if (claim.triggerMessageId !== undefined) brief.triggerMessageId = claim.triggerMessageId;
  brief.context = claim.context;
  return brief;
}
