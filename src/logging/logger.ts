import { type Logger as PinoLogger, pino } from 'pino';
import type { Logger } from '../ports/logger.js';
import { redactCredentials, redactedError } from '../ports/redactCredentials.js';

export type { Logger, LogMethod } from '../ports/logger.js';

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
  // OAuth tokens and client secrets (the Gmail adapter's credentials, google-auth-library's names).
  'refresh_token',
  '*.refresh_token',
  'access_token',
  '*.access_token',
  'client_secret',
  '*.client_secret',
  'refreshToken',
  '*.refreshToken',
  'accessToken',
  '*.accessToken',
  'clientSecret',
  '*.clientSecret',
];

/** Strings at any depth of a log object, with URL credentials redacted. */
function scrub(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactCredentials(value);
  // Only arrays and plain objects are copied: errors are left whole for the `err` serializer (which
  // redacts them), dates, buffers and class instances for pino to write as it does; depth is bounded.
  if (depth > 6 || typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map((v) => scrub(v, depth + 1));
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) out[key] = scrub(v, depth + 1);
  return out;
}

/** A serialized error's fields, each scrubbed (it is not a plain object, so {@link scrub} keeps it). */
function scrubFields(serialized: unknown): unknown {
  if (typeof serialized !== 'object' || serialized === null) return serialized;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(serialized)) out[key] = scrub(v, 1);
  return out;
}

/**
 * Pino options that keep credentials written into URLs out of every line: in the message, in any
 * field, and in errors (message, stack and causes). Path redaction alone cannot, since a URL's
 * password sits inside a string (an HTTP client's error quotes the URL it failed on).
 */
export const credentialScrubbing = {
  serializers: {
    // The serialized error carries a library's own fields too (an HTTP error's `url`, its request
    // body): every string in it is scrubbed, not only the message and stack.
    err: (error: unknown) => scrubFields(pino.stdSerializers.err(redactedError(error) as Error)),
  },
  formatters: {
    log: (object: Record<string, unknown>) => scrub(object) as Record<string, unknown>,
  },
  hooks: {
    logMethod(this: PinoLogger, args: unknown[], method: (...a: unknown[]) => void) {
      method.apply(
        this,
        args.map((a) => (typeof a === 'string' ? redactCredentials(a) : a)),
      );
    },
  },
};

/**
 * The logger Troupe uses when the embedding app gives none: pino at `level` (default `info`, or
 * `LOG_LEVEL`), writing JSON to stderr (or `destination`) so stdout stays free for a program's own
 * output. Keys, tokens and URL credentials are redacted (see {@link credentialScrubbing}).
 */
export function createLogger(
  options: { level?: string; name?: string; destination?: pino.DestinationStream } = {},
): Logger {
  return pino(
    {
      name: options.name ?? 'troupe',
      level: options.level ?? 'info',
      redact: { paths: redactedPaths, censor: '[redacted]' },
      ...credentialScrubbing,
    },
    options.destination ?? pino.destination(2),
  );
}

/** A logger that drops everything (tests, and embedders who log elsewhere). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
