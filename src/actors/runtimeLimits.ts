import { z } from 'zod';
import { ConfigError, type ConfigProblem } from '../config/configError.js';
import { MAX_DURATION_MS } from '../config/duration.js';
import { MAX_MAX_REPLY_CHARS, MIN_MAX_REPLY_CHARS } from '../config/replySettings.js';
import type { RuntimeOptions } from './runtimeOptions.js';

/** A duration in milliseconds: finite and positive (NaN or Infinity would switch a protection off). */
const durationMs = z.number().finite().positive();
/** A duration a timer waits: also no longer than a timer can hold (a longer one fires at once). */
const timerMs = durationMs.max(MAX_DURATION_MS);
const timerMsOrZero = z.number().finite().min(0).max(MAX_DURATION_MS);
const count = (min: number) => z.number().int().min(min).max(Number.MAX_SAFE_INTEGER);

/** The numeric runtime options, as zod checks them. */
const runtimeLimitsSchema = z.object({
  sendTimeoutMs: timerMs.optional(),
  stopDeadlineMs: timerMs.optional(),
  historyLimit: count(0).optional(),
  maxReplyChars: z.number().int().min(MIN_MAX_REPLY_CHARS).max(MAX_MAX_REPLY_CHARS).optional(),
  retry: z
    .object({
      maxAttempts: count(1).optional(),
      baseDelayMs: timerMsOrZero.optional(),
      maxDelayMs: timerMsOrZero.optional(),
    })
    .optional(),
  persistence: z
    .object({
      flushIntervalMs: timerMsOrZero.optional(),
      ledgerLimit: z.number().int().min(0).max(100_000).optional(),
      passivateAfterMs: durationMs.optional(),
      idleExpiryMs: durationMs.optional(),
      leaseTtlMs: z.number().finite().min(1_000).max(MAX_DURATION_MS).optional(),
    })
    .optional(),
  lookup: z.object({ choiceTtlMs: durationMs.optional() }).optional(),
});

/** What each option must be, as a person reads it. */
const EXPECTED: Record<string, string> = {
  sendTimeoutMs: 'a number of milliseconds above 0, at most 2147483647 (the longest a timer can wait)',
  stopDeadlineMs: 'a number of milliseconds above 0, at most 2147483647 (the longest a timer can wait)',
  historyLimit: 'a whole number of messages, 0 or more',
  maxReplyChars: `a whole number of characters from ${MIN_MAX_REPLY_CHARS} to ${MAX_MAX_REPLY_CHARS}`,
  maxAttempts: 'a whole number of attempts, 1 or more',
  baseDelayMs: 'a number of milliseconds from 0 to 2147483647',
  maxDelayMs: 'a number of milliseconds from 0 to 2147483647',
  flushIntervalMs: 'a number of milliseconds from 0 to 2147483647',
  ledgerLimit: 'a whole number of events from 0 to 100000',
  passivateAfterMs: 'a finite number of milliseconds above 0',
  idleExpiryMs: 'a finite number of milliseconds above 0',
  leaseTtlMs: 'a number of milliseconds from 1000 to 2147483647',
  choiceTtlMs: 'a finite number of milliseconds above 0',
};

/**
 * Checks the runtime's numeric options (timeouts, deadlines, retry and persistence intervals)
 * the way config is checked: a value that would quietly disable a protection (a NaN send timeout
 * never fires; a NaN stop deadline waits forever) is refused up front.
 *
 * @throws ConfigError `TROUPE_CONFIG_INVALID`, naming every option that is wrong.
 */
export function checkRuntimeLimits(options: RuntimeOptions): void {
  const parsed = runtimeLimitsSchema.safeParse({
    sendTimeoutMs: options.sendTimeoutMs,
    stopDeadlineMs: options.stopDeadlineMs,
    historyLimit: options.historyLimit,
    maxReplyChars: options.maxReplyChars,
    retry: options.retry,
    persistence: options.persistence,
    lookup: options.lookup ? { choiceTtlMs: options.lookup.choiceTtlMs } : undefined,
  });
  if (parsed.success) return;
  const problems: ConfigProblem[] = parsed.error.issues.map((issue) => {
    const value = issue.path.reduce<unknown>(
      (at, key) => (at as Record<PropertyKey, unknown> | undefined)?.[key as PropertyKey],
      options,
    );
    const leaf = String(issue.path.at(-1) ?? '');
    return {
      variable: issue.path.join('.'),
      value: String(value),
      expected: EXPECTED[leaf] ?? issue.message,
    };
  });
  throw new ConfigError(problems);
}
