import { capBlock, isCapReason, noticeCap } from './caps.js';
import { claimTurn } from './claims.js';
import type { FloorSetup } from './floorSetup.js';
import type { ClaimSpec, FloorState, ThreadState } from './floorState.js';
import type { BudgetLane, FloorEffect, SuppressionReason } from './floorTypes.js';
import { type Candidate, gate, rankOf } from './ladder.js';
import { threadHasRoom } from './threads.js';
import type { Utterance } from './utterance.js';

/** Rank bounds that take every candidate. */
export const ALL_RANKS = Number.NEGATIVE_INFINITY;
export const ALL_RANKS_END = Number.POSITIVE_INFINITY;

/** One message's walk down the ladder: who was tried, who answered, how many. */
export interface CandidatePass {
  readonly state: FloorState;
  readonly setup: FloorSetup;
  readonly u: Utterance;
  readonly effects: FloorEffect[];
  readonly thread: ThreadState | undefined;
  readonly human: boolean;
  /** An unaddressed message: one answer at most. */
  readonly single: boolean;
  readonly author: { id: string; name: string };
  claimed: boolean;
  answers: number;
  /** Avatars done with for this message (they answered, or nothing lets them). */
  readonly settled: string[];
  /** Avatars already reported as outranked once someone answered. */
  readonly outranked: string[];
}

/**
 * An avatar naming several others gets at most min(BOT_MENTION_CASCADE_LIMIT,
 * MAX_RESPONSES_PER_MESSAGE) answers, however many it named (the message that opens a thread
 * too); inside a live thread, at most MAX_RESPONSES_PER_MESSAGE (the thread's turn limit bounds
 * the rest). A person's message is bounded by its main lane.
 */
function answerCap(config: FloorSetup['config'], lane: BudgetLane): number {
  return lane === 'main'
    ? Number.POSITIVE_INFINITY
    : lane === 'thread'
      ? config.maxResponsesPerMessage
      : Math.min(config.botCascadeLimit, config.maxResponsesPerMessage);
}

/**
 * Tries the candidates whose rung ranks in [fromRank, toRank), in order. Each avatar answers at
 * most once. To a person's message it is tried at each rung it qualifies for, in ladder order,
 * until one may speak: a rung held back for its own reason (the summon rung's cooldown, a full
 * thread) does not hide the rungs below it (affinity, mention). A reason that holds for every rung
 * (busy, an exhausted budget) ends its candidacy, and so does any block for an avatar's message:
 * between avatars the best rung alone decides (loop freedom).
 */
export function tryCandidates(
  pass: CandidatePass,
  candidates: readonly Candidate[],
  fromRank: number,
  toRank: number,
): void {
  const { state, setup, u, effects, thread, human, single } = pass;
  const ranked = fromRank !== ALL_RANKS || toRank !== ALL_RANKS_END;
  const opening = !human && thread !== undefined && threadOpenedNow(effects, thread);
  for (const c of candidates) {
    if (ranked) {
      const rank = rankOf(setup, c.rung);
      if (rank < fromRank || rank >= toRank) continue;
    }
    if (pass.settled.includes(c.avatarId)) continue;
    if (single && pass.claimed) {
      if (pass.outranked.includes(c.avatarId)) continue;
      pass.outranked.push(c.avatarId);
    }
    const inThread =
      thread?.context.participants.includes(c.avatarId) === true &&
      (!human || c.rung === 'thread') &&
      threadHasRoom(state, thread);
    // Answers to a person draw on the main lane; between avatars, a turn inside a live thread is
    // budgeted by the thread (its turn limit and deadline), any other by the cascade lane. The
    // answers to the message that opened the thread are the cascade's too (and the thread's first
    // turns): BOT_MENTION_CASCADE_LIMIT bounds how many answer it; the others speak later, if at all.
    const lane: BudgetLane = human ? 'main' : inThread && !opening ? 'thread' : 'cascade';
    const blocked: SuppressionReason | null =
      single && pass.claimed
        ? 'lower-rung'
        : pass.answers >= answerCap(setup.config, lane)
          ? 'mention-cap'
          : gate(state, setup, c, lane, thread);
    if (blocked) {
      if (isCapReason(blocked)) suppressCapped(pass, c);
      else suppress(pass, c, blocked);
      // Someone addressed by name while mid-turn still owes an answer.
      if (blocked === 'busy' && !single) {
        state.deferred.set(c.avatarId, { spec: claimSpec(pass, c, lane, inThread), messageId: u.messageId });
        pass.answers++; // an answer owed counts against the cap as one given
      }
      if (!human || blocksEveryRung(blocked)) pass.settled.push(c.avatarId);
      continue;
    }
    claimTurn(state, setup, claimSpec(pass, c, lane, inThread), effects);
    pass.settled.push(c.avatarId);
    pass.answers++;
    pass.claimed = true;
  }
}

/** The claim a candidate makes (or owes) for this message. */
function claimSpec(pass: CandidatePass, c: Candidate, lane: BudgetLane, inThread: boolean): ClaimSpec {
  const { state, u, thread } = pass;
  return {
    avatarId: c.avatarId,
    kind: 'response',
    rung: c.rung,
    reason: c.reason,
    lane,
    anchorMessageId: state.budget.anchorMessageId ?? u.messageId,
    triggerMessageId: u.messageId,
    triggerText: u.text,
    threadId: inThread && thread ? thread.context.id : undefined,
    addressedBy: pass.author,
  };
}

/** True when the message being decided opened the thread: its `thread.opened` is among this event's effects. */
function threadOpenedNow(effects: readonly FloorEffect[], thread: ThreadState): boolean {
  const id = thread.context.id;
  for (let i = effects.length - 1; i >= 0; i--) {
    const e = effects[i];
    if (e?.type === 'thread.opened' && e.threadId === id) return true;
  }
  return false;
}

/** A reason that holds whatever rung the avatar is tried at. */
function blocksEveryRung(reason: SuppressionReason): boolean {
  return reason === 'busy' || reason === 'not-present' || reason.startsWith('budget-') || isCapReason(reason);
}

/** Rungs at which a person calls on an avatar by name (or by answering it): they hear of its cap. */
const CALLED = new Set(['reply', 'mention', 'summon']);

/** Reports that the candidate does not answer this message, and why. */
function suppress(pass: CandidatePass, c: Candidate, reason: SuppressionReason, detail?: string): void {
  const { u } = pass;
  const effect: FloorEffect = {
    type: 'candidate.suppressed',
    at: u.at,
    avatarId: c.avatarId,
    messageId: u.messageId,
    rung: c.rung,
    reason,
  };
  if (detail !== undefined) effect.detail = detail;
  pass.effects.push(effect);
}

/** A capped candidate: suppressed with the cap in words, and a person who called on it is told. */
function suppressCapped(pass: CandidatePass, c: Candidate): void {
  const { state, setup, u, effects } = pass;
  const block = capBlock(state, setup, c.avatarId);
  if (!block) return;
  suppress(pass, c, block.reason, block.detail);
  if (pass.human && CALLED.has(c.rung))
    noticeCap(state, setup, block, c.avatarId, pass.author, u.messageId, effects);
}
