import type { StateValue } from 'xstate';
import { SNAPSHOT_ENUMS } from './floorSnapshotSchema.js';
import type { ClaimSpec, DeferredAnswer, PendingFollowUp } from './floorState.js';
import type { TurnContext } from './floorTypes.js';

// The pieces of the hand-written snapshot readers (snapshotFastPath.ts and its version-1 twin):
// each reads one part with the schema's rules, or throws MISMATCH for the schema to decide.

/**
 * `read(input)`, or `undefined` when the input leaves the fast path (the schema then decides and
 * says what is wrong).
 */
export function readFast<T>(input: unknown, read: (v: unknown) => T): T | undefined {
  try {
    return read(input);
  } catch (error) {
    if (error === MISMATCH) return undefined;
    throw error;
  }
}

/** Thrown (never escapes) when the input leaves the fast path. */
const MISMATCH: unique symbol = Symbol('snapshot mismatch');

export function fail(): never {
  throw MISMATCH;
}

export type Obj = Record<string, unknown>;

/** An object as z.object reads one (any non-array object). */
export function obj(v: unknown): Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : fail();
}

/** A record's object: plain (its prototype Object.prototype or none). */
export function plain(v: unknown): Obj {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return fail();
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null ? (v as Obj) : fail();
}

/** No symbol keys (the schema refuses them in a record). */
export function noSymbols(o: Obj): void {
  if (Object.getOwnPropertySymbols(o).length > 0) fail();
}

export const str = (v: unknown): string => (typeof v === 'string' ? v : fail());
export const id = (v: unknown): string => (typeof v === 'string' && v.length > 0 ? v : fail());
export const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : fail());
export const int = (v: unknown): number => (Number.isSafeInteger(v) ? (v as number) : fail());
export const count = (v: unknown): number =>
  Number.isSafeInteger(v) && (v as number) >= 0 ? (v as number) : fail();
export const bool = (v: unknown): boolean => (typeof v === 'boolean' ? v : fail());
export const yes = (v: unknown): true => (v === true ? true : fail());
export const numOrNull = (v: unknown): number | null => (v === null ? null : num(v));
export const strOrNull = (v: unknown): string | null => (v === null ? null : str(v));

export function oneOf<T extends string>(values: readonly T[]): (v: unknown) => T {
  const set = new Set<unknown>(values);
  return (v) => (set.has(v) ? (v as T) : fail());
}
export const rung = oneOf(SNAPSHOT_ENUMS.rung);
export const turnKind = oneOf(SNAPSHOT_ENUMS.turnKind);
export const budgetLane = oneOf(SNAPSHOT_ENUMS.budgetLane);
export const threadMode = oneOf(SNAPSHOT_ENUMS.threadMode);
export const threadOutcome = oneOf(SNAPSHOT_ENUMS.threadOutcome);
export const threadMood = oneOf(SNAPSHOT_ENUMS.threadMood);

export function list<T>(v: unknown, item: (x: unknown) => T): T[] {
  if (!Array.isArray(v)) return fail();
  const out = new Array<T>(v.length);
  for (let i = 0; i < v.length; i++) out[i] = item(v[i]);
  return out;
}

/** A two-item tuple keyed by a string. */
export function pair<T>(v: unknown, second: (x: unknown) => T): [string, T] {
  if (!Array.isArray(v) || v.length !== 2) return fail();
  return [str(v[0]), second(v[1])];
}

export const pairs = <T>(v: unknown, second: (x: unknown) => T): [string, T][] =>
  list(v, (x) => pair(x, second));

/**
 * Copies an optional key into `out` when the input has it (`in`, as the parser asks), its value
 * read by `read` unless undefined.
 */
export function optional<T>(out: Obj, o: Obj, key: string, read: (x: unknown) => T): void {
  if (!(key in o)) return;
  const v = o[key];
  out[key] = v === undefined ? undefined : read(v);
}

export function record<T>(v: unknown, value: (x: unknown) => T): Record<string, T> {
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
export function stateValue(v: unknown): StateValue {
  return typeof v === 'string' ? v : record(v, stateValue);
}

export function turnContext(v: unknown): TurnContext {
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

export function claimSpec(v: unknown): ClaimSpec {
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

export function deferredAnswer(v: unknown): DeferredAnswer {
  const o = obj(v);
  return { spec: claimSpec(o.spec), messageId: str(o.messageId) };
}

export function pendingFollowUp(v: unknown): PendingFollowUp {
  const o = obj(v);
  const out: Obj = {};
  out.avatarId = str(o.avatarId);
  out.dueAt = num(o.dueAt);
  out.anchorMessageId = str(o.anchorMessageId);
  out.summonerName = str(o.summonerName);
  optional(out, o, 'second', yes);
  return out as unknown as PendingFollowUp;
}

export function arrival(v: unknown): { at: number; reactedBy?: { id: string; name: string } } {
  const o = obj(v);
  const out: Obj = {};
  out.at = num(o.at);
  optional(out, o, 'reactedBy', (x) => {
    const r = obj(x);
    return { id: str(r.id), name: str(r.name) };
  });
  return out as { at: number; reactedBy?: { id: string; name: string } };
}

export function backoff(v: unknown): { endedAt: number; level: number; until: number } {
  const o = obj(v);
  return { endedAt: num(o.endedAt), level: num(o.level), until: num(o.until) };
}
