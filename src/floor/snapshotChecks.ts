import { fail, noSymbols, type Obj, str } from './snapshotReading.js';

// The pieces of the in-place snapshot check (snapshotFastPath.ts): each checks one part with the
// schema's rules and copies nothing, or throws MISMATCH (via fail) for the schema to decide.

/** An object as JSON.parse makes one and the schema returns one: its prototype is Object.prototype. */
export function plainObject(v: unknown): Obj {
  return typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype
    ? (v as Obj)
    : fail();
}

/**
 * Fails unless `o` has exactly `n` enumerable keys, the ones already checked: the schema drops a key
 * it does not know, so an object holding one is not its output as it is.
 */
export function exactKeys(o: Obj, n: number): void {
  let keys = 0;
  for (const _key in o) keys++;
  if (keys !== n) fail();
}

/** 1 when `o` has `key` (its value checked unless undefined, as the schema's optional does), else 0. */
export function optionalKey(o: Obj, key: string, check: (v: unknown) => unknown): number {
  const v = o[key];
  if (v !== undefined) {
    check(v);
    return 1;
  }
  return key in o ? 1 : 0;
}

export function listOf(v: unknown, check: (item: unknown) => unknown): void {
  if (!Array.isArray(v)) fail();
  for (let i = 0; i < v.length; i++) check(v[i]);
}

/** A list of two-item tuples keyed by a string. */
export function pairsOf(v: unknown, second: (x: unknown) => unknown): void {
  if (!Array.isArray(v)) fail();
  for (let i = 0; i < v.length; i++) {
    const pair = v[i];
    if (!Array.isArray(pair) || pair.length !== 2) fail();
    str(pair[0]);
    second(pair[1]);
  }
}

/** A record: own string keys only, no `__proto__` key (where the schema's rules and ours could part). */
export function recordOf(v: unknown, value: (x: unknown) => unknown): void {
  const o = plainObject(v);
  for (const key in o) {
    if (!Object.hasOwn(o, key) || key === '__proto__') fail();
    value(o[key]);
  }
  noSymbols(o);
}

/** A machine's state value: a state name, or nested records of them. */
export function stateValueIn(v: unknown): void {
  if (typeof v !== 'string') recordOf(v, stateValueIn);
}
