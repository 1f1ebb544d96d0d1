import { type Logger, pino } from 'pino';

export type { Logger } from 'pino';

/**
 * Paths redacted from every log line: keys, tokens and passwords never reach logs, whatever
 * object they are nested in.
 */
export const redactedPaths = [
  'apiKey',
  '*.apiKey',
  'token',
  '*.token',
  'password',
  '*.password',
  'authorization',
  '*.authorization',
  'headers.authorization',
  '*.headers.authorization',
  'secret',
  '*.secret',
];

/**
 * The logger Troupe uses when the embedding app gives none: pino at `level` (default `info`, or
 * `LOG_LEVEL`), writing JSON to stderr so stdout stays free for a program's own output.
 */
export function createLogger(options: { level?: string; name?: string } = {}): Logger {
  return pino(
    {
      name: options.name ?? 'troupe',
      level: options.level ?? 'info',
      redact: { paths: redactedPaths, censor: '[redacted]' },
    },
    pino.destination(2),
  );
}

/** A logger that drops everything (tests, and embedders who log elsewhere). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
