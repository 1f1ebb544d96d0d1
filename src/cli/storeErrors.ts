import { storeErrorCodes } from '../ports/errorCodes.js';
import { TroupeError } from '../ports/troupeError.js';
import { fail } from './fail.js';

/**
 * Exit code of a command stopped because another process held the store locked past its busy
 * timeout (sysexits' EX_TEMPFAIL): nothing was half done; run it again once the other is through.
 */
export const EXIT_STORE_BUSY = 75;

/**
 * Exit code of a command stopped because the store's disk is full (sysexits' EX_IOERR): nothing
 * was half done; free space and run it again.
 */
export const EXIT_STORE_FULL = 74;

/** The exit code a command gives for a Troupe error: a busy or full store its own, else `otherwise`. */
export function exitCodeOf(error: TroupeError, otherwise = 2): number {
  if (error.code === storeErrorCodes.busy) return EXIT_STORE_BUSY;
  if (error.code === storeErrorCodes.full) return EXIT_STORE_FULL;
  return otherwise;
}

/**
 * For a busy or full store: writes its one line (`error CODE: message`, no stack) and returns the
 * exit code. Anything else is left to the caller (`undefined`).
 */
export function reportStoreFailure(error: unknown, stderr: (text: string) => void): number | undefined {
  if (!TroupeError.isInstance(error)) return undefined;
  if (error.code !== storeErrorCodes.busy && error.code !== storeErrorCodes.full) return undefined;
  return fail(stderr, error.code, error.message, exitCodeOf(error));
}
