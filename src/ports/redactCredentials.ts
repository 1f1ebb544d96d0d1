/**
 * Credentials written into URLs (`scheme://user:password@host`, `scheme://token@host`) are removed
 * from any text before it reaches an error message, a log line or the terminal: an HTTP client or
 * a driver quotes the URL it failed on, password and all.
 */

/** What replaces a URL's user information. */
export const redactedUserInfo = '***';

// scheme://userinfo@ — userinfo stops at whitespace, '/', '@' and quotes, as in a URL.
const urlUserInfo = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s/@'"`<>]+)@/giu;

// Discord puts secrets in paths: a webhook's token (anyone holding it may post as the webhook) and
// an interaction's token (it answers the interaction for 15 minutes).
const pathToken = /(\/(?:webhooks|interactions)\/\d+\/)([^\s/?#'"`<>]+)/gu;

/**
 * `text` with the user information of every URL in it replaced by `***` (the host stays), and
 * the token of every Discord webhook or interaction path (`/webhooks/<id>/<token>`).
 */
export function redactCredentials(text: string): string {
  let out = text;
  if (out.includes('://')) out = out.replace(urlUserInfo, `$1${redactedUserInfo}@`);
  if (out.includes('/webhooks/') || out.includes('/interactions/'))
    out = out.replace(pathToken, `$1${redactedUserInfo}`);
  return out;
}

/** True when `text` holds a URL with user information not yet redacted. */
export function hasUrlCredentials(text: string): boolean {
  return redactCredentials(text) !== text;
}

/**
 * `error` as it may be kept and logged: the same error when no message or stack quotes a URL's
 * credentials, else a plain copy (same name, code and cause chain, redacted) — the original
 * object, possibly a library's, is left alone.
 */
export function redactedError(error: unknown, depth = 0): unknown {
  if (!(error instanceof Error) || depth > 8) return error;
  const cause = (error as { cause?: unknown }).cause;
  const safeCause = cause === undefined ? undefined : redactedError(cause, depth + 1);
  const leaks = hasUrlCredentials(error.message) || hasUrlCredentials(error.stack ?? '');
  if (!leaks && safeCause === cause) return error;
  const copy = new Error(
    redactCredentials(error.message),
    safeCause === undefined ? undefined : { cause: safeCause },
  );
  copy.name = error.name;
  copy.stack = redactCredentials(error.stack ?? '');
  const code = (error as { code?: unknown }).code;
  if (code !== undefined) Object.defineProperty(copy, 'code', { value: code, enumerable: true });
  return copy;
}
