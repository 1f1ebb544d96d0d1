import { z } from 'zod';

const DURATION_PATTERN = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/i;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * The longest duration Troupe accepts: what a Node timer can wait (a signed 32-bit number of
 * milliseconds, about 24.8 days). A longer `setTimeout` fires at once, so a 600h model timeout
 * would fail every call immediately.
 */
export const MAX_DURATION_MS = 2_147_483_647;

/** The allowed range, as a person reads it. */
export const DURATION_RANGE = 'at most 596h (2147483647 ms, the longest a timer can wait)';

/** What a duration looks like, for error messages and docs. */
export const DURATION_HINT = `a duration: whole milliseconds (1500) or a string such as 500ms, 3s, 2m, 1h; ${DURATION_RANGE}`;

/**
 * Parses a duration written as whole milliseconds or as a number with a unit (`ms`, `s`, `m`, `h`).
 * Returns `undefined` when the value is not a duration, or is longer than {@link MAX_DURATION_MS}.
 */
export function parseDurationMs(raw: number | string): number | undefined {
  if (typeof raw === 'number')
    return Number.isInteger(raw) && raw >= 0 && raw <= MAX_DURATION_MS ? raw : undefined;
  const match = DURATION_PATTERN.exec(raw);
  if (!match) return undefined;
  const factor = UNIT_MS[(match[2] ?? 'ms').toLowerCase()] ?? 1;
  const ms = Math.round(Number(match[1]) * factor);
  return Number.isFinite(ms) && ms <= MAX_DURATION_MS ? ms : undefined;
}

/**
 * Zod schema for a hand-written duration. The input side (and so the JSON Schema) is
 * `integer >= 0 | string matching the pattern`; the output is milliseconds.
 */
export const durationSchema = z
  .union(
    [
      z.number().int(DURATION_HINT).min(0, DURATION_HINT).max(MAX_DURATION_MS, DURATION_HINT),
      // The pattern is repeated here (not only in the transform) so editors validate it too.
      z.string().regex(DURATION_PATTERN, DURATION_HINT),
    ],
    { error: DURATION_HINT },
  )
  .transform((raw, ctx) => {
    const ms = parseDurationMs(raw);
    if (ms !== undefined) return ms;
    ctx.addIssue({ code: 'custom', message: DURATION_HINT });
    return z.NEVER;
  })
  .meta({ description: DURATION_HINT });

/**
 * Formats simulated time since the start as `mm:ss.s` (or `h:mm:ss.s` past an hour), the clock the
 * transcript prints.
 */
export function formatSimTime(ms: number): string {
  const tenths = Math.floor(ms / 100);
  const hours = Math.floor(tenths / 36_000);
  const minutes = Math.floor((tenths % 36_000) / 600);
  const seconds = Math.floor((tenths % 600) / 10);
  const t = tenths % 10;
  const mmss = `${String(minutes).padStart(2, '0')}:${String(seconds).padStart(2, '0')}.${t}`;
  return hours > 0 ? `${hours}:${mmss}` : mmss;
}

/** Formats a duration for people: `1.5s`, `3m`, `2m 30s`, `450ms`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  if (ms < 60_000) return `${Number((ms / 1000).toFixed(1))}s`;
  // Round to whole seconds first, so 299.6 s reads "5m", not "4m 60s".
  const totalSeconds = Math.round(ms / 1000);
  const minutes = Math.floor(totalSeconds / 60);
  const seconds = totalSeconds % 60;
  if (minutes < 60) return seconds ? `${minutes}m ${seconds}s` : `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  const rest = minutes % 60;
  return rest ? `${hours}h ${rest}m` : `${hours}h`;
}
