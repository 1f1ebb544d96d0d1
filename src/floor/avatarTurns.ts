import { isFarewell } from '../textRules/farewell.js';
import { sentimentOf } from '../textRules/sentiment.js';
import type { FloorSetup } from './floorSetup.js';
import type { FloorState } from './floorState.js';
import type { FloorEffect, SuppressionReason } from './floorTypes.js';
import { backingOff, endedOutcome, latestThreadWith, stepThread, threadForAddress } from './threads.js';
import type { Utterance } from './utterance.js';

/** The thread an avatar's turn belonged to, when that turn ended it (or it had ended already). */
interface EndedThread {
  readonly id: string;
  /** Undefined when the turn landed after its thread had ended. */
  readonly participants: readonly string[] | undefined;
}

/**
 * Records an avatar's own turn (its goodbye, its turn in its thread), then opens or widens a
 * thread for the avatars it addressed. Returns the addressed avatars who may still answer, or
 * undefined when the turn draws no answer at all (a late turn of an ended thread).
 */
export function recordAvatarTurn(
  state: FloorState,
  setup: FloorSetup,
  u: Utterance,
  addressed: string[],
  effects: FloorEffect[],
): string[] | undefined {
  const authorId = u.author.id;
  const farewell = isFarewell(u.text);
  if (farewell) state.departed.set(authorId, u.at);
  else state.departed.delete(authorId);
  // An avatar who said goodbye is not drawn back into a conversation by another avatar.
  let candidates = addressed.filter((id) => {
    if (!state.departed.has(id)) return true;
    suppress(effects, u, id, 'said-goodbye');
    return false;
  });
  const ended = stepOwnThread(state, setup, u, addressed, farewell, effects);
  if (ended) {
    // The turn that ended a thread (goodbye, turn limit) does not restart it by naming a partner.
    candidates = candidates.filter((id) => {
      if (ended.participants !== undefined && !ended.participants.includes(id)) return true;
      suppress(effects, u, id, endedOutcome(state, ended.id));
      return false;
    });
    // A late turn of an ended thread draws no answer, in that thread or any other.
    if (ended.participants === undefined) return undefined;
  } else if (candidates.length > 0 && !farewell) {
    if (setup.config.botMentionCreateThread && !latestThreadWith(state, authorId)) {
      candidates = exceptBackingOff(state, u, candidates, effects);
    }
    if (candidates.length > 0) threadForAddress(state, setup, u, candidates, effects);
  }
  return candidates;
}

/** Steps the thread the turn was in; says which thread it ended, if any. */
function stepOwnThread(
  state: FloorState,
  setup: FloorSetup,
  u: Utterance,
  addressed: string[],
  farewell: boolean,
  effects: FloorEffect[],
): EndedThread | undefined {
  if (u.threadId === undefined) return undefined;
  const own = state.threads.get(u.threadId);
  // A turn that lands after its thread ended belongs to that thread: it opens none.
  if (!own) return { id: u.threadId, participants: undefined };
  stepThread(
    state,
    setup,
    own.context.id,
    {
      type: 'thread.turn',
      at: u.at,
      speakerId: u.author.id,
      addressed,
      farewell,
      sentiment: sentimentOf(u.text),
    },
    effects,
  );
  if (state.threads.has(own.context.id)) return undefined;
  return { id: own.context.id, participants: own.context.participants };
}

/**
 * A new thread between avatars who just ended one together waits out the backoff: whoever would
 * pair up with someone backing off (the author, or one named before) is not answered.
 */
function exceptBackingOff(
  state: FloorState,
  u: Utterance,
  candidates: string[],
  effects: FloorEffect[],
): string[] {
  const together = [u.author.id];
  return candidates.filter((id) => {
    if (!together.some((other) => backingOff(state, other, id, state.now))) {
      together.push(id);
      return true;
    }
    suppress(effects, u, id, 'thread-backoff');
    return false;
  });
}

function suppress(effects: FloorEffect[], u: Utterance, avatarId: string, reason: SuppressionReason): void {
  effects.push({ type: 'candidate.suppressed', at: u.at, avatarId, messageId: u.messageId, reason });
}
