import { z } from 'zod';
import { ConfigError } from './configError.js';

/** The longest reply sent by default: a few thousand characters, about two Discord messages. */
export const DEFAULT_MAX_REPLY_CHARS = 4_000;
/** Bounds for the reply cap: below 200 a reply cannot say much; above 100,000 it is no cap. */
export const MIN_MAX_REPLY_CHARS = 200;
export const MAX_MAX_REPLY_CHARS = 100_000;

const EXPECTED = `a whole number of characters from ${MIN_MAX_REPLY_CHARS} to ${MAX_MAX_REPLY_CHARS}`;
const maxReplyChars = z
  .string()
  .regex(/^\d+$/u)
  .transform(Number)
  .pipe(z.number().int().min(MIN_MAX_REPLY_CHARS).max(MAX_MAX_REPLY_CHARS));

/** The environment variables for replies, with their defaults and docs (the README's table). */
export const replySettings = {
  TROUPE_MAX_REPLY_CHARS: {
    default: String(DEFAULT_MAX_REPLY_CHARS),
    doc: `Longest model reply sent (${MIN_MAX_REPLY_CHARS} to ${MAX_MAX_REPLY_CHARS}); a longer one is clipped at a sentence boundary before it is prepared, and the clip is logged.`,
  },
} as const;

/**
 * Reads the reply settings from environment variables.
 *
 * @throws ConfigError `TROUPE_CONFIG_INVALID` naming the variable, its value and the allowed range.
 */
export function replySettingsFromEnv(env: Readonly<Record<string, string | undefined>>): {
  maxReplyChars: number;
} {
  const raw = env.TROUPE_MAX_REPLY_CHARS;
  if (raw === undefined || raw.trim() === '') return { maxReplyChars: DEFAULT_MAX_REPLY_CHARS };
  const parsed = maxReplyChars.safeParse(raw.trim());
  if (!parsed.success)
    throw new ConfigError([
      {
        variable: 'TROUPE_MAX_REPLY_CHARS',
        value: raw,
        expected: EXPECTED,
      },
    ]);
  return { maxReplyChars: parsed.data };
}
