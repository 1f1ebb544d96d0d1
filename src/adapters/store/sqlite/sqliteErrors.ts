import { statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { storeErrorCodes } from '../../../ports/errorCodes.js';
import { TroupeError } from '../../../ports/troupeError.js';

/** Which database an error is about, for messages that say where and what to do. */
export interface SqliteErrorContext {
  /** The database file as given (`:memory:` or empty for an in-memory database). */
  path: string;
  /** How long a write waited for another process's lock. */
  busyTimeoutMs: number;
}

/** The driver's or the OS's code and text, once. */
export function osReason(error: unknown): string {
  const { code, message } = error as { code?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : String(error);
  return typeof code === 'string' && !text.includes(code) ? `${code}: ${text}` : text;
}

function codeOf(error: unknown): string {
  return String((error as { code?: unknown }).code ?? '');
}

function inMemory(path: string): boolean {
  return path === ':memory:' || path === '';
}

function storeName(path: string): string {
  return inMemory(path) ? 'the in-memory SQLite store' : `the SQLite store at ${resolve(path)}`;
}

/** Another connection holds the lock: SQLite's busy and locked codes (and their extended forms). */
function isBusy(code: string): boolean {
  return code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED');
}

/** Whether a driver error says another connection holds the lock (worth trying again later). */
export function isLockHeld(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && isBusy(code);
}

/** No room to write: SQLite's own code, or the OS's when it surfaces (creating a directory or file). */
function isFull(code: string, error: unknown): boolean {
  return code === 'SQLITE_FULL' || code === 'ENOSPC' || /\bENOSPC\b/u.test(osReason(error));
}

/**
 * `TROUPE_STORE_BUSY` or `TROUPE_STORE_FULL` for a driver or OS error that is one of them, naming
 * the database and what a person does about it; `undefined` for any other error.
 */
export function capacityError(
  error: unknown,
  during: string,
  context: SqliteErrorContext,
): TroupeError | undefined {
  const code = codeOf(error);
  const name = storeName(context.path);
  const details = { code, during, ...(inMemory(context.path) ? {} : { path: resolve(context.path) }) };
  if (isBusy(code))
    return new TroupeError(
      storeErrorCodes.busy,
      `${capitalise(name)} is held by another process: ${during} waited ${context.busyTimeoutMs} ms for its lock (${osReason(error)}). Another troupe process (or a tool with the file open) is writing to it: wait for it to finish or stop it, then run this again (TROUPE_SQLITE_BUSY_TIMEOUT_MS sets how long a write waits). Nothing of this write was made.`,
      { retryable: true, cause: error, details: { ...details, busyTimeoutMs: context.busyTimeoutMs } },
    );
  if (isFull(code, error)) {
    const where = inMemory(context.path) ? 'memory' : dirname(resolve(context.path));
    return new TroupeError(
      storeErrorCodes.full,
      `${capitalise(name)} is full (${osReason(error)} during ${during}): free disk space in ${where} (or point TROUPE_DATA_DIR at a disk with room), then run this again. Nothing of this write was made.`,
      { retryable: true, cause: error, details },
    );
  }
  return undefined;
}

/** Why a database file could not be opened, as a `TroupeError`. */
export function openError(error: unknown, context: SqliteErrorContext): TroupeError {
  const { path } = context;
  const absolute = resolve(path);
  const code = codeOf(error);
  const capacity = capacityError(error, 'opening', context);
  if (capacity) return capacity;
  if (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT'))
    return new TroupeError(
      'TROUPE_STORE_CORRUPT',
      `Cannot open the SQLite store at ${absolute}: the file is not a SQLite database (${osReason(error)}). Move it aside or choose another path; Troupe will not overwrite it.`,
      { cause: error, details: { path: absolute, reason: osReason(error) } },
    );
  let reason = osReason(error);
  try {
    if (statSync(absolute).isDirectory()) reason = `it is a directory (${reason})`;
  } catch {
    // Nothing more to say about a path that cannot be examined.
  }
  return new TroupeError(
    'TROUPE_STORE_UNAVAILABLE',
    `Cannot open the SQLite store at ${absolute}: ${reason}.`,
    {
      retryable: true,
      cause: error,
      details: { path: absolute, reason },
    },
  );
}

/**
 * A driver error, classified: a lock held elsewhere is `TROUPE_STORE_BUSY` and a full disk
 * `TROUPE_STORE_FULL` (both retryable); damage is `TROUPE_STORE_CORRUPT`; the rest is
 * `TROUPE_STORE_UNAVAILABLE`, retryable when it is I/O trouble that may pass.
 */
export function driverError(error: unknown, during: string, context: SqliteErrorContext): TroupeError {
  const code = codeOf(error);
  const reason = osReason(error);
  const where = `${during} on ${storeName(context.path)}`;
  const capacity = capacityError(error, during, context);
  if (capacity) return capacity;
  if (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT'))
    return new TroupeError(
      'TROUPE_STORE_CORRUPT',
      `The database file is damaged (${reason}) during ${where}.`,
      {
        cause: error,
        details: { code },
      },
    );
  const transient =
    code.startsWith('SQLITE_IOERR') ||
    code.startsWith('SQLITE_CANTOPEN') ||
    code.startsWith('SQLITE_READONLY') ||
    code === 'SQLITE_PERM' ||
    code === 'SQLITE_PROTOCOL';
  return new TroupeError('TROUPE_STORE_UNAVAILABLE', `The SQLite store failed (${reason}) during ${where}.`, {
    retryable: transient,
    cause: error,
    details: { code },
  });
}

/** The text with its first letter in upper case. */
export function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
