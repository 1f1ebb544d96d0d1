import { meanSentiment, moodOf } from '../textRules/sentiment.js';
import { refundBudget, spendBudget } from './budgets.js';
import { type FloorSetup, nameOf } from './floorSetup.js';
import type { ClaimSpec, FloorState } from './floorState.js';
import type { FloorEffect, TurnClaim, TurnContext } from './floorTypes.js';
import { stepPresence } from './presences.js';
import { reserveThreadTurn, unreserveThread } from './threads.js';

/**
 * Grants a turn: spends its budget, reserves its thread turn, marks the presence as claimed and
 * reports `turn.claimed` with what a generator needs to know about the moment.
 */
export function claimTurn(
  state: FloorState,
  setup: FloorSetup,
  spec: ClaimSpec,
  effects: FloorEffect[],
): void {
  spendBudget(state, spec.lane);
  const thread = spec.threadId !== undefined ? state.threads.get(spec.threadId) : undefined;
  const threadTurn = thread ? reserveThreadTurn(state, thread) : 0;
  const now = state.now;
  const turnId = `${state.channelId}:t${++state.turnSeq}`;
  stepPresence(state, setup, spec.avatarId, { type: 'presence.claim', at: now, turnId, rung: spec.rung });
  // Nobody may answer this turn when its thread is full or, outside a thread, the cascade lane is empty.
  const closing = thread ? threadTurn >= thread.context.maxTurns : state.budget.cascade <= 0;
  // Built by assignment rather than conditional spreads: this runs for every turn.
  const presentNames: string[] = [];
  for (const id of state.presences.keys()) if (id !== spec.avatarId) presentNames.push(nameOf(setup, id));
  const threadPartnerNames: string[] = [];
  if (thread)
    for (const id of thread.context.participants)
      if (id !== spec.avatarId) threadPartnerNames.push(nameOf(setup, id));
  const context: TurnContext = { presentNames, threadPartnerNames, closing };
  if (spec.triggerText !== undefined) context.triggerText = spec.triggerText;
  if (spec.addressedBy) {
    context.addressedByName = spec.addressedBy.name;
    context.addressedById = spec.addressedBy.id;
  }
  if (thread) {
    context.threadTurn = threadTurn;
    context.threadMaxTurns = thread.context.maxTurns;
    const sentiment = thread.context.sentiment;
    if (sentiment.turns > 0) context.threadMood = moodOf(meanSentiment(sentiment));
  }
  if (spec.kind === 'greeting') context.maxChars = setup.config.greetingMaxChars;
  if (spec.alreadyPresent) context.alreadyPresent = true;
  const claim: TurnClaim = {
    turnId,
    channelId: state.channelId,
    avatarId: spec.avatarId,
    kind: spec.kind,
    rung: spec.rung,
    reason: spec.reason,
    lane: spec.lane,
    anchorMessageId: spec.anchorMessageId,
    claimedAt: now,
    context,
  };
  if (spec.triggerMessageId) claim.triggerMessageId = spec.triggerMessageId;
  if (thread) claim.threadId = thread.context.id;
  state.inFlight.set(turnId, claim);
  effects.push({ type: 'turn.claimed', at: now, turn: claim });
}

/** Takes a turn back: nothing is spent, its budget returns (if still live) and `turn.released` is reported. */
export function releaseClaim(
  state: FloorState,
  setup: FloorSetup,
  at: number,
  claim: TurnClaim,
  reason: string,
  effects: FloorEffect[],
): void {
  state.inFlight.delete(claim.turnId);
  unreserveThread(state, claim.threadId);
  stepPresence(state, setup, claim.avatarId, { type: 'presence.failed', at, turnId: claim.turnId });
  refundBudget(state, claim);
  effects.push({ type: 'turn.released', at, turnId: claim.turnId, avatarId: claim.avatarId, reason });
}
