import { isFarewell } from '../textRules/farewell.js';
import { wordsOf } from '../textRules/initiative.js';
import { sentimentOf } from '../textRules/sentiment.js';
import { openBudget } from './budgets.js';
import { claimTurn } from './claims.js';
import { authorName, type FloorSetup } from './floorSetup.js';
import type { ClaimSpec, FloorState, ThreadState } from './floorState.js';
import type { BudgetLane, FloorEffect, SuppressionReason } from './floorTypes.js';
import {
  ambientCandidates,
  type Candidate,
  gate,
  rankCandidates,
  rankOf,
  whyNoInitiative,
} from './ladder.js';
import { stepPresence } from './presences.js';
import {
  backingOff,
  endedOutcome,
  latestThreadWith,
  stepThread,
  threadForAddress,
  threadHasRoom,
  threadOfUtterance,
} from './threads.js';
import type { Utterance } from './utterance.js';

/**
 * The decision for one message (a person's, an avatar's, or an avatar's delivered turn): who it
 * addresses, the thread it belongs to or opens, and who answers. Addressed avatars all answer
 * (within the budget); otherwise the ladder picks exactly one, descending past candidates that may
 * not speak right now, each avatar at every rung it qualifies for. Every rung passed over is
 * reported with the reason.
 */
export function decide(state: FloorState, setup: FloorSetup, u: Utterance, effects: FloorEffect[]): void {
  const config = setup.config;
  const human = u.author.kind === 'human';
  const authorId = u.author.id;
  if (human) openBudget(state, setup, u.messageId);
  const addressedAll = setup.matcher.find(u.text, {
    platformMentions: u.mentions,
    replyToAvatarId: u.replyTo?.avatarId,
    authorId,
  });
  const addressed: string[] = [];
  for (const id of addressedAll) {
    if (state.presences.has(id)) addressed.push(id);
    else
      effects.push({
        type: 'candidate.suppressed',
        at: u.at,
        avatarId: id,
        messageId: u.messageId,
        reason: 'not-present',
      });
  }
  for (const id of addressed) {
    // A person reacting to a newly arrived avatar is whom its second follow-up answers (avatars
    // reacting are in its conversation already).
    const arrival = human ? state.arrivals.get(id) : undefined;
    if (arrival) arrival.reactedBy = { id: authorId, name: authorName(setup, u.author) };
    stepPresence(state, setup, id, {
      type: 'presence.mentioned',
      at: u.at,
      by: authorId,
      grantTurns: config.mentionGrantTurns,
    });
  }
  if (u.replyTo?.avatarId === authorId) {
    effects.push({
      type: 'candidate.suppressed',
      at: u.at,
      avatarId: authorId,
      messageId: u.messageId,
      rung: 'reply',
      reason: 'self',
    });
  }

  // Record the avatar's own turn in its thread, then open or widen a thread for whom it addressed.
  let candidatesAddressed: string[] = addressed;
  if (human) {
    // A person speaking to an avatar who took its leave brings it back.
    for (const id of addressed) state.departed.delete(id);
  } else {
    const farewell = isFarewell(u.text);
    if (farewell) state.departed.set(authorId, u.at);
    else state.departed.delete(authorId);
    // An avatar who said goodbye is not drawn back into a conversation by another avatar.
    candidatesAddressed = addressed.filter((id) => {
      if (!state.departed.has(id)) return true;
      effects.push({
        type: 'candidate.suppressed',
        at: u.at,
        avatarId: id,
        messageId: u.messageId,
        reason: 'said-goodbye',
      });
      return false;
    });
    let endedHere: { id: string; participants: readonly string[] | undefined } | undefined;
    const own = u.threadId !== undefined ? state.threads.get(u.threadId) : undefined;
    if (u.threadId !== undefined && !own) {
      // A turn that lands after its thread ended belongs to that thread: it opens none.
      endedHere = { id: u.threadId, participants: undefined };
    } else if (own) {
      stepThread(
        state,
        setup,
        own.context.id,
        {
          type: 'thread.turn',
          at: u.at,
          speakerId: authorId,
          addressed,
          farewell,
          sentiment: sentimentOf(u.text),
        },
        effects,
      );
      if (!state.threads.has(own.context.id))
        endedHere = { id: own.context.id, participants: own.context.participants };
    }
    if (endedHere) {
      // The turn that ended a thread (goodbye, turn limit) does not restart it by naming a partner.
      const ended = endedHere;
      candidatesAddressed = candidatesAddressed.filter((id) => {
        if (ended.participants !== undefined && !ended.participants.includes(id)) return true;
        effects.push({
          type: 'candidate.suppressed',
          at: u.at,
          avatarId: id,
          messageId: u.messageId,
          reason: endedOutcome(state, ended.id),
        });
        return false;
      });
      // A late turn of an ended thread draws no answer, in that thread or any other.
      if (ended.participants === undefined) return;
    } else if (candidatesAddressed.length > 0 && !farewell) {
      if (config.botMentionCreateThread && !latestThreadWith(state, authorId)) {
        // A new thread between avatars who just ended one together waits out the backoff: whoever
        // would pair up with someone backing off (the author, or one named before) is not answered.
        const together = [authorId];
        candidatesAddressed = candidatesAddressed.filter((id) => {
          if (!together.some((other) => backingOff(state, other, id, state.now))) {
            together.push(id);
            return true;
          }
          effects.push({
            type: 'candidate.suppressed',
            at: u.at,
            avatarId: id,
            messageId: u.messageId,
            reason: 'thread-backoff',
          });
          return false;
        });
      }
      if (candidatesAddressed.length > 0) threadForAddress(state, setup, u, candidatesAddressed, effects);
    }
  }

  if (addressed.length > 0 && candidatesAddressed.length === 0) return;
  if (addressedAll.length > 0 && addressed.length === 0) {
    // Spoken to avatars who are not here: nobody present answers in their place.
    for (const id of state.presences.keys()) {
      if (id === authorId) continue;
      effects.push({
        type: 'candidate.suppressed',
        at: u.at,
        avatarId: id,
        messageId: u.messageId,
        reason: 'addressed-absent',
      });
    }
    return;
  }
  const reportedFrom = effects.length;
  const thread = threadOfUtterance(state, u, candidatesAddressed);
  const single = addressed.length === 0;
  const pass: CandidatePass = {
    state,
    setup,
    u,
    effects,
    thread,
    human,
    single,
    author: { id: authorId, name: authorName(setup, u.author) },
    claimed: false,
    answers: 0,
    settled: [],
    outranked: [],
  };
  const ranked = rankCandidates(state, setup, u, candidatesAddressed, thread);
  if (!(human && single)) {
    tryCandidates(pass, ranked, ALL_RANKS, ALL_RANKS_END);
    return;
  }
  // The ambient rungs speak only to a human's unaddressed message that nobody above took; with
  // THREAD_RESPONSE_PRIORITY=low the thread rung waits below round-robin.
  const ambientRank = rankOf(setup, 'round-robin');
  tryCandidates(pass, ranked, ALL_RANKS, ambientRank);
  if (!pass.claimed) tryCandidates(pass, ambientCandidates(state, setup, u), ALL_RANKS, ALL_RANKS_END);
  tryCandidates(pass, ranked, ambientRank, ALL_RANKS_END);
  if (!pass.claimed) explainSilence(state, setup, u, effects, reportedFrom);
}

/** Rank bounds that take every candidate. */
const ALL_RANKS = Number.NEGATIVE_INFINITY;
const ALL_RANKS_END = Number.POSITIVE_INFINITY;

/** One message's walk down the ladder: who was tried, who answered, how many. */
interface CandidatePass {
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
 * MAX_RESPONSES_PER_MESSAGE) answers, however many it named; inside a live thread, at
 * most MAX_RESPONSES_PER_MESSAGE (the thread's turn limit bounds the rest). A person's message is
 * bounded by its main lane.
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
function tryCandidates(
  pass: CandidatePass,
  candidates: readonly Candidate[],
  fromRank: number,
  toRank: number,
): void {
  const { state, setup, u, effects, thread, human, single } = pass;
  const ranked = fromRank !== ALL_RANKS || toRank !== ALL_RANKS_END;
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
    // budgeted by the thread (its turn limit and deadline), any other by the cascade lane.
    const lane: BudgetLane = human ? 'main' : inThread ? 'thread' : 'cascade';
    const blocked: SuppressionReason | null =
      single && pass.claimed
        ? 'lower-rung'
        : pass.answers >= answerCap(setup.config, lane)
          ? 'mention-cap'
          : gate(state, setup, c, lane, thread);
    if (blocked) {
      effects.push({
        type: 'candidate.suppressed',
        at: u.at,
        avatarId: c.avatarId,
        messageId: u.messageId,
        rung: c.rung,
        reason: blocked,
      });
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

/**
 * Nobody answered a person's message: every present avatar not already reported for it is, with
 * why it took no ambient turn, so "who could have answered, and why not" is always on record.
 */
function explainSilence(
  state: FloorState,
  setup: FloorSetup,
  u: Utterance,
  effects: FloorEffect[],
  reportedFrom: number,
): void {
  const reported = new Set<string>();
  for (let i = reportedFrom; i < effects.length; i++) {
    const e = effects[i];
    if (e?.type === 'candidate.suppressed') reported.add(e.avatarId);
  }
  let words: string[] | undefined;
  for (const id of state.presences.keys()) {
    if (reported.has(id)) continue; // a person wrote it: no present avatar is its author
    words ??= wordsOf(u.text);
    const why = whyNoInitiative(state, setup, id, words);
    effects.push({
      type: 'candidate.suppressed',
      at: u.at,
      avatarId: id,
      messageId: u.messageId,
      rung: 'initiative',
      reason: why.reason,
      detail: why.detail,
    });
  }
}

/** A reason that holds whatever rung the avatar is tried at. */
function blocksEveryRung(reason: SuppressionReason): boolean {
  return reason === 'busy' || reason === 'not-present' || reason.startsWith('budget-');
}
