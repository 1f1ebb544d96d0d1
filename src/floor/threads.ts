import type { ConversationThreadEvent } from '../machines/conversationThread.machine.js';
import { meanSentiment } from '../textRules/sentiment.js';
import type { FloorSetup } from './floorSetup.js';
import type { FloorState, ThreadState } from './floorState.js';
import type { FloorEffect, SuppressionReason, ThreadMode, ThreadOutcome } from './floorTypes.js';
import type { Utterance } from './utterance.js';

/**
 * Most ended threads a floor remembers. An ended thread is kept only while a pending turn (in
 * flight, owed or a greeting waiting) may still name it, plus the one that just ended; this cap
 * bounds even a floor with many turns pending.
 */
export const ENDED_THREADS_REMEMBERED = 16;

/**
 * Forgets the ended threads no pending turn can name any more (all but `keep`), so the record of
 * ended threads stays as small as what is still in flight instead of filling to its cap.
 */
export function forgetSettledThreads(state: FloorState, keep: string): void {
  if (state.endedThreads.size <= 1) return;
  const named = new Set<string>([keep]);
  for (const claim of state.inFlight.values()) if (claim.threadId !== undefined) named.add(claim.threadId);
  for (const owed of state.deferred.values())
    if (owed.spec.threadId !== undefined) named.add(owed.spec.threadId);
  for (const spec of state.pendingGreetings.values())
    if (spec.threadId !== undefined) named.add(spec.threadId);
  for (const id of state.endedThreads.keys()) if (!named.has(id)) state.endedThreads.delete(id);
}

/** Opens a thread and reports it; returns its id. */
export function openThread(
  state: FloorState,
  setup: FloorSetup,
  mode: ThreadMode,
  participants: string[],
  maxTurns: number,
  ttlMs: number,
  at: number,
  effects: FloorEffect[],
): string {
  const id = `${state.channelId}:th${++state.threadSeq}`;
  const snap = setup.engine.thread.initial({
    id,
    channelId: state.channelId,
    mode,
    participants,
    maxTurns,
    ttlMs,
    quietMs: setup.config.threadQuietMs,
    extendOnActivity: setup.config.threadExtendOnActivity,
    extensionMs: extensionFor(setup.config.threadActivityExtension, ttlMs),
    at,
  });
  state.threads.set(id, snap);
  effects.push({
    type: 'thread.opened',
    at,
    threadId: id,
    mode,
    participants: [...snap.context.participants],
    maxTurns,
    expiresAt: snap.context.expiresAt,
  });
  return id;
}

/** How far a turn pushes a thread's deadline: a duration, or a share of that thread's TTL. */
function extensionFor(extension: number | `${number}%`, ttlMs: number): number {
  return typeof extension === 'number' ? extension : Math.round((ttlMs * Number.parseFloat(extension)) / 100);
}

/** Steps a thread; a thread that ends is moved to the ended threads and reported. */
export function stepThread(
  state: FloorState,
  setup: FloorSetup,
  id: string,
  event: ConversationThreadEvent,
  effects: FloorEffect[],
): void {
  const snap = state.threads.get(id);
  if (!snap) return;
  const next = setup.engine.thread.step(snap, event);
  if (next.status === 'done') {
    state.threads.delete(id);
    state.threadReservations.delete(id);
    const outcome = next.value as ThreadOutcome;
    state.endedThreads.set(id, outcome);
    backOff(state, setup, next.context.participants, next.context.now);
    forgetSettledThreads(state, id);
    if (state.endedThreads.size > ENDED_THREADS_REMEMBERED)
      state.endedThreads.delete(state.endedThreads.keys().next().value as string);
    const ended: Extract<FloorEffect, { type: 'thread.ended' }> = {
      type: 'thread.ended',
      at: next.context.now,
      threadId: id,
      outcome,
      detail: next.context.detail ?? outcome,
      turns: next.context.turnCount,
    };
    if (next.context.sentiment.turns > 0) ended.sentiment = meanSentiment(next.context.sentiment);
    effects.push(ended);
  } else {
    state.threads.set(id, next);
  }
}

function pairKey(a: string, b: string): string {
  return a < b ? `${a}\u0000${b}` : `${b}\u0000${a}`;
}

/**
 * A thread ended: each pair of its participants waits before their next thread, twice as long
 * as last time if their previous thread ended within the window (exponential backoff
 * on rapid thread creation). The wait is an absolute time in the floor's data, like every deadline.
 */
function backOff(state: FloorState, setup: FloorSetup, participants: readonly string[], at: number): void {
  const { threadBackoffBaseMs: base, threadBackoffWindowMs: window } = setup.config;
  if (base <= 0) return;
  // Forget pairs whose last thread is out of the window (bounded by the pairs that talked lately).
  for (const [pair, b] of state.threadBackoff) if (at - b.endedAt > window) state.threadBackoff.delete(pair);
  for (let i = 0; i < participants.length; i++) {
    for (let j = i + 1; j < participants.length; j++) {
      const pair = pairKey(participants[i] as string, participants[j] as string);
      const previous = state.threadBackoff.get(pair);
      const level = previous && at - previous.endedAt <= window ? Math.min(previous.level + 1, 30) : 0;
      state.threadBackoff.set(pair, { endedAt: at, level, until: at + Math.min(base * 2 ** level, window) });
    }
  }
}

/** True while two avatars are backing off from another thread together. */
export function backingOff(state: FloorState, a: string, b: string, at: number): boolean {
  const backoff = state.threadBackoff.get(pairKey(a, b));
  return backoff !== undefined && at < backoff.until;
}

/** True while the thread's turns, counting those claimed and not yet delivered, are below its limit. */
export function threadHasRoom(state: FloorState, thread: ThreadState): boolean {
  const reserved = state.threadReservations.get(thread.context.id) ?? 0;
  return thread.context.turnCount + reserved < thread.context.maxTurns;
}

/** Reserves the thread's next turn for a claim; returns that turn's 1-based number. */
export function reserveThreadTurn(state: FloorState, thread: ThreadState): number {
  const reserved = (state.threadReservations.get(thread.context.id) ?? 0) + 1;
  state.threadReservations.set(thread.context.id, reserved);
  return thread.context.turnCount + reserved;
}

/** Gives back a turn reserved in the thread (delivered, or released). */
export function unreserveThread(state: FloorState, threadId: string | undefined): void {
  if (threadId === undefined) return;
  const reserved = state.threadReservations.get(threadId);
  if (reserved === undefined) return;
  if (reserved <= 1) state.threadReservations.delete(threadId);
  else state.threadReservations.set(threadId, reserved - 1);
}

/** The suppression reason for a candidate whose thread has ended. */
export function endedOutcome(state: FloorState, threadId: string): SuppressionReason {
  return state.endedThreads.get(threadId) === 'exhausted' ? 'thread-exhausted' : 'thread-ended';
}

/** The most recently active thread the avatar takes part in (and has not left). */
export function latestThreadWith(state: FloorState, avatarId: string): ThreadState | undefined {
  let latest: ThreadState | undefined;
  for (const snap of state.threads.values()) {
    const c = snap.context;
    if (!c.participants.includes(avatarId) || c.departed.includes(avatarId)) continue;
    if (!latest || c.lastActivityAt >= latest.context.lastActivityAt) latest = snap;
  }
  return latest;
}

/** The thread an utterance belongs to, for the thread rung. */
export function threadOfUtterance(
  state: FloorState,
  u: Utterance,
  addressed: readonly string[],
): ThreadState | undefined {
  if (u.author.kind === 'avatar') return latestThreadWith(state, u.author.id);
  // A human message continues the thread of whoever it addresses, or else the latest thread.
  if (addressed.length > 0) {
    for (const id of addressed) {
      const t = latestThreadWith(state, id);
      if (t) return t;
    }
    return undefined;
  }
  let latest: ThreadState | undefined;
  for (const snap of state.threads.values()) {
    if (!latest || snap.context.lastActivityAt >= latest.context.lastActivityAt) latest = snap;
  }
  return latest;
}

/** An avatar addressed others: widen its current thread, or open a mention/reply thread. */
export function threadForAddress(
  state: FloorState,
  setup: FloorSetup,
  u: Utterance,
  addressed: readonly string[],
  effects: FloorEffect[],
): void {
  const current = latestThreadWith(state, u.author.id);
  if (current) {
    for (const id of addressed) {
      if (!current.context.participants.includes(id)) {
        stepThread(
          state,
          setup,
          current.context.id,
          { type: 'thread.join', at: u.at, avatarId: id },
          effects,
        );
      }
    }
    return;
  }
  const config = setup.config;
  if (!config.botMentionCreateThread) return;
  const replyOnly = addressed.length === 1 && u.replyTo?.avatarId === addressed[0] && !u.mentions?.length;
  openThread(
    state,
    setup,
    replyOnly ? 'reply' : 'mention',
    [u.author.id, ...addressed],
    replyOnly ? config.threadMaxTurns : config.botMentionThreadTurns,
    config.threadTtlMs,
    u.at,
    effects,
  );
}
