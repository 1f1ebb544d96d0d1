import {
  MongoClientClosedError,
  MongoError,
  MongoNetworkError,
  MongoNotConnectedError,
  MongoServerClosedError,
  MongoServerError,
  MongoServerSelectionError,
  MongoTopologyClosedError,
} from 'mongodb';
import { redactCredentials } from '../../../ports/redactCredentials.js';
import { TroupeError } from '../../../ports/troupeError.js';

/** MongoDB's duplicate-key error code (a unique index refused a write). */
export const DUPLICATE_KEY = 11000;

/** True for a write refused by a unique index, as a server error or inside a bulk write error. */
export function isDuplicateKey(error: unknown): boolean {
  if (!(error instanceof MongoError)) return false;
  if (error.code === DUPLICATE_KEY) return true;
  const writeErrors = (error as { writeErrors?: unknown }).writeErrors;
  return (
    Array.isArray(writeErrors) && writeErrors.some((e) => (e as { code?: unknown }).code === DUPLICATE_KEY)
  );
}

/** A connection string with its password replaced, safe for messages and logs. */
export function redactUri(uri: string): string {
  return uri.replace(/^([a-z][a-z0-9+.-]*:\/\/)([^@/?#]*)@/i, (_match, scheme: string, userInfo: string) => {
    const colon = userInfo.indexOf(':');
    return colon < 0 ? `${scheme}${userInfo}@` : `${scheme}${userInfo.slice(0, colon)}:***@`;
  });
}

/** A driver error's message with anything that looks like credentials in a connection string removed. */
export function cleanMessage(error: unknown): string {
  return redactCredentials(error instanceof Error ? error.message : String(error));
}

/** True when trying again later may help: the server is unreachable, restarting or stepping down. */
export function isTransient(error: unknown): boolean {
  if (
    error instanceof MongoNetworkError ||
    error instanceof MongoServerSelectionError ||
    error instanceof MongoTopologyClosedError ||
    error instanceof MongoNotConnectedError ||
    error instanceof MongoServerClosedError ||
    error instanceof MongoClientClosedError
  ) {
    return true;
  }
  return (
    error instanceof MongoError &&
    (error.hasErrorLabel('RetryableWriteError') ||
      error.hasErrorLabel('TransientTransactionError') ||
      error.hasErrorLabel('ResetPool'))
  );
}

/**
 * The `TroupeError` for a failed MongoDB operation: `TROUPE_STORE_UNAVAILABLE` naming the hosts
 * (never credentials) and the driver's reason; retryable when the failure is transient. A value
 * too large for a BSON document is `TROUPE_STORE_INVALID_VALUE`.
 */
export function storeError(error: unknown, hosts: string, action: string): TroupeError {
  if (TroupeError.isInstance(error)) return error;
  const reason = cleanMessage(error);
  const code = error instanceof MongoError ? error.code : undefined;
  if (
    code === 10334 ||
    /larger than the maximum|BSONObjectTooLarge|object to insert too large/i.test(reason)
  ) {
    return new TroupeError(
      'TROUPE_STORE_INVALID_VALUE',
      `Cannot ${action}: the value is too large for one MongoDB document (16 MB) (${reason}).`,
      { cause: error, details: { hosts } },
    );
  }
  const transient = isTransient(error);
  const what = transient
    ? `MongoDB at ${hosts} is unavailable`
    : error instanceof MongoServerError
      ? `MongoDB at ${hosts} refused the command`
      : `The MongoDB driver failed talking to ${hosts}`;
  return new TroupeError('TROUPE_STORE_UNAVAILABLE', `${what} while trying to ${action}: ${reason}`, {
    retryable: transient,
    cause: error,
    details: {
      hosts,
      ...(code !== undefined ? { mongoCode: code } : {}),
      ...(error instanceof Error ? { mongoError: error.name } : {}),
    },
  });
}
