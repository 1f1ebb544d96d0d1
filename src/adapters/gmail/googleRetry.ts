import type { Logger } from '../../logging/logger.js';
import { googleError, isRetryable, readGoogleFailure } from './googleError.js';

/** How Google calls are retried (gaxios's own retry ignores Retry-After, so it is turned off). */
export interface GoogleRetryOptions {
  /** Tries in all, the first included (default 5). */
  attempts?: number;
  /** The first backoff when Google gives no Retry-After, doubled each time (default 1 s). */
  baseDelayMs?: number;
  /** The longest single wait, Retry-After included (default 2 min); a longer Retry-After is not waited for. */
  maxDelayMs?: number;
  /** Waits `ms` (tests pass a simulated one). */
  sleep?: (ms: number) => Promise<void>;
  /** The time a Retry-After date is measured from (default `Date.now`; tests pass a simulated one). */
  now?: () => number;
}

/** A function that runs one Google operation with retries; failures come out as `TroupeError`s. */
export type GoogleCall = <T>(what: string, operation: () => Promise<T>) => Promise<T>;

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Runs operations with retries on 429, 5xx, Gmail's 403 rate limits and lost connections,
 * waiting what Google's Retry-After says (seconds, or an HTTP date measured from `now`; else
 * 1 s, 2 s, 4 s…), at most `attempts` tries and `maxDelayMs` per wait (a longer Retry-After
 * fails at once, retryable, for the next pass). The operation is retried whole,
 * so one that must not be repeated blindly (a send) looks for its earlier result first.
 * What still fails is a `TROUPE_GMAIL_*` error.
 */
export function googleRetrying(
  options: GoogleRetryOptions & { tokenUrl?: string; logger?: Logger } = {},
): GoogleCall {
  const attempts = options.attempts ?? 5;
  const base = options.baseDelayMs ?? 1_000;
  const max = options.maxDelayMs ?? 120_000;
  const sleep = options.sleep ?? realSleep;
  const now = options.now ?? Date.now;
  return async (what, operation) => {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await operation();
      } catch (error) {
        const failure = readGoogleFailure(error, options.tokenUrl, now());
        if (!failure || !isRetryable(failure) || attempt >= attempts)
          throw googleError(error, what, options.tokenUrl);
        const wait = failure.retryAfterMs ?? base * 2 ** (attempt - 1);
        if (wait > max) throw googleError(error, what, options.tokenUrl);
        options.logger?.warn(
          { operation: what, status: failure.status ?? failure.networkCode, waitMs: wait, attempt },
          'Google asked to wait; retrying',
        );
        await sleep(wait);
      }
    }
  };
}
