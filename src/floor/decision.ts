import { wordsOf } from '../textRules/initiative.js';
import { recordAvatarTurn } from './avatarTurns.js';
import { openBudget } from './budgets.js';
import { ALL_RANKS, ALL_RANKS_END, type CandidatePass, tryCandidates } from './candidatePass.js';
import { authorName, type FloorSetup } from './floorSetup.js';
import type { FloorState } from './floorState.js';
import type { FloorEffect } from './floorTypes.js';
import { ambientCandidates, rankCandidates, rankOf, whyNoInitiative } from './ladder.js';
import { stepPresence } from './presences.js';
import { threadOfUtterance } from './threads.js';
import type { Utterance } from './utterance.js';

/**
 * The decision for one message (a person's, an avatar's, or an avatar's delivered turn): who it
 * addresses, the thread it belongs to or opens, and who answers. Addressed avatars all answer
 * (within the budget); otherwise the ladder picks exactly one, descending past candidates that may
 * not speak right now, each avatar at every rung it qualifies for. Every rung passed over is
 * reported with the reason.
 */
export function decide(state: FloorState, setup: FloorSetup, u: Utterance, effects: FloorEffect[]): void {
  const human = u.author.kind === 'human';
  const authorId = u.author.id;
  if (human) openBudget(state, setup, u.messageId);
  const addressedAll = setup.matcher.find(u.text, {
    platformMentions: u.mentions,
    replyToAvatarId: u.replyTo?.avatarId,
    authorId,
  });
  const addressed = noteAddressed(state, setup, u, addressedAll, effects);
  let candidatesAddressed: string[] = addressed;
  if (human) {
    // A person speaking to an avatar who took its leave brings it back.
    for (const id of addressed) state.departed.delete(id);
  } else {
    const candidates = recordAvatarTurn(state, setup, u, addressed, effects);
    if (candidates === undefined) return;
    candidatesAddressed = candidates;
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
  findAnswerers(state, setup, u, addressed.length === 0, candidatesAddressed, effects);
}

/**
 * The addressed avatars who are present (the others reported as not present), each told it was
 * mentioned; an avatar replying to itself is reported too.
 */
function noteAddressed(
  state: FloorState,
  setup: FloorSetup,
  u: Utterance,
  addressedAll: readonly string[],
  effects: FloorEffect[],
): string[] {
  const human = u.author.kind === 'human';
  const authorId = u.author.id;
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
      grantTurns: setup.config.mentionGrantTurns,
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
  return addressed;
}

/** Walks the ladder for the message: the addressed candidates, then (for a person) the ambient rungs. */
function findAnswerers(
  state: FloorState,
  setup: FloorSetup,
  u: Utterance,
  single: boolean,
  candidatesAddressed: string[],
  effects: FloorEffect[],
): void {
  const human = u.author.kind === 'human';
  const reportedFrom = effects.length;
  const thread = threadOfUtterance(state, u, candidatesAddressed);
  const pass: CandidatePass = {
    state,
    setup,
    u,
    effects,
    thread,
    human,
    single,
    author: { id: u.author.id, name: authorName(setup, u.author) },
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
