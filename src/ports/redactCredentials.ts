/**
 * Credentials written into URLs (`scheme://user:password@host`, `scheme://token@host`) are removed
 * from any text before it reaches an error message, a log line or the terminal: an HTTP client or
 * a driver quotes the URL it failed on, password and all.
 */

/** What replaces a URL's user information. */
export const redactedUserInfo = '***';

// scheme://userinfo@ — userinfo stops at whitespace, '/', '@' and quotes, as in a URL.
const urlUserInfo = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s/@'"`<>]+)@/giu;

/** `text` with the user information of every URL in it replaced by `***` (the host stays). */
export function redactCredentials(text: string): string {
  if (!text.includes('://')) return text;
  return text.replace(urlUserInfo, `$1${redactedUserInfo}@`);
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
