import type { StateValue } from 'xstate';
import type { AvatarPresenceContext } from '../avatarPresence.machine.js';
import type { ConversationThreadContext } from '../conversationThread.machine.js';
import {
  FLOOR_SNAPSHOT_FORMAT,
  FLOOR_SNAPSHOT_VERSION,
  type FloorSnapshot,
  SNAPSHOT_ENUMS,
} from '../floorSnapshot.js';
import type { TurnClaim, TurnContext } from '../floorTypes.js';
import type { ClaimSpec, DeferredAnswer, PendingFollowUp } from './floorState.js';

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
  try {
    return floorSnapshot(input);
  } catch (error) {
    if (error === MISMATCH) return undefined;
    throw error;
  }
}

/** Thrown (never escapes) when the input leaves the fast path. */
const MISMATCH: unique symbol = Symbol('snapshot mismatch');

function fail(): never {
  throw MISMATCH;
}

type Obj = Record<string, unknown>;

/** An object as z.object reads one (any non-array object). */
function obj(v: unknown): Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : fail();
}

/** A record's object: plain (its prototype Object.prototype or none). */
function plain(v: unknown): Obj {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return fail();
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null ? (v as Obj) : fail();
}

/** No symbol keys (the schema refuses them in a record). */
function noSymbols(o: Obj): void {
  if (Object.getOwnPropertySymbols(o).length > 0) fail();
}

const str = (v: unknown): string => (typeof v === 'string' ? v : fail());
const id = (v: unknown): string => (typeof v === 'string' && v.length > 0 ? v : fail());
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : fail());
const int = (v: unknown): number => (Number.isSafeInteger(v) ? (v as number) : fail());
const count = (v: unknown): number =>
  Number.isSafeInteger(v) && (v as number) >= 0 ? (v as number) : fail();
const bool = (v: unknown): boolean => (typeof v === 'boolean' ? v : fail());
const yes = (v: unknown): true => (v === true ? true : fail());
const numOrNull = (v: unknown): number | null => (v === null ? null : num(v));
const strOrNull = (v: unknown): string | null => (v === null ? null : str(v));

function oneOf<T extends string>(values: readonly T[]): (v: unknown) => T {
  const set = new Set<unknown>(values);
  return (v) => (set.has(v) ? (v as T) : fail());
}
const rung = oneOf(SNAPSHOT_ENUMS.rung);
const turnKind = oneOf(SNAPSHOT_ENUMS.turnKind);
const budgetLane = oneOf(SNAPSHOT_ENUMS.budgetLane);
const threadMode = oneOf(SNAPSHOT_ENUMS.threadMode);
const threadOutcome = oneOf(SNAPSHOT_ENUMS.threadOutcome);
const threadMood = oneOf(SNAPSHOT_ENUMS.threadMood);

function list<T>(v: unknown, item: (x: unknown) => T): T[] {
  if (!Array.isArray(v)) return fail();
  const out = new Array<T>(v.length);
  for (let i = 0; i < v.length; i++) out[i] = item(v[i]);
  return out;
}

/** A two-item tuple keyed by a string. */
function pair<T>(v: unknown, second: (x: unknown) => T): [string, T] {
  if (!Array.isArray(v) || v.length !== 2) return fail();
  return [str(v[0]), second(v[1])];
}

const pairs = <T>(v: unknown, second: (x: unknown) => T): [string, T][] => list(v, (x) => pair(x, second));

/**
 * Copies an optional key into `out` when the input has it (`in`, as the parser asks), its value
 * read by `read` unless undefined.
 */
function optional<T>(out: Obj, o: Obj, key: string, read: (x: unknown) => T): void {
  if (!(key in o)) return;
  const v = o[key];
  out[key] = v === undefined ? undefined : read(v);
}

function record<T>(v: unknown, value: (x: unknown) => T): Record<string, T> {
  const o = plain(v);
  const out: Record<string, T> = {};
  for (const key in o) {
    // An inherited key (a prototype someone added to) or a `__proto__` key: the schema decides.
    if (!Object.hasOwn(o, key) || key === '__proto__') return fail();
    out[key] = value(o[key]);
  }
  noSymbols(o);
  return out;
}

/** A machine's state value: a state name, or nested records of them. */
function stateValue(v: unknown): StateValue {
  return typeof v === 'string' ? v : record(v, stateValue);
}

function machineState<C>(v: unknown, context: (x: unknown) => C): { value: StateValue; context: C } {
  const o = obj(v);
  return { value: stateValue(o.value), context: context(o.context) };
}

function presenceContext(v: unknown): AvatarPresenceContext {
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

function threadContext(v: unknown): ConversationThreadContext {
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
  return out as unknown as ConversationThreadContext;
}

function turnContext(v: unknown): TurnContext {
  const o = obj(v);
  const out: Obj = {};
  optional(out, o, 'triggerText', str);
  optional(out, o, 'addressedByName', str);
  optional(out, o, 'addressedById', str);
  out.presentNames = list(o.presentNames, str);
  out.threadPartnerNames = list(o.threadPartnerNames, str);
  optional(out, o, 'threadTurn', num);
  optional(out, o, 'threadMaxTurns', num);
  out.closing = bool(o.closing);
  optional(out, o, 'maxChars', num);
  optional(out, o, 'alreadyPresent', yes);
  optional(out, o, 'threadMood', threadMood);
  return out as unknown as TurnContext;
}

function turnClaim(v: unknown): TurnClaim {
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

function claimSpec(v: unknown): ClaimSpec {
  const o = obj(v);
  const out: Obj = {};
  out.avatarId = str(o.avatarId);
  out.kind = turnKind(o.kind);
  out.rung = rung(o.rung);
  out.reason = str(o.reason);
  out.lane = budgetLane(o.lane);
  out.anchorMessageId = str(o.anchorMessageId);
  optional(out, o, 'triggerMessageId', str);
  optional(out, o, 'triggerText', str);
  optional(out, o, 'threadId', str);
  optional(out, o, 'addressedBy', (x) => {
    const a = obj(x);
    return { id: str(a.id), name: str(a.name) };
  });
  optional(out, o, 'alreadyPresent', yes);
  return out as unknown as ClaimSpec;
}

function deferredAnswer(v: unknown): DeferredAnswer {
  const o = obj(v);
  return { spec: claimSpec(o.spec), messageId: str(o.messageId) };
}

function pendingFollowUp(v: unknown): PendingFollowUp {
  const o = obj(v);
  const out: Obj = {};
  out.avatarId = str(o.avatarId);
  out.dueAt = num(o.dueAt);
  out.anchorMessageId = str(o.anchorMessageId);
  out.summonerName = str(o.summonerName);
  optional(out, o, 'second', yes);
  return out as unknown as PendingFollowUp;
}

function arrival(v: unknown): { at: number; reactedBy?: { id: string; name: string } } {
  const o = obj(v);
  const out: Obj = {};
  out.at = num(o.at);
  optional(out, o, 'reactedBy', (x) => {
    const r = obj(x);
    return { id: str(r.id), name: str(r.name) };
  });
  return out as { at: number; reactedBy?: { id: string; name: string } };
}

function backoff(v: unknown): { endedAt: number; level: number; until: number } {
  const o = obj(v);
  return { endedAt: num(o.endedAt), level: num(o.level), until: num(o.until) };
}

function floorSnapshot(v: unknown): FloorSnapshot {
  const o = obj(v);
  const out: Obj = {};
  out.format = o.format === FLOOR_SNAPSHOT_FORMAT ? o.format : fail();
  out.version = o.version === FLOOR_SNAPSHOT_VERSION ? o.version : fail();
  out.channelId = id(o.channelId);
  out.epoch = id(o.epoch);
  out.now = num(o.now);
  out.turnSeq = count(o.turnSeq);
  out.threadSeq = count(o.threadSeq);
  out.presences = pairs(o.presences, (x) => machineState(x, presenceContext));
  out.threads = pairs(o.threads, (x) => machineState(x, threadContext));
  out.endedThreads = pairs(o.endedThreads, threadOutcome);
  out.inFlight = list(o.inFlight, turnClaim);
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
  return out as unknown as FloorSnapshot;
}
