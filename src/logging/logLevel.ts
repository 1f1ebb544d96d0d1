import { z } from 'zod';
import { ConfigError } from '../config/configError.js';

/** The levels `LOG_LEVEL` may name: pino's, quietest last, and `silent`. */
export const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** One of {@link logLevels}. */
export type LogLevel = (typeof logLevels)[number];

/** A log level as a person writes it: surrounding spaces and case do not matter. */
export const logLevelSchema = z.string().trim().toLowerCase().pipe(z.enum(logLevels));

/**
 * The level `LOG_LEVEL` names, or `fallback` when it is unset or blank. Checked before a logger is
 * made, so a typo is a configuration error naming the accepted levels rather than pino's throw.
 * @throws ConfigError `TROUPE_CONFIG_INVALID` for any other value.
 */
export function logLevelFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  fallback: LogLevel = 'info',
): LogLevel {
  const raw = env.LOG_LEVEL;
  if (raw === undefined || raw.trim() === '') return fallback;
  const parsed = logLevelSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  throw new ConfigError([
    { variable: 'LOG_LEVEL', value: raw, expected: `one of ${logLevels.join(', ')} (any case)` },
  ]);
}
