import type { StateValue } from 'xstate';
import { guaranteedTurns } from '../machines/avatarPresence.machine.js';
import { type FloorSetup, nameOf } from './floorSetup.js';
import type { FloorState } from './floorState.js';
import type { ThreadMode, ThreadOutcome, TurnClaim } from './floorTypes.js';
import { presenceTurnState, type TurnState } from './presences.js';

/** A read-only picture of a floor, for transcripts, inspection and tests. */
export interface FloorView {
  channelId: string;
  now: number;
  present: {
    id: string;
    name: string;
    /** Guaranteed turns held now (a summon's last as long as its conversation mode). */
    summonTurns: number;
    conversing: boolean;
    /** When the summon conversation mode ends (0: never summoned). */
    conversingUntil: number;
    cooldownUntil: number;
    lastSpokeAt: number | null;
    turn: TurnState;
    /** The presence machine's state value (its active states are what a statechart highlights). */
    state: StateValue;
  }[];
  threads: {
    id: string;
    mode: ThreadMode;
    participants: string[];
    turnCount: number;
    maxTurns: number;
    expiresAt: number;
    lastSpeakerId?: string;
    status: 'active' | ThreadOutcome;
    detail?: string;
    /** The thread machine's state value. */
    state: StateValue;
  }[];
  inFlight: TurnClaim[];
  budget: { anchorMessageId?: string; main: number; cascade: number };
  pendingFollowUps: { avatarId: string; dueAt: number }[];
}

/** The floor as a {@link FloorView}. */
export function viewOf(state: FloorState, setup: FloorSetup): FloorView {
  const now = state.now;
  return {
    channelId: state.channelId,
    now,
    present: [...state.presences.entries()].map(([id, snap]) => ({
      id,
      name: nameOf(setup, id),
      summonTurns: guaranteedTurns(snap.context, now),
      conversing: now < snap.context.conversingUntil,
      conversingUntil: snap.context.conversingUntil,
      cooldownUntil: snap.context.cooldownUntil,
      lastSpokeAt: snap.context.lastSpokeAt,
      turn: presenceTurnState(state, id) ?? 'ready',
      state: snap.value,
    })),
    threads: [...state.threads.values()].map((snap) => {
      const c = snap.context;
      return {
        id: c.id,
        mode: c.mode,
        participants: [...c.participants],
        turnCount: c.turnCount,
        maxTurns: c.maxTurns,
        expiresAt: c.expiresAt,
        ...(c.lastSpeakerId ? { lastSpeakerId: c.lastSpeakerId } : {}),
        // An ended thread leaves the floor's live threads at once, so every thread here is active.
        status: 'active' as const,
        state: snap.value,
      };
    }),
    inFlight: [...state.inFlight.values()],
    budget: {
      ...(state.budget.anchorMessageId ? { anchorMessageId: state.budget.anchorMessageId } : {}),
      main: state.budget.main,
      cascade: state.budget.cascade,
    },
    pendingFollowUps: state.followUps.map((f) => ({ avatarId: f.avatarId, dueAt: f.dueAt })),
  };
}
