import {
  FLOOR_SNAPSHOT_FORMAT,
  FLOOR_SNAPSHOT_VERSION,
  type FloorSnapshot,
  type StoredPresence,
  type StoredThread,
  type StoredTurnClaim,
} from './floorSnapshotSchema.js';
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
 * What `floorSnapshotSchema.safeParse(input).data` is for a snapshot that plainly fits the schema,
 * read by hand; `undefined` for anything else, and the schema then decides and says what is wrong.
 *
 * Restoring many channels is mostly schema work (a floor's presences and threads are a few hundred
 * fields), and the generic parser spends most of it on bookkeeping. This reads the same shape with
 * the same rules — finite numbers, safe integers, non-empty ids, the same enumerations, tuples of
 * exactly two, optional keys kept when present, unknown keys dropped — and builds fresh objects with
 * their keys in the schema's order, as the parser does. Where its rules and the parser's could part
 * (an object that is not plain where a record is read, symbol keys, a `__proto__` key), it gives up
 * rather than guess. A test holds the two to the same answer on valid and damaged snapshots.
 */
export function parseFloorSnapshotFast(input: unknown): FloorSnapshot | undefined {
  return readFast(input, floorSnapshot);
}

function presence(v: unknown): StoredPresence {
  const o = obj(v);
  // Built key by key: an optional key sits where the schema has it.
  const out: Obj = {};
  optional(out, o, 'state', stateValue);
  out.now = num(o.now);
  const attention = obj(o.attention);
  out.attention = { value: num(attention.value), at: num(attention.at) };
  optional(out, o, 'summonTurns', num);
  optional(out, o, 'grantedAt', num);
  optional(out, o, 'conversingUntil', num);
  optional(out, o, 'lastSpokeAt', num);
  optional(out, o, 'cooldownUntil', num);
  optional(out, o, 'lastMentionAt', num);
  optional(out, o, 'lastMentionBy', str);
  optional(out, o, 'affinity', (x) => record(x, num));
  optional(out, o, 'claim', (x) => {
    const c = obj(x);
    return { turnId: str(c.turnId), rung: rung(c.rung), claimedAt: num(c.claimedAt) };
  });
  optional(out, o, 'delivered', num);
  return out as unknown as StoredPresence;
}

function thread(v: unknown): StoredThread {
  const o = obj(v);
  const sentiment = obj(o.sentiment);
  return {
    state: stateValue(o.state),
    mode: threadMode(o.mode),
    participants: list(o.participants, str),
    departed: list(o.departed, str),
    maxTurns: num(o.maxTurns),
    ttlMs: num(o.ttlMs),
    quietMs: num(o.quietMs),
    extendOnActivity: bool(o.extendOnActivity),
    extensionMs: num(o.extensionMs),
    turnCount: num(o.turnCount),
    startedAt: num(o.startedAt),
    now: num(o.now),
    lastActivityAt: num(o.lastActivityAt),
    expiresAt: num(o.expiresAt),
    quietDeadline: numOrNull(o.quietDeadline),
    lastSpeakerId: strOrNull(o.lastSpeakerId),
    detail: strOrNull(o.detail),
    sentiment: { sum: num(sentiment.sum), turns: num(sentiment.turns) },
  };
}

function turnClaim(v: unknown): StoredTurnClaim {
  const o = obj(v);
  const out: Obj = {};
  out.turnId = str(o.turnId);
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
  return out as unknown as StoredTurnClaim;
}

function floorSnapshot(v: unknown): FloorSnapshot {
  const o = obj(v);
  const b = obj(o.budget);
  const budget: Obj = {};
  optional(budget, b, 'anchorMessageId', str);
  budget.main = num(b.main);
  budget.cascade = num(b.cascade);
  return {
    format: o.format === FLOOR_SNAPSHOT_FORMAT ? o.format : fail(),
    version: o.version === FLOOR_SNAPSHOT_VERSION ? o.version : fail(),
    channelId: id(o.channelId),
    epoch: id(o.epoch),
    now: num(o.now),
    turnSeq: count(o.turnSeq),
    threadSeq: count(o.threadSeq),
    presences: pairs(o.presences, presence),
    threads: pairs(o.threads, thread),
    endedThreads: pairs(o.endedThreads, threadOutcome),
    inFlight: list(o.inFlight, turnClaim),
    threadReservations: pairs(o.threadReservations, int),
    followUps: list(o.followUps, pendingFollowUp),
    deferred: pairs(o.deferred, deferredAnswer),
    pendingGreetings: pairs(o.pendingGreetings, claimSpec),
    departed: pairs(o.departed, num),
    arrivals: pairs(o.arrivals, arrival),
    threadBackoff: pairs(o.threadBackoff, backoff),
    budget: budget as FloorSnapshot['budget'],
  };
}
