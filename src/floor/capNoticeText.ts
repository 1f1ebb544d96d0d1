import type { CapReason } from './floorTypes.js';

/** `HH:MM UTC`, or `00:00 UTC` for a reset at the start of a UTC day. */
function utcClock(at: number): string {
  const d = new Date(at);
  return `${String(d.getUTCHours()).padStart(2, '0')}:${String(d.getUTCMinutes()).padStart(2, '0')} UTC`;
}

/**
 * The short notice a person sees when the avatar they addressed reached a cap: which limit, and
 * when it lets the avatar answer again. Nothing waits to be said at the reset.
 */
export function capNoticeText(avatarName: string, reason: CapReason, resetsAt: number): string {
  const when = utcClock(resetsAt);
  switch (reason) {
    case 'cap-channel-hour':
      return `${avatarName} can't answer here for now: this channel reached its hourly limit of avatar messages (again from ${when}).`;
    case 'cap-avatar-tokens':
      return `${avatarName} has reached today's token limit and can answer again after ${when}.`;
    case 'cap-avatar-cost':
      return `${avatarName} has reached today's spending limit and can answer again after ${when}.`;
    case 'cap-total-tokens':
      return `The avatars have reached today's token limit; ${avatarName} can answer again after ${when}.`;
    case 'cap-total-cost':
      return `The avatars have reached today's spending limit; ${avatarName} can answer again after ${when}.`;
  }
}
