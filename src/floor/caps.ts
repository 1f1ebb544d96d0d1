import { claimTurn } from './claims.js';
import { type FloorSetup, nameOf } from './floorSetup.js';
import type { ClaimSpec, FloorState } from './floorState.js';
import type { CapReason, FloorEffect, SuppressionReason } from './floorTypes.js';

/** The window of `TROUPE_CHANNEL_MAX_AVATAR_MESSAGES_PER_HOUR`. */
export const CAP_HOUR_MS = 3_600_000;

/** A cap an avatar reached: which, in words, and when it lets the avatar speak again. */
export interface CapBlock {
  reason: CapReason;
  detail: string;
  /** Epoch ms. */
  resetsAt: number;
}

/**
 * The caps kept outside the channel (tokens and cost per UTC day, across channels): the runtime's
 * usage ledger answers for an avatar at a time. It must not change the floor; a floor given the
 * same answers decides the same.
 */
export type SpendGate = (avatarId: string, at: number) => CapBlock | null;

/** True for the reasons a cap gives. */
export function isCapReason(reason: SuppressionReason): reason is CapReason {
  return reason.startsWith('cap-');
}

/**
 * The cap that keeps the avatar from another turn now, or null. The channel's hour counts the
 * avatar messages delivered in it within the last hour plus the turns in flight (claimed, so they
 * will be messages): concurrent claims cannot overshoot it.
 */
export function capBlock(state: FloorState, setup: FloorSetup, avatarId: string): CapBlock | null {
  const max = setup.config.channelMaxAvatarMessagesPerHour;
  if (max > 0) {
    const times = recentAvatarMessages(state);
    const used = times.length + state.inFlight.size;
    if (used >= max) {
      return {
        reason: 'cap-channel-hour',
        detail: `${used} of ${max} avatar messages in this channel within the hour`,
        resetsAt: (times[0] ?? state.now) + CAP_HOUR_MS,
      };
    }
  }
  return setup.spendGate ? setup.spendGate(avatarId, state.now) : null;
}

/** The times of avatar messages in the last hour, the older ones dropped. */
function recentAvatarMessages(state: FloorState): readonly number[] {
  const times = state.avatarMessages;
  if (!times) return [];
  const from = state.now - CAP_HOUR_MS;
  let drop = 0;
  while (drop < times.length && (times[drop] ?? 0) <= from) drop++;
  if (drop > 0) times.splice(0, drop);
  return times;
}

/** Counts a delivered avatar message against the channel's hour (when that cap is set). */
export function countAvatarMessage(state: FloorState, setup: FloorSetup, at: number): void {
  if (setup.config.channelMaxAvatarMessagesPerHour <= 0) return;
  if (state.avatarMessages) state.avatarMessages.push(at);
  else state.avatarMessages = [at];
}

/**
 * Tells the person who addressed a capped avatar, once per person and avatar per reset window
 * (`TROUPE_CAP_NOTICE=notice`); says nothing when it is `silent`.
 */
export function noticeCap(
  state: FloorState,
  setup: FloorSetup,
  block: CapBlock,
  avatarId: string,
  to: { id: string; name: string },
  messageId: string,
  effects: FloorEffect[],
): void {
  if (setup.config.capNotice === 'silent') return;
  const key = `${avatarId}\u0000${to.id}`;
  const notices = state.capNotices ?? new Map<string, number>();
  state.capNotices = notices;
  const given = notices.get(key);
  if (given !== undefined && state.now < given) return;
  for (const [k, until] of notices) if (until <= state.now) notices.delete(k);
  notices.set(key, block.resetsAt);
  effects.push({
    type: 'cap.notice',
    at: state.now,
    avatarId,
    messageId,
    to: { id: to.id, name: to.name },
    reason: block.reason,
    detail: block.detail,
    resetsAt: block.resetsAt,
  });
}

/**
 * Claims a turn the floor owes (a greeting, a follow-up) unless a cap holds: then the turn is not
 * taken (nothing waits to burst out at the reset), it is reported as suppressed, and the person it
 * answers is told. Returns whether it claimed.
 */
export function claimUnlessCapped(
  state: FloorState,
  setup: FloorSetup,
  spec: ClaimSpec,
  effects: FloorEffect[],
): boolean {
  const block = capBlock(state, setup, spec.avatarId);
  if (!block) {
    claimTurn(state, setup, spec, effects);
    return true;
  }
  const messageId = spec.triggerMessageId ?? spec.anchorMessageId;
  effects.push({
    type: 'candidate.suppressed',
    at: state.now,
    avatarId: spec.avatarId,
    messageId,
    rung: spec.rung,
    reason: block.reason,
    detail: `${nameOf(setup, spec.avatarId)}: ${block.detail}`,
  });
  if (spec.addressedBy && spec.kind === 'greeting')
    noticeCap(state, setup, block, spec.avatarId, spec.addressedBy, messageId, effects);
  return false;
}
