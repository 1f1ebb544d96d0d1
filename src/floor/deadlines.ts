import { threadDeadline } from '../machines/conversationThread.machine.js';
import type { FloorSetup } from './floorSetup.js';
import type { FloorState } from './floorState.js';
import type { FloorEffect } from './floorTypes.js';
import { fireDueFollowUps, nextFollowUpDue } from './scheduledTurns.js';
import { stepThread } from './threads.js';

/**
 * Moves the floor's time to `at`: threads whose deadline passed end at that deadline (not at the
 * possibly later moment the floor notices), then due follow-ups are claimed.
 */
export function advance(state: FloorState, setup: FloorSetup, at: number, effects: FloorEffect[]): void {
  for (const [id, snap] of state.threads) {
    const deadline = threadDeadline(snap.context);
    if (deadline <= at)
      stepThread(
        state,
        setup,
        id,
        { type: 'thread.tick', at: Math.max(deadline, snap.context.now) },
        effects,
      );
  }
  state.now = at;
  fireDueFollowUps(state, setup, effects);
}

/** Earliest time at which a `tick` would change something, or undefined when nothing is due. */
export function nextDeadline(state: FloorState): number | undefined {
  let next: number | undefined;
  for (const snap of state.threads.values()) {
    const d = threadDeadline(snap.context);
    if (next === undefined || d < next) next = d;
  }
  const followUp = nextFollowUpDue(state);
  if (followUp !== undefined && (next === undefined || followUp < next)) next = followUp;
  return next === undefined ? undefined : Math.max(next, state.now);
}
