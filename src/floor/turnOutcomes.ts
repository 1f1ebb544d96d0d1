import { guaranteedTurns } from '../machines/avatarPresence.machine.js';
import { countAvatarMessage } from './caps.js';
import { releaseClaim } from './claims.js';
import { decide } from './decision.js';
import type { FloorSetup } from './floorSetup.js';
import type { FloorState } from './floorState.js';
import type { FloorEffect, FloorEvent } from './floorTypes.js';
import { stepPresence } from './presences.js';
import { unknownTurn } from './rejections.js';
import { resumeOwedTurns } from './scheduledTurns.js';
import { unreserveThread } from './threads.js';
import type { Utterance } from './utterance.js';

/*
 * A claimed turn is generated, then delivered (consumed) — or it fails or is aborted, which
 * releases its claim and gives its budget back. Either way the avatar is free again and whatever
 * it owes is claimed next.
 */

/** The turn's text is ready. */
export function turnGenerated(
  state: FloorState,
  setup: FloorSetup,
  at: number,
  turnId: string,
  effects: FloorEffect[],
): void {
  const claim = state.inFlight.get(turnId);
  if (!claim) effects.push(unknownTurn(state, at, turnId));
  else stepPresence(state, setup, claim.avatarId, { type: 'presence.generated', at, turnId: claim.turnId });
}

/** The turn was delivered: it is consumed, and its text is the avatar's message in the channel. */
export function turnDelivered(
  state: FloorState,
  setup: FloorSetup,
  event: Extract<FloorEvent, { type: 'turn.delivered' }>,
  effects: FloorEffect[],
): void {
  const claim = state.inFlight.get(event.turnId);
  if (!claim) {
    effects.push(unknownTurn(state, event.at, event.turnId));
    return;
  }
  state.inFlight.delete(claim.turnId);
  unreserveThread(state, claim.threadId);
  countAvatarMessage(state, setup, event.at);
  const presence = state.presences.get(claim.avatarId);
  const held = presence ? guaranteedTurns(presence.context, event.at) : 0;
  stepPresence(state, setup, claim.avatarId, {
    type: 'presence.delivered',
    at: event.at,
    turnId: claim.turnId,
  });
  const left = state.presences.get(claim.avatarId)?.context.summonTurns ?? 0;
  const { threadId } = claim;
  const threadStillOpen = threadId !== undefined && state.threads.has(threadId);
  const consumed: Extract<FloorEffect, { type: 'turn.consumed' }> = {
    type: 'turn.consumed',
    at: event.at,
    turnId: claim.turnId,
    avatarId: claim.avatarId,
    rung: claim.rung,
    ...(threadStillOpen ? { threadId } : {}),
    messageId: event.messageId,
  };
  if (left < held) consumed.summonTurnsLeft = left;
  effects.push(consumed);
  // Sticky affinity: a human who got an answer from this avatar keeps talking to it.
  const addressedBy = claim.context.addressedById;
  if (addressedBy !== undefined && !setup.roster.has(addressedBy)) {
    stepPresence(state, setup, claim.avatarId, {
      type: 'presence.addressedBy',
      at: event.at,
      userId: addressedBy,
    });
  }
  // The follow-up looks around after an arrival; an avatar that was already here did not arrive.
  if (claim.kind === 'greeting' && setup.config.summonProactiveEnabled && !claim.context.alreadyPresent) {
    state.followUps.push({
      avatarId: claim.avatarId,
      dueAt: event.at + setup.config.summonFollowUpDelayMs,
      anchorMessageId: claim.anchorMessageId,
      summonerName: claim.context.addressedByName ?? 'someone',
    });
  }
  if (claim.kind === 'follow-up') {
    // After the first follow-up, a second one later, if someone reacted by then; after the
    // second, the arrival is done with.
    const arrival = state.arrivals.get(claim.avatarId);
    const delay = setup.config.summonSecondFollowUpMs;
    if (arrival && claim.context.addressedById === undefined && delay > 0)
      state.followUps.push({
        avatarId: claim.avatarId,
        dueAt: event.at + delay,
        anchorMessageId: claim.anchorMessageId,
        summonerName: claim.context.addressedByName ?? 'someone',
        second: true,
      });
    else state.arrivals.delete(claim.avatarId);
  }
  const utterance: Utterance = {
    at: event.at,
    messageId: event.messageId,
    author: { kind: 'avatar', id: claim.avatarId },
    text: event.text,
  };
  if (event.mentions) utterance.mentions = event.mentions;
  if (event.replyTo) utterance.replyTo = event.replyTo;
  // A turn claimed in a thread belongs to it even when it lands after the thread ended.
  if (claim.threadId !== undefined) utterance.threadId = claim.threadId;
  if (claim.kind === 'greeting') utterance.announcement = true;
  decide(state, setup, utterance, effects);
  resumeOwedTurns(state, setup, claim.avatarId, effects);
}

/** The turn failed or was aborted: its claim is released. */
export function turnReleased(
  state: FloorState,
  setup: FloorSetup,
  at: number,
  turnId: string,
  reason: string,
  effects: FloorEffect[],
): void {
  const claim = state.inFlight.get(turnId);
  if (!claim) {
    effects.push(unknownTurn(state, at, turnId));
    return;
  }
  releaseClaim(state, setup, at, claim, reason, effects);
  resumeOwedTurns(state, setup, claim.avatarId, effects);
}
