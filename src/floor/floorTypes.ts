/**
 * The vocabulary of a channel floor: what goes in (events), what comes out (effects), and the
 * records that explain every decision. Everything here is plain, JSON-serialisable data.
 */

import type { ThreadMode } from '../machines/conversationThread.machine.js';
import type { Rung } from '../machines/rungOrder.js';

export type { Rung, ThreadMode };

/** An avatar the channel knows about: who it is and how people address it. */
export interface AvatarProfile {
  /** Stable id; platform mentions carry it. */
  id: string;
  /** Display name; matched as whole words, case-insensitively. */
  name: string;
  /** Optional emoji that also addresses the avatar. */
  emoji?: string | undefined;
  /** Other names the avatar answers to (whole-word matches too). */
  aliases?: string[] | undefined;
  /** A sentence or two of persona; offline replies and prompts draw on it. */
  persona?: string | undefined;
  /** Topics the avatar cares about; the initiative rung matches message words against them. */
  topics?: string[] | undefined;
}

/** Who wrote a message. Only a human message opens a new response budget. */
export type Author = { kind: 'human'; id: string; name: string } | { kind: 'avatar'; id: string };

/** What kind of utterance a turn is. */
export type TurnKind = 'greeting' | 'follow-up' | 'response';

/**
 * Which budget lane a turn draws from: `main` for answers to a human message, `cascade` for
 * answers to an avatar's message (both anchored to the latest human message), `scheduled` for a
 * summon's greeting and its one follow-up (bounded by construction: two per summon).
 */
/**
 * What pays for a turn: `main` (answers to a person's message), `cascade` (answers to avatars
 * outside threads), `thread` (turns between avatars inside a live thread, bounded by the thread's
 * turn limit and deadline) or `scheduled` (greetings and follow-ups).
 */
export type BudgetLane = 'main' | 'cascade' | 'thread' | 'scheduled';

/** How a conversation thread ended. */
export type ThreadOutcome = 'expired' | 'exhausted' | 'concluded';

/** Why a candidate that qualified for a rung did not get the turn. */
export type SuppressionReason =
  | 'self'
  | 'not-present'
  | 'busy'
  | 'cooldown'
  | 'budget-main'
  | 'budget-cascade'
  | 'thread-exhausted'
  | 'thread-ended'
  | 'lower-rung'
  /** An avatar's message already has min(BOT_MENTION_CASCADE_LIMIT, MAX_RESPONSES_PER_MESSAGE) answers. */
  | 'mention-cap'
  /** The avatar said goodbye; only a person (or a summon) brings it back into a conversation. */
  | 'said-goodbye'
  /** The two avatars ended a thread together moments ago and wait before another (THREAD_BACKOFF_BASE). */
  | 'thread-backoff'
  /** The message named only avatars who are not here: nobody answers in their place. */
  | 'addressed-absent'
  | 'no-initiative'
  | CapReason;

/**
 * A cap the avatar reached: avatar messages in this channel in the last hour, or the tokens or
 * estimated cost of the UTC day, the avatar's own or everyone's together.
 */
export type CapReason =
  | 'cap-channel-hour'
  | 'cap-avatar-tokens'
  | 'cap-avatar-cost'
  | 'cap-total-tokens'
  | 'cap-total-cost';

/** Inputs to a channel floor. Every event carries the time it happened (`at`, epoch ms). */
export type FloorEvent =
  | {
      type: 'message';
      at: number;
      messageId: string;
      author: Author;
      text: string;
      /** Avatar ids the platform says were mentioned (Discord `<@id>`), checked before names. */
      mentions?: string[];
      /** The message this one replies to, and the avatar that wrote it, if any. */
      replyTo?: { messageId: string; avatarId?: string | undefined };
    }
  | { type: 'summon'; at: number; avatarId: string; by: { id: string; name: string }; messageId?: string }
  | { type: 'dismiss'; at: number; avatarId: string }
  | { type: 'avatar.join'; at: number; avatar: AvatarProfile; present?: boolean }
  | { type: 'tick'; at: number }
  | { type: 'turn.generated'; at: number; turnId: string }
  | {
      type: 'turn.delivered';
      at: number;
      turnId: string;
      messageId: string;
      text: string;
      /**
       * The avatar that spoke it. The floor reads the turn's own claim; this is for the channel's
       * history, which a restore rebuilds from the ledger even when the turn was released first.
       */
      avatarId?: string;
      mentions?: string[];
      replyTo?: { messageId: string; avatarId?: string | undefined };
    }
  | { type: 'turn.failed'; at: number; turnId: string; reason: string }
  | { type: 'turn.aborted'; at: number; turnId: string; reason: string };

/** A turn the floor has granted: the avatar may now generate and deliver one message. */
export interface TurnClaim {
  turnId: string;
  channelId: string;
  avatarId: string;
  kind: TurnKind;
  /** The rung that chose this avatar. */
  rung: Rung;
  /** A sentence saying why, for transcripts and logs. */
  reason: string;
  lane: BudgetLane;
  /** The human message whose budget this turn draws on. */
  anchorMessageId: string;
  /** The message being answered, if any (absent for scheduled summon turns). */
  triggerMessageId?: string | undefined;
  /** The thread this turn belongs to, if any. */
  threadId?: string | undefined;
  claimedAt: number;
  /** Context a generator can use: who addressed the avatar, who else is present. */
  context: TurnContext;
}

/** What a generator needs to know about the moment a turn was granted. */
export interface TurnContext {
  triggerText?: string | undefined;
  /** Name of whoever wrote the message being answered. */
  addressedByName?: string | undefined;
  addressedById?: string | undefined;
  /** Other avatars present in the channel (names). */
  presentNames: string[];
  /** Other participants of the thread (names), if the turn is in a thread. */
  threadPartnerNames: string[];
  /** 1-based turn number within the thread once delivered, and the thread's limit. */
  threadTurn?: number | undefined;
  threadMaxTurns?: number | undefined;
  /**
   * True when this is the last turn the budget or the thread allows: a generator should wrap up
   * (and may say goodbye) rather than ask a question nobody will be allowed to answer.
   */
  closing: boolean;
  /** Longest text this turn may deliver (set for greetings: GREETING_MAX_CHARS). */
  maxChars?: number | undefined;
  /** The thread's mood so far (mean sentiment per turn), when it has scored turns. */
  threadMood?: 'warm' | 'tense' | 'neutral' | undefined;
  /**
   * Set on the greeting of an avatar summoned while already present: it acknowledges being
   * called rather than greeting as if it had just arrived.
   */
  alreadyPresent?: true | undefined;
}

/** Outputs of a channel floor, in the order they happened. */
export type FloorEffect =
  | { type: 'turn.claimed'; at: number; turn: TurnClaim }
  | {
      type: 'turn.consumed';
      at: number;
      turnId: string;
      avatarId: string;
      rung: Rung;
      threadId?: string;
      messageId: string;
      /** Guaranteed turns the avatar holds after this one, when this turn spent one. */
      summonTurnsLeft?: number;
    }
  | { type: 'turn.released'; at: number; turnId: string; avatarId: string; reason: string }
  | {
      type: 'candidate.suppressed';
      at: number;
      avatarId: string;
      messageId: string;
      rung?: Rung;
      reason: SuppressionReason;
      /** The reason in words, where a number explains it (a score against its threshold, a cooldown). */
      detail?: string;
    }
  | {
      type: 'thread.opened';
      at: number;
      threadId: string;
      mode: ThreadMode;
      participants: string[];
      maxTurns: number;
      expiresAt: number;
    }
  | {
      type: 'thread.ended';
      at: number;
      threadId: string;
      outcome: ThreadOutcome;
      detail: string;
      turns: number;
      /** Mean sentiment per turn (AFINN valence; above 0 warm, below tense), when any turn was scored. */
      sentiment?: number;
    }
  | {
      /**
       * A person addressed an avatar that reached a cap: one short notice per person and avatar per
       * reset window (unless `TROUPE_CAP_NOTICE` is `silent`).
       */
      type: 'cap.notice';
      at: number;
      avatarId: string;
      /** The person's message. */
      messageId: string;
      to: { id: string; name: string };
      reason: CapReason;
      detail: string;
      /** When the cap lets the avatar speak again (epoch ms). */
      resetsAt: number;
    }
  | { type: 'presence.summoned'; at: number; avatarId: string; turnsGranted: number }
  | { type: 'presence.dismissed'; at: number; avatarId: string }
  | { type: 'event.rejected'; at: number; code: string; message: string };
