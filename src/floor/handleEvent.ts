import { dismiss, summon } from './arrivals.js';
import { countAvatarMessage } from './caps.js';
import { advance } from './deadlines.js';
import { decide } from './decision.js';
import { addToRoster, type FloorSetup } from './floorSetup.js';
import type { FloorState } from './floorState.js';
import type { FloorEffect, FloorEvent } from './floorTypes.js';
import { ensurePresence } from './presences.js';
import { rejection } from './rejections.js';
import { forgetSettledThreads } from './threads.js';
import { turnDelivered, turnGenerated, turnReleased } from './turnOutcomes.js';

/** Applies one event to the floor's state and returns its effects, in order. Never throws for bad input. */
export function handleEvent(state: FloorState, setup: FloorSetup, event: FloorEvent): FloorEffect[] {
  const effects: FloorEffect[] = [];
  // Time never runs backwards: a late event is treated as happening now.
  const at = Math.max(state.now, event.at);
  advance(state, setup, at, effects);
  switch (event.type) {
    case 'message':
      if (event.author.kind === 'avatar' && !state.presences.has(event.author.id)) {
        effects.push(
          rejection(
            at,
            'AVATAR_NOT_PRESENT',
            `Avatar ${event.author.id} is not present in ${state.channelId}; summon it first.`,
          ),
        );
        break;
      }
      // An avatar's message that is not a turn of this floor (another process's, a scripted line)
      // is an avatar message in the channel all the same.
      if (event.author.kind === 'avatar') countAvatarMessage(state, setup, at);
      decide(state, setup, event.at === at ? event : { ...event, at }, effects);
      break;
    case 'summon':
      summon(state, setup, at, event.avatarId, event.by, event.messageId, effects);
      break;
    case 'dismiss':
      dismiss(state, setup, at, event.avatarId, effects);
      break;
    case 'avatar.join':
      addToRoster(setup, event.avatar);
      if (event.present ?? true) ensurePresence(state, setup, event.avatar.id, at);
      break;
    // A tick only moves time forward, which advance() above has done.
    case 'turn.generated':
      turnGenerated(state, setup, at, event.turnId, effects);
      break;
    case 'turn.delivered':
      turnDelivered(state, setup, event.at === at ? event : { ...event, at }, effects);
      break;
    case 'turn.failed':
    case 'turn.aborted':
      turnReleased(
        state,
        setup,
        at,
        event.turnId,
        `${event.type === 'turn.failed' ? 'failed' : 'aborted'}: ${event.reason}`,
        effects,
      );
      break;
  }
  // A thread that ended early in this event may have been named by a turn the rest of the event
  // settled: the record is pruned again once the event is done (keeping the last one that ended).
  const lastEnded = effects.findLast((e) => e.type === 'thread.ended');
  if (lastEnded) forgetSettledThreads(state, lastEnded.threadId);
  return effects;
}
