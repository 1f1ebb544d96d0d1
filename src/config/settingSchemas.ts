import { z } from 'zod';
import { DURATION_RANGE, parseDurationMs } from './duration.js';

/**
 * The schemas environment settings share. Each takes the variable's text (and, for the
 * coordination settings a program gives in code, the value itself) and says what is allowed in
 * words a person acts on, never zod's own "Invalid input".
 */

/** What a union says when no branch takes the value (zod's number refuses Infinity and NaN first). */
export const allowed = (message: string) => ({ error: message });

const FLAG = 'true or false (also 1/0, yes/no, on/off)';

/** A flag: a boolean, or `true/false`, `1/0`, `yes/no`, `on/off` in any case. */
export const flag = z.union([z.boolean(), z.string()], allowed(FLAG)).transform((raw, ctx) => {
  if (typeof raw === 'boolean') return raw;
  const v = raw.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(v)) return true;
  if (['false', '0', 'no', 'off'].includes(v)) return false;
  ctx.addIssue({ code: 'custom', message: FLAG });
  return z.NEVER;
});

/** A whole number from `min` to `max`, written in digits (`unit` names what it counts). */
export const count = (min: number, max: number, unit = '') => {
  const expected = `a whole number ${unit ? `of ${unit} ` : ''}from ${min} to ${max}`;
  return z.union([z.number(), z.string()], allowed(expected)).transform((raw, ctx) => {
    const n = typeof raw === 'number' ? raw : /^\s*\d+\s*$/.test(raw) ? Number(raw) : Number.NaN;
    if (Number.isInteger(n) && n >= min && n <= max) return n;
    ctx.addIssue({ code: 'custom', message: expected });
    return z.NEVER;
  });
};

const RATIO = 'a number from 0 to 1';
/** A decimal number from 0 to 1 (not `0x1` or `1e0`, which `Number()` would take). */
export const ratio = z.union([z.number(), z.string()], allowed(RATIO)).transform((raw, ctx) => {
  const n = typeof raw === 'number' ? raw : /^\s*\d*\.?\d+\s*$/.test(raw) ? Number(raw) : Number.NaN;
  if (Number.isFinite(n) && n >= 0 && n <= 1) return n;
  ctx.addIssue({ code: 'custom', message: RATIO });
  return z.NEVER;
});

const USD = 'an amount of US dollars, 0 or more, such as 5 or 2.50';
/** US dollars, 0 or more, written as a plain decimal (`5`, `2.50`). */
export const usd = z.union([z.number(), z.string()], allowed(USD)).transform((raw, ctx) => {
  const n = typeof raw === 'number' ? raw : /^\s*\d*\.?\d+\s*$/.test(raw) ? Number(raw) : Number.NaN;
  if (Number.isFinite(n) && n >= 0) return n;
  ctx.addIssue({ code: 'custom', message: USD });
  return z.NEVER;
});

const DURATION_NUMBER = `a whole number of milliseconds, 0 or more, ${DURATION_RANGE}`;
const DURATION_TEXT = `a duration such as 180000, 180s, 3m or 1h, ${DURATION_RANGE}`;

/** Milliseconds, written as a plain integer (`180000`) or with a unit (`180s`, `3m`, `1h`, `250ms`). */
export const durationMs = z
  .union([z.number(), z.string()], allowed(DURATION_NUMBER))
  .transform((raw, ctx) => {
    const ms = parseDurationMs(raw);
    if (ms !== undefined) return ms;
    ctx.addIssue({ code: 'custom', message: typeof raw === 'number' ? DURATION_NUMBER : DURATION_TEXT });
    return z.NEVER;
  });

/** A duration above zero, as text (`30000`, `30s`, `2m`). */
export const positiveDurationMs = z.string().transform((raw, ctx) => {
  const ms = parseDurationMs(raw);
  if (ms !== undefined && ms > 0) return ms;
  ctx.addIssue({
    code: 'custom',
    message: `a duration above zero such as 30000, 30s or 2m, ${DURATION_RANGE}`,
  });
  return z.NEVER;
});

/** One of `values`, in any case. */
export const oneOf = <const V extends readonly [string, ...string[]]>(values: V) =>
  z
    .string()
    .transform((s) => s.trim().toLowerCase())
    .pipe(z.enum(values, { message: `one of ${values.join(', ')}` }));

/** Text as written (trimmed). */
export const text = z.string().transform((s) => s.trim());

/** Comma-separated items, trimmed, blanks dropped. */
export const commaList = (raw: string): string[] =>
  raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');

/** An http(s) URL with a host and no credentials in it, as a regular expression (messages vary). */
export const HTTP_URL_WITHOUT_CREDENTIALS = /^https?:\/\/[^\s/@]+(\/\S*)?$/u;
