import { TroupeError } from '../../ports/troupeError.js';

/** How to get a new refresh token: said with every `TROUPE_GMAIL_AUTH`. */
export const NEW_REFRESH_TOKEN_HELP =
  'Authorise Troupe again: run `troupe gmail auth` (it opens Google\'s consent page for your OAuth client, GOOGLE_CLIENT_ID, and saves a new refresh token in the data directory). A GOOGLE_REFRESH_TOKEN or TROUPE_GMAIL_TOKEN_FILE set in the environment wins over the saved token: unset it, or put the new refresh token there. Refresh tokens of an OAuth app left in "Testing" expire after 7 days; publish the app to keep them.';

/** What an HTTP failure from googleapis (a gaxios error) carries, read without importing gaxios. */
export interface GoogleFailure {
  /** HTTP status, when Google answered. */
  status?: number;
  /** Google's error reason (`rateLimitExceeded`, `invalid_grant`…) when it gave one. */
  reason?: string;
  /** Google's message for it. */
  message: string;
  /** Retry-After, in ms, when the answer carried one. */
  retryAfterMs?: number;
  /** A connection error code (ECONNRESET…) when Google did not answer at all. */
  networkCode?: string;
  /** True when the failing request went to the OAuth token endpoint. */
  tokenEndpoint: boolean;
}

const RATE_REASONS = new Set(['rateLimitExceeded', 'userRateLimitExceeded', 'RATE_LIMIT_EXCEEDED']);
const AUTH_REASONS = new Set(['invalid_grant', 'invalid_client', 'unauthorized_client']);

/** Reads a thrown value from googleapis; `undefined` for something that is not an HTTP failure. */
export function readGoogleFailure(
  error: unknown,
  tokenUrl?: string,
  now: number = Date.now(),
): GoogleFailure | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const e = error as {
    status?: unknown;
    code?: unknown;
    message?: unknown;
    response?: { status?: unknown; headers?: unknown; data?: unknown };
    config?: { url?: unknown };
  };
  const status =
    typeof e.response?.status === 'number'
      ? e.response.status
      : typeof e.status === 'number'
        ? e.status
        : undefined;
  const networkCode = typeof e.code === 'string' && /^E[A-Z]+$/u.test(e.code) ? e.code : undefined;
  if (status === undefined && networkCode === undefined) return undefined;
  const data = e.response?.data as
    | { error?: unknown; error_description?: unknown }
    | { error?: { message?: unknown; status?: unknown; errors?: { reason?: unknown }[] } }
    | undefined;
  let reason: string | undefined;
  let message = typeof e.message === 'string' ? e.message : 'the request failed';
  if (data && typeof data === 'object') {
    const err = (data as { error?: unknown }).error;
    if (typeof err === 'string') {
      reason = err;
      const description = (data as { error_description?: unknown }).error_description;
      message = typeof description === 'string' ? `${err}: ${description}` : err;
    } else if (typeof err === 'object' && err !== null) {
      const body = err as { message?: unknown; status?: unknown; errors?: { reason?: unknown }[] };
      const first = Array.isArray(body.errors) ? body.errors[0]?.reason : undefined;
      reason = typeof first === 'string' ? first : typeof body.status === 'string' ? body.status : undefined;
      if (typeof body.message === 'string') message = body.message;
    }
  }
  const url = typeof e.config?.url === 'string' ? e.config.url : String(e.config?.url ?? '');
  const retryAfterMs = retryAfter(e.response?.headers, now);
  return {
    ...(status !== undefined ? { status } : {}),
    ...(reason ? { reason } : {}),
    message: message.slice(0, 500),
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    ...(networkCode ? { networkCode } : {}),
    tokenEndpoint: tokenUrl !== undefined && url.startsWith(tokenUrl),
  };
}

/** Retry-After as seconds or an HTTP date, in ms; headers as a fetch `Headers` or a plain object. */
function retryAfter(headers: unknown, now: number): number | undefined {
  let raw: unknown;
  if (headers && typeof (headers as { get?: unknown }).get === 'function')
    raw = (headers as { get(name: string): string | null }).get('retry-after');
  else if (headers && typeof headers === 'object') raw = (headers as Record<string, unknown>)['retry-after'];
  if (typeof raw !== 'string' || raw.trim() === '') return undefined;
  if (/^\d+(\.\d+)?$/u.test(raw.trim())) return Math.round(Number(raw.trim()) * 1000);
  const at = Date.parse(raw);
  return Number.isFinite(at) ? Math.max(0, at - now) : undefined;
}

/** True for the failures worth trying again: 429, 5xx, Gmail's 403 rate limits, no answer at all. */
export function isRetryable(failure: GoogleFailure): boolean {
  if (failure.tokenEndpoint && failure.status !== undefined && failure.status < 500) return false;
  if (failure.status === undefined) return failure.networkCode !== undefined;
  if (failure.status === 429 || failure.status >= 500) return true;
  return failure.status === 403 && failure.reason !== undefined && RATE_REASONS.has(failure.reason);
}

/** True when a person must fix the credentials: the token endpoint refused, or the API said 401. */
export function isAuthFailure(failure: GoogleFailure): boolean {
  if (failure.reason && AUTH_REASONS.has(failure.reason)) return true;
  if (failure.tokenEndpoint && (failure.status === 400 || failure.status === 401)) return true;
  if (failure.status === 401) return true;
  return (
    failure.status === 403 &&
    (failure.reason === 'insufficientPermissions' || failure.reason === 'ACCESS_TOKEN_SCOPE_INSUFFICIENT')
  );
}

/**
 * A googleapis failure as a {@link TroupeError}: `TROUPE_GMAIL_AUTH` (with how to get a new
 * refresh token), `TROUPE_GMAIL_UNAVAILABLE` (retryable) or `TROUPE_GMAIL_FAILED`. The cause is a
 * plain summary, never the request (which carries the tokens).
 */
export function googleError(error: unknown, what: string, tokenUrl?: string): TroupeError {
  if (TroupeError.isInstance(error)) return error;
  const failure = readGoogleFailure(error, tokenUrl);
  const summary = failure
    ? `${failure.status ?? failure.networkCode}${failure.reason && !failure.message.startsWith(failure.reason) ? ` ${failure.reason}` : ''}: ${failure.message}`
    : error instanceof Error
      ? error.message
      : String(error);
  const cause = new Error(summary);
  const details = {
    operation: what,
    ...(failure?.status !== undefined ? { status: failure.status } : {}),
    ...(failure?.reason ? { reason: failure.reason } : {}),
  };
  if (failure && isAuthFailure(failure))
    return new TroupeError(
      'TROUPE_GMAIL_AUTH',
      `Google refused the Gmail credentials while trying to ${what} (${summary}). ${NEW_REFRESH_TOKEN_HELP}`,
      { cause, details },
    );
  if (failure && isRetryable(failure))
    return new TroupeError(
      'TROUPE_GMAIL_UNAVAILABLE',
      `Google could not ${what} for now (${summary}); it will be tried again.`,
      { retryable: true, cause, details },
    );
  return new TroupeError('TROUPE_GMAIL_FAILED', `Google refused to ${what} (${summary}).`, {
    cause,
    details,
  });
}
