import type { StateValue } from 'xstate';
import type { AvatarPresenceContext } from '../machines/avatarPresence.machine.js';
import { FLOOR_SNAPSHOT_FORMAT } from './floorSnapshotSchema.js';
import { FLOOR_SNAPSHOT_V1, type FloorSnapshotV1, type ThreadContextV1 } from './floorSnapshotV1.js';
import type { TurnClaim } from './floorTypes.js';
import {
  arrival,
  backoff,
  bool,
  budgetLane,
  claimSpec,
  count,
  deferredAnswer,
  fail,
  id,
  int,
  list,
  num,
  numOrNull,
  type Obj,
  obj,
  optional,
  pairs,
  pendingFollowUp,
  readFast,
  record,
  rung,
  stateValue,
  str,
  strOrNull,
  threadMode,
  threadOutcome,
  turnContext,
  turnKind,
} from './snapshotReading.js';

/**
 * What `floorSnapshotV1Schema.safeParse(input).data` is for a version-1 snapshot that plainly fits
 * it, read by hand as {@link parseFloorSnapshotFast} reads version 2; `undefined` for anything else.
 * Channels stored before an upgrade restore as fast as before it.
 */
export function parseFloorSnapshotV1Fast(input: unknown): FloorSnapshotV1 | undefined {
  return readFast(input, floorSnapshotV1);
}

function machineState<C>(v: unknown, context: (x: unknown) => C): { value: StateValue; context: C } {
  const o = obj(v);
  return { value: stateValue(o.value), context: context(o.context) };
}

function presenceContextV1(v: unknown): AvatarPresenceContext {
  const o = obj(v);
  const s = obj(o.settings);
  const attention = obj(o.attention);
  return {
    channelId: str(o.channelId),
    avatarId: str(o.avatarId),
    settings: {
      perAvatarCooldownMs: num(s.perAvatarCooldownMs),
      recentSummonCooldownMs: num(s.recentSummonCooldownMs),
      stickyAffinityTtlMs: num(s.stickyAffinityTtlMs),
      attentionHalfLifeMs: num(s.attentionHalfLifeMs),
      summonConversationDurationMs: num(s.summonConversationDurationMs),
    },
    now: num(o.now),
    summonTurns: num(o.summonTurns),
    grantedAt: numOrNull(o.grantedAt),
    conversingUntil: num(o.conversingUntil),
    lastSpokeAt: numOrNull(o.lastSpokeAt),
    cooldownUntil: num(o.cooldownUntil),
    attention: { value: num(attention.value), at: num(attention.at) },
    lastMentionAt: numOrNull(o.lastMentionAt),
    lastMentionBy: strOrNull(o.lastMentionBy),
    affinity: record(o.affinity, num),
    claim: o.claim === null ? null : presenceClaim(o.claim),
    delivered: num(o.delivered),
  };
}

function presenceClaim(v: unknown): NonNullable<AvatarPresenceContext['claim']> {
  const o = obj(v);
  return { turnId: str(o.turnId), rung: rung(o.rung), claimedAt: num(o.claimedAt) };
}

function threadContextV1(v: unknown): ThreadContextV1 {
  const o = obj(v);
  // Built key by key: an optional key sits where the schema has it.
  const out: Obj = {};
  out.id = str(o.id);
  out.channelId = str(o.channelId);
  out.mode = threadMode(o.mode);
  out.participants = list(o.participants, str);
  out.departed = list(o.departed, str);
  out.maxTurns = num(o.maxTurns);
  out.ttlMs = num(o.ttlMs);
  out.quietMs = num(o.quietMs);
  out.extendOnActivity = bool(o.extendOnActivity);
  optional(out, o, 'extensionMs', num);
  out.turnCount = num(o.turnCount);
  out.startedAt = num(o.startedAt);
  out.now = num(o.now);
  out.lastActivityAt = num(o.lastActivityAt);
  out.expiresAt = num(o.expiresAt);
  out.quietDeadline = numOrNull(o.quietDeadline);
  out.lastSpeakerId = strOrNull(o.lastSpeakerId);
  out.detail = strOrNull(o.detail);
  optional(out, o, 'sentiment', (x) => {
    const s = obj(x);
    return { sum: num(s.sum), turns: num(s.turns) };
  });
  return out as unknown as ThreadContextV1;
}

function turnClaimV1(v: unknown): TurnClaim {
  const o = obj(v);
  const out: Obj = {};
  out.turnId = str(o.turnId);
  out.channelId = str(o.channelId);
  out.avatarId = str(o.avatarId);
  out.kind = turnKind(o.kind);
  out.rung = rung(o.rung);
  out.reason = str(o.reason);
  out.lane = budgetLane(o.lane);
  out.anchorMessageId = str(o.anchorMessageId);
  optional(out, o, 'triggerMessageId', str);
  optional(out, o, 'threadId', str);
  out.claimedAt = num(o.claimedAt);
  out.context = turnContext(o.context);
  return out as unknown as TurnClaim;
}

function floorSnapshotV1(v: unknown): FloorSnapshotV1 {
  const o = obj(v);
  const out: Obj = {};
  out.format = o.format === FLOOR_SNAPSHOT_FORMAT ? o.format : fail();
  out.version = o.version === FLOOR_SNAPSHOT_V1 ? o.version : fail();
  out.channelId = id(o.channelId);
  out.epoch = id(o.epoch);
  out.now = num(o.now);
  out.turnSeq = count(o.turnSeq);
  out.threadSeq = count(o.threadSeq);
  out.presences = pairs(o.presences, (x) => machineState(x, presenceContextV1));
  out.threads = pairs(o.threads, (x) => machineState(x, threadContextV1));
  out.endedThreads = pairs(o.endedThreads, threadOutcome);
  out.inFlight = list(o.inFlight, turnClaimV1);
  out.threadReservations = pairs(o.threadReservations, int);
  out.followUps = list(o.followUps, pendingFollowUp);
  out.deferred = pairs(o.deferred, deferredAnswer);
  out.pendingGreetings = pairs(o.pendingGreetings, claimSpec);
  optional(out, o, 'departed', (x) => pairs(x, num));
  optional(out, o, 'arrivals', (x) => pairs(x, arrival));
  optional(out, o, 'threadBackoff', (x) => pairs(x, backoff));
  const b = obj(o.budget);
  const budget: Obj = {};
  optional(budget, b, 'anchorMessageId', str);
  budget.main = num(b.main);
  budget.cascade = num(b.cascade);
  out.budget = budget;
  return out as unknown as FloorSnapshotV1;
}
