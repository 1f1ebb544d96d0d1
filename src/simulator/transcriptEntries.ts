import { capNoticeText } from '../floor/capNoticeText.js';
import type { FloorEffect, FloorEvent, TurnClaim } from '../floor/floorTypes.js';
import type { TranscriptEntry } from './runScenario.js';

/** What an effect's transcript line needs from the run: simulated times, and avatars' names. */
export interface EntryContext {
  /** Simulated ms since the start, of an epoch-ms time. */
  rel: (at: number) => number;
  nameOf: (avatarId: string) => string;
}

/**
 * The transcript line a floor effect stands for, at `t` (simulated ms), or undefined for an effect
 * that has none of its own (a consumed turn, a summon: the run records those with what it knows).
 */
export function effectEntry(
  effect: FloorEffect,
  event: FloorEvent,
  t: number,
  context: EntryContext,
): TranscriptEntry | undefined {
  switch (effect.type) {
    case 'turn.claimed':
      return { t, type: 'claim', avatarId: effect.turn.avatarId, ...claimFields(effect.turn) };
    case 'turn.released':
      return {
        t,
        type: 'turn.released',
        turnId: effect.turnId,
        avatarId: effect.avatarId,
        reason: effect.reason,
      };
    case 'candidate.suppressed':
      return {
        t,
        type: 'suppressed',
        avatarId: effect.avatarId,
        messageId: effect.messageId,
        ...(effect.rung !== undefined ? { rung: effect.rung } : {}),
        reason: effect.reason,
        ...(effect.detail !== undefined ? { detail: effect.detail } : {}),
      };
    case 'thread.opened':
      return {
        t,
        type: 'thread.opened',
        threadId: effect.threadId,
        mode: effect.mode,
        participants: effect.participants,
        maxTurns: effect.maxTurns,
        expiresAt: context.rel(effect.expiresAt),
      };
    case 'thread.ended':
      return {
        t,
        type: 'thread.ended',
        threadId: effect.threadId,
        outcome: effect.outcome,
        detail: effect.detail,
        turns: effect.turns,
        ...(effect.sentiment !== undefined ? { sentiment: effect.sentiment } : {}),
      };
    case 'cap.notice':
      return {
        t,
        type: 'cap.notice',
        avatarId: effect.avatarId,
        to: effect.to.name,
        reason: effect.reason,
        text: capNoticeText(context.nameOf(effect.avatarId), effect.reason, effect.resetsAt),
        resetsAt: context.rel(effect.resetsAt),
      };
    case 'presence.dismissed':
      return { t, type: 'dismiss', avatarId: effect.avatarId, name: context.nameOf(effect.avatarId) };
    case 'event.rejected':
      return { t, type: 'rejected', event: event.type, code: effect.code, message: effect.message };
    default:
      return undefined;
  }
}

/** The parts of a claim a transcript entry repeats: which turn, chosen how, in which thread. */
export function claimFields(c: TurnClaim) {
  return {
    turnId: c.turnId,
    kind: c.kind,
    rung: c.rung,
    reason: c.reason,
    lane: c.lane,
    ...(c.threadId !== undefined ? { threadId: c.threadId } : {}),
    anchorMessageId: c.anchorMessageId,
    ...(c.triggerMessageId !== undefined ? { triggerMessageId: c.triggerMessageId } : {}),
  };
}
