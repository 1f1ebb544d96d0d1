import type { AvatarPresenceEvent } from '../machines/avatarPresence.machine.js';
import type { FloorSetup } from './floorSetup.js';
import type { FloorState } from './floorState.js';

/** Where an avatar's turn stands: free, holding a claim, or generating. */
export type TurnState = 'ready' | 'claimed' | 'generating';

/** Makes the avatar present (a fresh presence) unless it already is. */
export function ensurePresence(state: FloorState, setup: FloorSetup, avatarId: string, at: number): void {
  if (state.presences.has(avatarId)) return;
  state.presences.set(
    avatarId,
    setup.engine.presence.initial({ channelId: state.channelId, avatarId, settings: setup.settings, at }),
  );
}

/** Steps an avatar's presence; nothing happens for an avatar that is not present. */
export function stepPresence(
  state: FloorState,
  setup: FloorSetup,
  avatarId: string,
  event: AvatarPresenceEvent,
): void {
  const snap = state.presences.get(avatarId);
  if (snap) state.presences.set(avatarId, setup.engine.presence.step(snap, event));
}

/** Where the avatar's turn stands, or undefined when it is not present. */
export function presenceTurnState(state: FloorState, avatarId: string): TurnState | undefined {
  const snap = state.presences.get(avatarId);
  if (snap?.status !== 'active') return undefined;
  const value = snap.value as { present?: { turn?: TurnState } };
  return value.present?.turn;
}
