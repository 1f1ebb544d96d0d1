import { openBudget } from './budgets.js';
import { claimUnlessCapped } from './caps.js';
import { releaseClaim } from './claims.js';
import { type FloorSetup, nameOf } from './floorSetup.js';
import type { ClaimSpec, FloorState } from './floorState.js';
import type { FloorEffect } from './floorTypes.js';
import { ensurePresence, presenceTurnState, stepPresence } from './presences.js';
import { rejection } from './rejections.js';
import { removeFollowUps } from './scheduledTurns.js';
import { latestThreadWith, openThread, stepThread } from './threads.js';

/**
 * A summon: the avatar becomes present (if it was not), gets its guaranteed turns, and greets —
 * at once, or once its turn in flight settles. Summoning is a human act: it anchors a fresh budget,
 * and opens a summon thread with whoever is already present.
 */
export function summon(
  state: FloorState,
  setup: FloorSetup,
  at: number,
  avatarId: string,
  by: { id: string; name: string },
  messageId: string | undefined,
  effects: FloorEffect[],
): void {
  const config = setup.config;
  if (!setup.roster.has(avatarId)) {
    effects.push(
      rejection(
        at,
        'AVATAR_UNKNOWN',
        `Cannot summon ${avatarId}: no avatar with that id is known in ${state.channelId}.`,
      ),
    );
    return;
  }
  const others = [...state.presences.keys()].filter((id) => id !== avatarId);
  const alreadyPresent = state.presences.has(avatarId);
  state.departed.delete(avatarId); // summoned back: a goodbye said before no longer holds
  ensurePresence(state, setup, avatarId, at);
  stepPresence(state, setup, avatarId, { type: 'presence.summoned', at, turns: config.summonInitialTurns });
  effects.push({ type: 'presence.summoned', at, avatarId, turnsGranted: config.summonInitialTurns });
  const anchorMessageId = messageId ?? `${state.channelId}:summon${state.turnSeq + 1}`;
  openBudget(state, setup, anchorMessageId);
  let threadId: string | undefined;
  // A re-summon keeps the summon thread the avatar is already in rather than opening another.
  const current = latestThreadWith(state, avatarId);
  if (current?.context.mode === 'summon') threadId = current.context.id;
  else if (others.length > 0) {
    threadId = openThread(
      state,
      setup,
      'summon',
      [avatarId, ...others],
      config.summonThreadTurns,
      config.summonConversationDurationMs,
      at,
      effects,
    );
  }
  const greeting: ClaimSpec = {
    avatarId,
    kind: 'greeting',
    rung: 'greeting',
    reason: `${nameOf(setup, avatarId)} was summoned by ${by.name}`,
    lane: 'scheduled',
    anchorMessageId,
    threadId,
    addressedBy: { id: by.id, name: by.name },
  };
  // Called again while here: its turns are granted anew, and it answers the call, not arrives.
  if (alreadyPresent) greeting.alreadyPresent = true;
  else state.arrivals.set(avatarId, { at });
  if (presenceTurnState(state, avatarId) !== 'ready') {
    effects.push({
      type: 'candidate.suppressed',
      at,
      avatarId,
      messageId: anchorMessageId,
      rung: 'greeting',
      reason: 'busy',
    });
    // Mid-answer when summoned: greet once that turn settles — unless it is a greeting already.
    const inFlight = [...state.inFlight.values()].find((c) => c.avatarId === avatarId);
    if (inFlight?.kind !== 'greeting') state.pendingGreetings.set(avatarId, greeting);
    return;
  }
  // A re-summon replaces any follow-up still pending: one follow-up per arrival.
  removeFollowUps(state, avatarId);
  claimUnlessCapped(state, setup, greeting, effects);
}

/** A dismissal: the avatar's turns are released, it leaves its threads, and nothing it owed remains. */
export function dismiss(
  state: FloorState,
  setup: FloorSetup,
  at: number,
  avatarId: string,
  effects: FloorEffect[],
): void {
  if (!state.presences.has(avatarId)) {
    effects.push(
      rejection(
        at,
        'AVATAR_NOT_PRESENT',
        `Cannot dismiss ${avatarId}: it is not present in ${state.channelId}.`,
      ),
    );
    return;
  }
  for (const claim of [...state.inFlight.values()]) {
    if (claim.avatarId === avatarId) releaseClaim(state, setup, at, claim, 'dismissed', effects);
  }
  stepPresence(state, setup, avatarId, { type: 'presence.dismissed', at });
  state.presences.delete(avatarId);
  state.deferred.delete(avatarId);
  state.pendingGreetings.delete(avatarId);
  state.departed.delete(avatarId);
  state.arrivals.delete(avatarId);
  removeFollowUps(state, avatarId);
  for (const [id, snap] of state.threads) {
    if (snap.context.participants.includes(avatarId))
      stepThread(state, setup, id, { type: 'thread.leave', at, avatarId }, effects);
  }
  effects.push({ type: 'presence.dismissed', at, avatarId });
}
