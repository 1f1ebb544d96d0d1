import { TroupeError } from '../../ports/troupeError.js';

/**
 * JSON handling shared by the store adapters: every value is checked and turned into JSON text
 * before anything is written, and parsed back on the way out, so a caller never shares an object
 * with the store and every adapter keeps exactly the same values.
 */

/** Where a value is going, for error messages: `documents "channels/room-1"`. */
export type ValuePlace = string;

const MAX_DEPTH = 500;

/**
 * Checks that `value` is JSON (objects, arrays, strings, finite numbers, booleans, null) and
 * returns its JSON text. Object properties that are `undefined` are left out, as `JSON.stringify`
 * does; anything else that JSON would change or lose is refused.
 * @throws TroupeError `TROUPE_STORE_INVALID_VALUE` naming the place and the offending path.
 */
export function encodeJson(value: unknown, place: ValuePlace): string {
  checkJson(value, place);
  return JSON.stringify(value);
}

/**
 * Checks that `value` is JSON as {@link encodeJson} accepts it, without writing its text (for a
 * store that writes the value's parts apart).
 * @throws TroupeError `TROUPE_STORE_INVALID_VALUE`, exactly as {@link encodeJson} does.
 */
export function checkJson(value: unknown, place: ValuePlace): void {
  if (isJson(value, 0)) return;
  const found = findProblem(value, new Set(), 0);
  const problem = found
    ? { path: `$${found.at.reverse().map(segment).join('')}`, what: found.what }
    : undefined;
  if (problem) {
    throw new TroupeError(
      'TROUPE_STORE_INVALID_VALUE',
      `Cannot store ${place}: ${problem.path} is ${problem.what}. Store values must be JSON (objects, arrays, strings, finite numbers, booleans, null); nothing was written.`,
      { details: { place, path: problem.path } },
    );
  }
}

/**
 * A deep copy of `value` as storing it as JSON and reading it back would give (`undefined`
 * properties left out, `-0` as `0`), made in one pass, for stores that keep objects.
 * @throws TroupeError `TROUPE_STORE_INVALID_VALUE`, exactly as {@link encodeJson} does.
 */
export function copyJson<T>(value: T, place: ValuePlace): T {
  const copy = copyOf(value, 0);
  if (copy === NOT_JSON) {
    encodeJson(value, place); // throws, naming the offending path
    return JSON.parse(JSON.stringify(value)) as T;
  }
  return copy as T;
}

/**
 * Parses JSON text read from a store.
 * @throws TroupeError `TROUPE_STORE_CORRUPT` naming the place when the text is not JSON.
 */
export function decodeJson<T>(text: unknown, place: ValuePlace): T {
  if (typeof text !== 'string') {
    throw new TroupeError(
      'TROUPE_STORE_CORRUPT',
      `The stored ${place} is not JSON text (found ${typeof text}).`,
      {
        details: { place },
      },
    );
  }
  try {
    return JSON.parse(text) as T;
  } catch (error) {
    throw new TroupeError(
      'TROUPE_STORE_CORRUPT',
      `The stored ${place} cannot be parsed as JSON (${(error as Error).message}); it was written outside Troupe or damaged.`,
      { cause: error, details: { place } },
    );
  }
}

/** Orders strings by Unicode code point (as SQLite's BINARY collation and MongoDB do on UTF-8). */
export function compareKeys(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

/** Moves surrogates (astral code points) above U+E000–U+FFFF, so code units sort like code points. */
function codePointRank(unit: number): number {
  if (unit >= 0xe000) return unit - 0x800;
  if (unit >= 0xd800) return unit + 0x2000;
  return unit;
}

/** Refuses an increment that is not a finite number (it would poison the counter). */
export function checkIncrement(counter: string, by: number): void {
  if (typeof by !== 'number' || !Number.isFinite(by))
    throw new TroupeError(
      'TROUPE_STORE_INVALID_VALUE',
      `Cannot increment counter "${counter}" by ${String(by)}: the step must be a finite number.`,
      { details: { counter } },
    );
}

/** Refuses a time (epoch ms) or version that is not a finite number; returns it. */
export function checkNumber<T extends number | undefined>(value: T, what: string, place: ValuePlace): T {
  if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value)))
    throw new TroupeError(
      'TROUPE_STORE_INVALID_VALUE',
      `Cannot store ${place}: ${what} is ${String(value)}, not a finite number; nothing was written.`,
      { details: { place, what } },
    );
  return value;
}

/**
 * Whether `value` is JSON as {@link encodeJson} accepts it. The quick check of every write: no
 * cycle bookkeeping (a cycle shows up as depth) and no paths; a refusal is explained by
 * {@link findProblem}.
 */
function isJson(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object':
      break;
    default:
      return false;
  }
  if (value === null) return true;
  if (depth > MAX_DEPTH || hasToJson(value)) return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (item === undefined || !isJson(item, depth + 1)) return false;
    }
    return true;
  }
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return false;
  const record = value as Record<string, unknown>;
  // for-in (own keys only) allocates no key array; Object.keys order is the same.
  for (const key in record) {
    if (!Object.hasOwn(record, key)) continue;
    const item = record[key];
    if (item !== undefined && !isJson(item, depth + 1)) return false;
  }
  return true;
}

/**
 * Whether JSON.stringify would call a `toJSON` of the value's (its own, hidden or not: a plain
 * object's or an array's prototype has none), storing what it returns instead of the value.
 */
function hasToJson(value: object): boolean {
  return typeof (value as { toJSON?: unknown }).toJSON === 'function';
}

const TO_JSON = 'a value with a toJSON method (JSON would store what it returns); store that instead';

const NOT_JSON: unique symbol = Symbol('not JSON');

/** {@link isJson} and the copy in one pass; {@link NOT_JSON} when the value is not JSON. */
function copyOf(value: unknown, depth: number): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (!Number.isFinite(value)) return NOT_JSON;
      return value === 0 ? 0 : value;
    case 'object':
      break;
    default:
      return NOT_JSON;
  }
  if (value === null) return null;
  if (depth > MAX_DEPTH || hasToJson(value)) return NOT_JSON;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (item === undefined) return NOT_JSON;
      const copy = copyOf(item, depth + 1);
      if (copy === NOT_JSON) return NOT_JSON;
      out.push(copy);
    }
    return out;
  }
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return NOT_JSON;
  const record = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key in record) {
    if (!Object.hasOwn(record, key)) continue;
    const item = record[key];
    if (item === undefined) continue;
    const copy = copyOf(item, depth + 1);
    if (copy === NOT_JSON) return NOT_JSON;
    // JSON.parse makes "__proto__" an own property; an assignment would set the prototype.
    if (key === '__proto__')
      Object.defineProperty(out, key, { value: copy, enumerable: true, writable: true, configurable: true });
    else out[key] = copy;
  }
  return out;
}

/** A problem, with the path to it collected innermost first (built into text only when found). */
interface Problem {
  at: (string | number)[];
  what: string;
}

function findProblem(value: unknown, ancestors: Set<object>, depth: number): Problem | undefined {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return undefined;
    case 'number':
      return Number.isFinite(value) ? undefined : { at: [], what: String(value) };
    case 'undefined':
      return { at: [], what: 'undefined' };
    case 'function':
      return { at: [], what: 'a function' };
    case 'bigint':
      return { at: [], what: `a BigInt (${value}n); store it as a string or a number` };
    case 'symbol':
      return { at: [], what: 'a symbol' };
    default:
      break;
  }
  if (value === null) return undefined;
  const object = value as object;
  if (depth > MAX_DEPTH) return { at: [], what: `nested more than ${MAX_DEPTH} levels deep` };
  if (ancestors.has(object)) return { at: [], what: 'a reference back to itself (a cycle)' };
  ancestors.add(object);
  try {
    if (Array.isArray(object)) {
      if (hasToJson(object)) return { at: [], what: TO_JSON };
      for (let i = 0; i < object.length; i++) {
        const item: unknown = object[i];
        if (item === undefined) return { at: [i], what: 'undefined (JSON would turn it into null)' };
        const problem = findProblem(item, ancestors, depth + 1);
        if (problem) {
          problem.at.push(i);
          return problem;
        }
      }
      return undefined;
    }
    const proto = Object.getPrototypeOf(object) as unknown;
    if (proto !== Object.prototype && proto !== null) {
      const name =
        (object as { constructor?: { name?: string } }).constructor?.name ?? 'an object with a prototype';
      return { at: [], what: `a ${name}, not a plain object; convert it to JSON data first` };
    }
    if (hasToJson(object)) return { at: [], what: TO_JSON };
    for (const key of Object.keys(object)) {
      const item = (object as Record<string, unknown>)[key];
      if (item === undefined) continue;
      const problem = findProblem(item, ancestors, depth + 1);
      if (problem) {
        problem.at.push(key);
        return problem;
      }
    }
    return undefined;
  } finally {
    ancestors.delete(object);
  }
}

function segment(key: string | number): string {
  if (typeof key === 'number') return `[${key}]`;
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}
