import { attentionAt } from '../machines/attention.js';
import { guaranteedTurns, hasAffinity } from '../machines/avatarPresence.machine.js';
import { initiativeScore, wordsOf } from '../textRules/initiative.js';
import { laneExhausted } from './budgets.js';
import { capBlock } from './caps.js';
import { authorName, type FloorSetup, nameOf } from './floorSetup.js';
import type { FloorState, ThreadState } from './floorState.js';
import type { BudgetLane, Rung, SuppressionReason } from './floorTypes.js';
import { presenceTurnState } from './presences.js';
import { threadHasRoom } from './threads.js';
import type { Utterance } from './utterance.js';

/** An avatar that qualifies to answer at one rung (an avatar may qualify at several). */
export interface Candidate {
  avatarId: string;
  rung: Rung;
  reason: string;
  /**
   * Position among addressed avatars (deterministic tie-breaking). Unaddressed candidates share one
   * position after them: at most one unaddressed avatar qualifies per rung.
   */
  order: number;
}

/** A rung's rank (lower is higher priority). */
export function rankOf(setup: FloorSetup, rung: Rung): number {
  return setup.ranks.get(rung) ?? 99;
}

/**
 * Candidates for an utterance at every rung each qualifies for, best first (the response ladder).
 * An avatar appears once per rung, so a rung that is blocked right now (a cooldown, a
 * full thread) does not hide the rungs below it: the avatar a person is talking to is still tried
 * on affinity or mention when its summon rung waits.
 */
export function rankCandidates(
  state: FloorState,
  setup: FloorSetup,
  u: Utterance,
  addressed: readonly string[],
  thread: ThreadState | undefined,
): Candidate[] {
  const human = u.author.kind === 'human';
  const authorId = u.author.id;
  const author = authorName(setup, u.author);
  const offered: Candidate[] = [];
  const offer = (avatarId: string, rung: Rung, reason: string) => {
    if (avatarId === authorId || !state.presences.has(avatarId)) return;
    const idx = addressed.indexOf(avatarId);
    const order = idx >= 0 ? idx : addressed.length;
    offered.push({ avatarId, rung, reason, order });
  };

  const replyTo = u.replyTo?.avatarId;
  if (replyTo !== undefined)
    offer(replyTo, 'reply', `${author} replied to ${nameOf(setup, replyTo)}'s message`);

  if (thread) {
    const t = thread.context;
    const eligible = t.participants.filter(
      (p) => p !== authorId && p !== t.lastSpeakerId && !t.departed.includes(p),
    );
    const chosen =
      addressed.length > 0
        ? eligible.filter((p) => addressed.includes(p))
        : u.announcement
          ? []
          : leastRecentSpeaker(state, eligible);
    for (const p of chosen) {
      offer(
        p,
        'thread',
        `${nameOf(setup, p)} is in ${t.mode} thread ${t.id} (${t.turnCount} of ${t.maxTurns} turns used) and did not speak last`,
      );
    }
  }

  if (human && addressed.length === 0) {
    const summoned = mostRecentlySummonedWithTurns(state);
    if (summoned) {
      const snap = state.presences.get(summoned);
      const turns = snap ? guaranteedTurns(snap.context, state.now) : 0;
      offer(
        summoned,
        'summon',
        `${nameOf(setup, summoned)} has ${turns} guaranteed summon turn${turns === 1 ? '' : 's'} left`,
      );
    }
    const sticky = stickyAvatarFor(state, authorId);
    if (sticky) offer(sticky, 'affinity', `${author} has been talking to ${nameOf(setup, sticky)}`);
  }

  for (const id of addressed) offer(id, 'mention', `${nameOf(setup, id)} was mentioned by ${author}`);

  return offered.sort((a, b) => rankOf(setup, a.rung) - rankOf(setup, b.rung) || a.order - b.order);
}

/**
 * Round-robin among active speakers, else the best initiative score above the threshold. Only a
 * person's message reaches the ambient rungs, so the author is never among the avatars tried.
 */
export function ambientCandidates(state: FloorState, setup: FloorSetup, u: Utterance): Candidate[] {
  const author = authorName(setup, u.author);
  const rr = roundRobinSpeaker(state, setup);
  if (rr) {
    return [
      {
        avatarId: rr,
        rung: 'round-robin',
        reason: `${nameOf(setup, rr)}'s turn among the active speakers after ${author}`,
        order: 0,
      },
    ];
  }
  const initiative = bestInitiative(state, setup, u.text);
  return initiative ? [{ ...initiative, rung: 'initiative', order: 0 }] : [];
}

/** Why a candidate may not take the turn now, or null if it may. */
export function gate(
  state: FloorState,
  setup: FloorSetup,
  c: Candidate,
  lane: BudgetLane,
  thread: ThreadState | undefined,
): SuppressionReason | null {
  const presence = state.presences.get(c.avatarId);
  if (!presence) return 'not-present';
  if (presenceTurnState(state, c.avatarId) !== 'ready') return 'busy';
  const p = presence.context;
  const now = state.now;
  const config = setup.config;
  switch (c.rung) {
    case 'thread':
      if (!config.threadOverrideCooldown && now < p.cooldownUntil) return 'cooldown';
      if (!thread || !threadHasRoom(state, thread)) return 'thread-exhausted';
      break;
    case 'summon':
      if (p.lastSpokeAt !== null && now < p.lastSpokeAt + config.recentSummonCooldownMs) return 'cooldown';
      break;
    default:
      // Replies, mentions and affinity answer through the cooldown; round-robin and initiative
      // candidates are chosen among avatars that are not cooling down.
      break;
  }
  return laneExhausted(state, lane) ?? capBlock(state, setup, c.avatarId)?.reason ?? null;
}

function leastRecentSpeaker(state: FloorState, ids: readonly string[]): string[] {
  let pick: string | undefined;
  let pickAt = Number.POSITIVE_INFINITY;
  for (const id of ids) {
    const spoke = state.presences.get(id)?.context.lastSpokeAt ?? Number.NEGATIVE_INFINITY;
    if (spoke < pickAt) {
      pick = id;
      pickAt = spoke;
    }
  }
  return pick === undefined ? [] : [pick];
}

/** The avatar holding guaranteed turns that were granted most recently (summon or mention). */
function mostRecentlySummonedWithTurns(state: FloorState): string | undefined {
  let pick: string | undefined;
  let grantedAt = Number.NEGATIVE_INFINITY;
  for (const [id, snap] of state.presences) {
    const c = snap.context;
    if (guaranteedTurns(c, state.now) > 0 && c.grantedAt !== null && c.grantedAt > grantedAt) {
      pick = id;
      grantedAt = c.grantedAt;
    }
  }
  return pick;
}

function stickyAvatarFor(state: FloorState, userId: string): string | undefined {
  let pick: string | undefined;
  let until = -1;
  for (const [id, snap] of state.presences) {
    if (!hasAffinity(snap.context, userId, state.now)) continue;
    const u = snap.context.affinity[userId] ?? 0;
    if (u > until) {
      pick = id;
      until = u;
    }
  }
  return pick;
}

/** Among avatars that spoke within the active-speaker window, the one that spoke longest ago. */
function roundRobinSpeaker(state: FloorState, setup: FloorSetup): string | undefined {
  let pick: string | undefined;
  let pickAt = Number.POSITIVE_INFINITY;
  let active = 0;
  const now = state.now;
  for (const [id, snap] of state.presences) {
    const spoke = snap.context.lastSpokeAt;
    if (spoke === null || now - spoke > setup.config.activeSpeakerWindowMs) continue;
    active++;
    if (now < snap.context.cooldownUntil) continue;
    if (spoke < pickAt) {
      pick = id;
      pickAt = spoke;
    }
  }
  return active >= 2 ? pick : undefined;
}

/**
 * Why a present avatar took no ambient turn for a message nobody answered: busy, cooling down, or
 * its initiative score below the threshold (with the score, so the silence is explained).
 */
export function whyNoInitiative(
  state: FloorState,
  setup: FloorSetup,
  avatarId: string,
  words: readonly string[],
): { reason: SuppressionReason; detail: string } {
  const snap = state.presences.get(avatarId);
  if (!snap) return { reason: 'not-present', detail: `${nameOf(setup, avatarId)} is not here` };
  if (presenceTurnState(state, avatarId) !== 'ready')
    return { reason: 'busy', detail: `${nameOf(setup, avatarId)} is answering something else` };
  const c = snap.context;
  const now = state.now;
  if (now < c.cooldownUntil)
    return {
      reason: 'cooldown',
      detail: `${nameOf(setup, avatarId)} is cooling down for ${Math.ceil((c.cooldownUntil - now) / 1000)}s more`,
    };
  const config = setup.config;
  const s = initiativeScore({
    attention: attentionAt(c.attention, now, config.attentionHalfLifeMs),
    lastSpokeAt: c.lastSpokeAt,
    now,
    windowMs: config.activeSpeakerWindowMs,
    topics: setup.roster.get(avatarId)?.topics,
    words,
  });
  return {
    reason: 'no-initiative',
    detail: `${nameOf(setup, avatarId)}'s initiative ${s.score.toFixed(2)} (attention ${s.attention.toFixed(2)}, hunger ${s.hunger.toFixed(2)}, topic ${s.topic.toFixed(2)}) < ${config.initiativeThreshold}`,
  };
}

function bestInitiative(
  state: FloorState,
  setup: FloorSetup,
  text: string,
): { avatarId: string; reason: string } | undefined {
  const words = wordsOf(text);
  const config = setup.config;
  const now = state.now;
  let best: { avatarId: string; score: number; reason: string } | undefined;
  for (const [id, snap] of state.presences) {
    if (now < snap.context.cooldownUntil) continue;
    const c = snap.context;
    const s = initiativeScore({
      attention: attentionAt(c.attention, now, config.attentionHalfLifeMs),
      lastSpokeAt: c.lastSpokeAt,
      now,
      windowMs: config.activeSpeakerWindowMs,
      topics: setup.roster.get(id)?.topics,
      words,
    });
    if (s.score < config.initiativeThreshold) continue;
    if (!best || s.score > best.score) {
      best = {
        avatarId: id,
        score: s.score,
        reason: `${nameOf(setup, id)}'s initiative ${s.score.toFixed(2)} (attention ${s.attention.toFixed(2)}, hunger ${s.hunger.toFixed(2)}, topic ${s.topic.toFixed(2)}) ≥ ${config.initiativeThreshold}`,
      };
    }
  }
  return best;
}
