import { z } from 'zod';
import { defineSettings, type EnvRecord, settingsFromEnv } from '../config/settings.js';

/** The levels `LOG_LEVEL` may name: pino's, quietest last, and `silent`. */
export const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** One of {@link logLevels}. */
export type LogLevel = (typeof logLevels)[number];

/** A log level as a person writes it: surrounding spaces and case do not matter. */
export const logLevelSchema = z
  .string()
  .trim()
  .toLowerCase()
  .pipe(z.enum(logLevels, { message: `one of ${logLevels.join(', ')} (any case)` }));

/** The logging variable every command reads, with its doc (the README's table). */
export const logLevelSettings = defineSettings({
  LOG_LEVEL: {
    key: 'level',
    schema: logLevelSchema,
    shown: '`warn` (`info` for `troupe discord`)',
    doc: `How much a command logs on stderr: ${logLevels.join(', ')} (any case).`,
  },
});

/**
 * The level `LOG_LEVEL` names, or `fallback` when it is unset or blank. Checked before a logger is
 * made, so a typo is a configuration error naming the accepted levels rather than pino's throw.
 * @throws ConfigError `TROUPE_CONFIG_INVALID` for any other value.
 */
export function logLevelFromEnv(env: EnvRecord, fallback: LogLevel = 'info'): LogLevel {
  return settingsFromEnv(logLevelSettings, env).level ?? fallback;
}
