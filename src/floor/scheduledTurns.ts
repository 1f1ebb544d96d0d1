import { claimUnlessCapped } from './caps.js';
import { claimTurn } from './claims.js';
import { type FloorSetup, nameOf } from './floorSetup.js';
import type { FloorState } from './floorState.js';
import type { FloorEffect, SuppressionReason } from './floorTypes.js';
import { gate } from './ladder.js';
import { presenceTurnState } from './presences.js';
import { endedOutcome, latestThreadWith, threadHasRoom } from './threads.js';

/*
 * Turns the floor owes rather than decides on the spot: a summoned avatar's follow-up (once,
 * SUMMON_FOLLOWUP_DELAY after its greeting was delivered), a greeting held back because the avatar
 * was mid-turn when summoned, and an answer owed by an avatar that was addressed while busy. Each
 * is claimed once the avatar is free (and the follow-up once it is due).
 */

/** Claims every follow-up that is due and whose avatar is free, in order. */
export function fireDueFollowUps(state: FloorState, setup: FloorSetup, effects: FloorEffect[]): void {
  const followUps = state.followUps;
  for (let i = 0; i < followUps.length; ) {
    const f = followUps[i];
    if (!f || f.dueAt > state.now || presenceTurnState(state, f.avatarId) !== 'ready') {
      i++;
      continue;
    }
    followUps.splice(i, 1); // once: removed before claiming, whatever happens next
    if (!state.presences.has(f.avatarId)) continue;
    const thread = latestThreadWith(state, f.avatarId);
    if (f.second) {
      // Only if a person reacted to the avatar since it arrived, and it has not taken its leave:
      // it answers them once more.
      const reactedBy = state.arrivals.get(f.avatarId)?.reactedBy;
      state.arrivals.delete(f.avatarId);
      if (!reactedBy || state.departed.has(f.avatarId)) continue;
      claimUnlessCapped(
        state,
        setup,
        {
          avatarId: f.avatarId,
          kind: 'follow-up',
          rung: 'follow-up',
          reason: `${nameOf(setup, f.avatarId)} follows up once more, answering ${reactedBy.name}, who reacted since it arrived`,
          lane: 'scheduled',
          anchorMessageId: f.anchorMessageId,
          threadId: thread?.context.id,
          addressedBy: reactedBy,
        },
        effects,
      );
      continue;
    }
    claimUnlessCapped(
      state,
      setup,
      {
        avatarId: f.avatarId,
        kind: 'follow-up',
        rung: 'follow-up',
        reason: `${nameOf(setup, f.avatarId)} follows up on arriving, summoned by ${f.summonerName}`,
        lane: 'scheduled',
        anchorMessageId: f.anchorMessageId,
        threadId: thread?.context.id,
      },
      effects,
    );
  }
}

/** Drops the avatar's pending follow-ups (dismissed, or summoned again: one follow-up per arrival). */
export function removeFollowUps(state: FloorState, avatarId: string): void {
  const followUps = state.followUps;
  for (let i = followUps.length - 1; i >= 0; i--) {
    if (followUps[i]?.avatarId === avatarId) followUps.splice(i, 1);
  }
}

/** The earliest due time among follow-ups whose avatar is free, if any. */
export function nextFollowUpDue(state: FloorState): number | undefined {
  let next: number | undefined;
  for (const f of state.followUps) {
    if (presenceTurnState(state, f.avatarId) !== 'ready') continue; // waits for the claim to settle
    if (next === undefined || f.dueAt < next) next = f.dueAt;
  }
  return next;
}

/** What an avatar owes once its turn settles: a held-back greeting, then a deferred answer, then due follow-ups. */
export function resumeOwedTurns(
  state: FloorState,
  setup: FloorSetup,
  avatarId: string,
  effects: FloorEffect[],
): void {
  resumeGreeting(state, setup, avatarId, effects);
  resumeDeferred(state, setup, avatarId, effects);
  fireDueFollowUps(state, setup, effects);
}

/** A greeting held back because the avatar was mid-turn when summoned, claimed once it is free. */
function resumeGreeting(
  state: FloorState,
  setup: FloorSetup,
  avatarId: string,
  effects: FloorEffect[],
): void {
  const greeting = state.pendingGreetings.get(avatarId);
  if (!greeting || presenceTurnState(state, avatarId) !== 'ready') return; // still busy: keep waiting
  state.pendingGreetings.delete(avatarId);
  removeFollowUps(state, avatarId);
  const threadId =
    greeting.threadId !== undefined && state.threads.has(greeting.threadId) ? greeting.threadId : undefined;
  claimUnlessCapped(
    state,
    setup,
    { ...greeting, threadId, reason: `${greeting.reason} (greeting once free)` },
    effects,
  );
}

/**
 * An avatar that was addressed while busy answers once its turn settles — if the budget it was
 * addressed under is still the live one (a newer human message takes precedence).
 */
function resumeDeferred(
  state: FloorState,
  setup: FloorSetup,
  avatarId: string,
  effects: FloorEffect[],
): void {
  const owed = state.deferred.get(avatarId);
  if (!owed || presenceTurnState(state, avatarId) !== 'ready') return; // still busy: keep waiting
  state.deferred.delete(avatarId);
  if (owed.spec.anchorMessageId !== state.budget.anchorMessageId) return;
  const suppress = (reason: SuppressionReason) =>
    effects.push({
      type: 'candidate.suppressed',
      at: state.now,
      avatarId,
      messageId: owed.messageId,
      rung: owed.spec.rung,
      reason,
    });
  let threadId = owed.spec.threadId;
  const thread = threadId !== undefined ? state.threads.get(threadId) : undefined;
  if (threadId !== undefined) {
    // The conversation it was asked in has ended (or the avatar took its leave): nothing is owed.
    if (!thread || thread.context.departed.includes(avatarId)) {
      suppress(thread ? 'thread-ended' : endedOutcome(state, threadId));
      return;
    }
    if (!threadHasRoom(state, thread)) threadId = undefined;
  }
  // A thread turn whose thread has no room left is an ordinary answer between avatars now.
  const lane = owed.spec.lane === 'thread' && threadId === undefined ? 'cascade' : owed.spec.lane;
  // The same gate as any candidate, applied now rather than when it was addressed.
  const blocked = gate(
    state,
    setup,
    { avatarId, rung: owed.spec.rung, reason: owed.spec.reason, order: 0 },
    lane,
    thread,
  );
  if (blocked) {
    suppress(blocked);
    return;
  }
  claimTurn(
    state,
    setup,
    { ...owed.spec, threadId, lane, reason: `${owed.spec.reason} (answered once free)` },
    effects,
  );
}
