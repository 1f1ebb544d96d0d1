import type { StateValue } from 'xstate';
import type { AvatarPresenceContext, PresenceSettings } from '../machines/avatarPresence.machine.js';
import type { ConversationThreadContext } from '../machines/conversationThread.machine.js';
import {
  INITIAL_PRESENCE_STATE_JSON,
  type StoredPresence,
  type StoredThread,
} from './floorSnapshotSchema.js';

// A presence and a thread as a snapshot stores them, and back. Storing leaves out what restoring
// gives back exactly (ids, channel, settings, a presence's starting values), nothing else.

/** A presence's state value and context as stored: see {@link StoredPresence}. */
export function storedPresence(value: StateValue, c: AvatarPresenceContext): StoredPresence {
  const out: StoredPresence = {
    ...(JSON.stringify(value) !== INITIAL_PRESENCE_STATE_JSON ? { state: value } : {}),
    now: c.now,
    attention: { value: c.attention.value, at: c.attention.at },
  };
  if (c.summonTurns !== 0) out.summonTurns = c.summonTurns;
  if (c.grantedAt !== null) out.grantedAt = c.grantedAt;
  if (c.conversingUntil !== 0) out.conversingUntil = c.conversingUntil;
  if (c.lastSpokeAt !== null) out.lastSpokeAt = c.lastSpokeAt;
  if (c.cooldownUntil !== 0) out.cooldownUntil = c.cooldownUntil;
  if (c.lastMentionAt !== null) out.lastMentionAt = c.lastMentionAt;
  if (c.lastMentionBy !== null) out.lastMentionBy = c.lastMentionBy;
  if (Object.keys(c.affinity).length > 0) out.affinity = { ...c.affinity };
  if (c.claim !== null) out.claim = { ...c.claim };
  if (c.delivered !== 0) out.delivered = c.delivered;
  return out;
}

/**
 * The state value and context of a stored presence, in `channelId` with the floor's `settings`. The
 * context shares no object with `stored` (the snapshot stays its caller's).
 */
export function restoredPresence(
  stored: StoredPresence,
  avatarId: string,
  channelId: string,
  settings: PresenceSettings,
): { value: StateValue; context: AvatarPresenceContext } {
  return {
    value: stored.state ?? { present: { mode: 'ambient', turn: 'ready' } },
    context: {
      channelId,
      avatarId,
      settings,
      now: stored.now,
      summonTurns: stored.summonTurns ?? 0,
      grantedAt: stored.grantedAt ?? null,
      conversingUntil: stored.conversingUntil ?? 0,
      lastSpokeAt: stored.lastSpokeAt ?? null,
      cooldownUntil: stored.cooldownUntil ?? 0,
      attention: { value: stored.attention.value, at: stored.attention.at },
      lastMentionAt: stored.lastMentionAt ?? null,
      lastMentionBy: stored.lastMentionBy ?? null,
      affinity: stored.affinity ? recordCopy(stored.affinity) : {},
      claim: stored.claim ? { ...stored.claim } : null,
      delivered: stored.delivered ?? 0,
    },
  };
}

/** A thread's state value and context as stored: all of it but its id and channel id. */
export function storedThread(value: StateValue, c: ConversationThreadContext): StoredThread {
  const { id: _id, channelId: _channel, ...rest } = c;
  return { state: value, ...rest };
}

/** The state value and context of a stored thread `id` in `channelId`, sharing no object with `stored`. */
export function restoredThread(
  stored: StoredThread,
  id: string,
  channelId: string,
): { value: StateValue; context: ConversationThreadContext } {
  const { state, ...rest } = stored;
  return {
    value: state,
    context: {
      id,
      channelId,
      ...rest,
      participants: [...rest.participants],
      departed: [...rest.departed],
      sentiment: { sum: rest.sentiment.sum, turns: rest.sentiment.turns },
    },
  };
}

/** A copy of a record of numbers (a loop: a spread of objects whose keys vary goes the slow way). */
function recordCopy(record: Record<string, number>): Record<string, number> {
  const copy: Record<string, number> = {};
  for (const key in record) copy[key] = record[key] as number;
  return copy;
}
