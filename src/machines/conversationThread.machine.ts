import { assign, setup } from 'xstate';
import type { ThreadSentiment } from '../textRules/sentiment.js';

/** How a thread started. */
export type ThreadMode = 'mention' | 'summon' | 'reply';

/** What a thread is started with. */
export interface ConversationThreadInput {
  id: string;
  channelId: string;
  mode: ThreadMode;
  participants: string[];
  maxTurns: number;
  ttlMs: number;
  quietMs: number;
  extendOnActivity: boolean;
  /** How far each turn pushes the deadline out from its time (by default half the TTL). */
  extensionMs: number;
  at: number;
}

/** A thread's data. Deadlines are absolute, so a restored thread ends on time (docs/architecture.md, invariant 4). */
export interface ConversationThreadContext {
  id: string;
  channelId: string;
  mode: ThreadMode;
  participants: string[];
  /** Participants who said goodbye; they no longer count towards keeping the thread alive. */
  departed: string[];
  maxTurns: number;
  ttlMs: number;
  quietMs: number;
  extendOnActivity: boolean;
  /** How far each turn pushes the deadline out from its time. */
  extensionMs: number;
  turnCount: number;
  startedAt: number;
  /** Latest time the thread has seen; time comes only from events. */
  now: number;
  lastActivityAt: number;
  /** Absolute expiry deadline, pushed out by activity when `extendOnActivity`. */
  expiresAt: number;
  /** When the last turn addressed nobody: the moment the thread concludes by quiet, if nothing follows. */
  quietDeadline: number | null;
  lastSpeakerId: string | null;
  /** How the thread ended, in words, once it has. */
  detail: string | null;
  /** Sentiment of its turns so far. */
  sentiment: ThreadSentiment;
}

/** Events a thread understands. */
export type ConversationThreadEvent =
  | {
      type: 'thread.turn';
      at: number;
      speakerId: string;
      addressed: string[];
      farewell: boolean;
      /** The turn's sentiment (see `sentimentOf`), when scored. */
      sentiment?: number;
    }
  | { type: 'thread.join'; at: number; avatarId: string }
  | { type: 'thread.leave'; at: number; avatarId: string }
  | { type: 'thread.tick'; at: number };

// When the last turn addressed nobody, whichever deadline comes first ends the thread naturally:
// nobody was left waiting for an answer.
const quietFirst = (c: ConversationThreadContext) =>
  c.quietDeadline !== null && c.now >= Math.min(c.quietDeadline, c.expiresAt);

const remaining = (c: ConversationThreadContext) => c.participants.filter((p) => !c.departed.includes(p));

/**
 * A conversation thread between avatars (solution 2): participants, mode, turn count
 * and limit, an absolute expiry deadline extended on activity, and the last speaker. It ends in
 * one of three final states and says why in `detail`:
 * - `exhausted`: the turn limit was reached;
 * - `concluded`: a natural exit — participants said goodbye, or the last turn addressed nobody
 *   and the thread stayed quiet for `quietMs`;
 * - `expired`: the deadline passed while someone was still being addressed (a last turn that
 *   addressed nobody ends the thread as `concluded` instead, at whichever deadline comes first).
 *
 * Pure: time comes from each event's `at`; the runtime sends `thread.tick` at the next deadline.
 */
export const conversationThreadMachine = setup({
  types: {
    context: {} as ConversationThreadContext,
    events: {} as ConversationThreadEvent,
    input: {} as ConversationThreadInput,
  },
  guards: {
    turnLimitReached: ({ context }) => context.turnCount >= context.maxTurns,
    everyoneLeft: ({ context }) => context.departed.length > 0 && remaining(context).length < 2,
    quietPassed: ({ context }) => quietFirst(context),
    deadlinePassed: ({ context }) => !quietFirst(context) && context.now >= context.expiresAt,
    // A turn delivered after a deadline does not count: the thread had already ended.
    turnInTime: ({ context, event }) =>
      event.type === 'thread.turn' &&
      event.at < context.expiresAt &&
      (context.quietDeadline === null || event.at < context.quietDeadline),
  },
  actions: {
    advanceClock: assign({ now: ({ context, event }) => Math.max(context.now, event.at) }),
    recordTurn: assign(({ context, event }) => {
      if (event.type !== 'thread.turn') return {};
      const participants = context.participants.includes(event.speakerId)
        ? context.participants
        : [...context.participants, event.speakerId];
      // Someone who already said goodbye is not waiting for an answer.
      const addressedOthers = event.addressed.filter(
        (a) => a !== event.speakerId && !context.departed.includes(a),
      );
      return {
        participants,
        turnCount: context.turnCount + 1,
        lastSpeakerId: event.speakerId,
        lastActivityAt: event.at,
        expiresAt: context.extendOnActivity
          ? Math.max(context.expiresAt, event.at + context.extensionMs)
          : context.expiresAt,
        quietDeadline: addressedOthers.length === 0 ? event.at + context.quietMs : null,
        departed:
          event.farewell && !context.departed.includes(event.speakerId)
            ? [...context.departed, event.speakerId]
            : context.departed,
        sentiment:
          event.sentiment === undefined
            ? context.sentiment
            : {
                sum: context.sentiment.sum + event.sentiment,
                turns: context.sentiment.turns + 1,
              },
      };
    }),
    addParticipant: assign(({ context, event }) => {
      if (event.type !== 'thread.join' || context.participants.includes(event.avatarId)) return {};
      return { participants: [...context.participants, event.avatarId] };
    }),
    markDeparted: assign(({ context, event }) => {
      if (event.type !== 'thread.leave' || context.departed.includes(event.avatarId)) return {};
      if (!context.participants.includes(event.avatarId)) return {};
      return { departed: [...context.departed, event.avatarId] };
    }),
    describeExhausted: assign({ detail: ({ context }) => `turn limit of ${context.maxTurns} reached` }),
    describeFarewell: assign({ detail: () => 'participants said goodbye' }),
    describeQuiet: assign({
      detail: ({ context }) =>
        context.quietDeadline !== null && context.quietDeadline <= context.expiresAt
          ? `nobody was addressed for ${Math.round(context.quietMs / 1000)}s`
          : 'nobody was waiting for an answer when the deadline came',
    }),
    describeExpired: assign({ detail: ({ context }) => `deadline passed after ${context.turnCount} turns` }),
  },
}).createMachine({
  id: 'conversationThread',
  context: ({ input }) => ({
    id: input.id,
    channelId: input.channelId,
    mode: input.mode,
    participants: [...new Set(input.participants)],
    departed: [],
    maxTurns: input.maxTurns,
    ttlMs: input.ttlMs,
    quietMs: input.quietMs,
    extendOnActivity: input.extendOnActivity,
    extensionMs: input.extensionMs,
    turnCount: 0,
    startedAt: input.at,
    now: input.at,
    lastActivityAt: input.at,
    expiresAt: input.at + input.ttlMs,
    quietDeadline: null,
    lastSpeakerId: null,
    detail: null,
    sentiment: { sum: 0, turns: 0 },
  }),
  initial: 'active',
  states: {
    active: {
      always: [
        { guard: 'turnLimitReached', target: 'exhausted', actions: 'describeExhausted' },
        { guard: 'everyoneLeft', target: 'concluded', actions: 'describeFarewell' },
        { guard: 'quietPassed', target: 'concluded', actions: 'describeQuiet' },
        { guard: 'deadlinePassed', target: 'expired', actions: 'describeExpired' },
      ],
      on: {
        'thread.turn': [
          { guard: 'turnInTime', actions: ['advanceClock', 'recordTurn'] },
          { actions: 'advanceClock' },
        ],
        'thread.join': { actions: ['advanceClock', 'addParticipant'] },
        'thread.leave': { actions: ['advanceClock', 'markDeparted'] },
        'thread.tick': { actions: 'advanceClock' },
      },
    },
    expired: { type: 'final' },
    exhausted: { type: 'final' },
    concluded: { type: 'final' },
  },
});

/** The thread's next deadline (quiet conclusion or expiry), for the scheduler. */
export function threadDeadline(context: ConversationThreadContext): number {
  return context.quietDeadline !== null
    ? Math.min(context.quietDeadline, context.expiresAt)
    : context.expiresAt;
}
