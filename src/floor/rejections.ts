import type { FloorState } from './floorState.js';
import type { FloorEffect } from './floorTypes.js';

/** An `event.rejected` effect: the event was bad input and changed nothing. */
export function rejection(at: number, code: string, message: string): FloorEffect {
  return { type: 'event.rejected', at, code, message };
}

/** The rejection of an event about a turn that is not in flight. */
export function unknownTurn(state: FloorState, at: number, turnId: string): FloorEffect {
  return rejection(
    at,
    'TURN_UNKNOWN',
    `Turn ${turnId} is not in flight in ${state.channelId} (already settled, or never claimed).`,
  );
}
