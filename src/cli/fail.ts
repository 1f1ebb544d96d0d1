import { terminalText } from '../delivery/terminalText.js';
import type { TroupeErrorCode } from '../ports/errorCodes.js';
import { isTroupeError, type TroupeError } from '../ports/troupeError.js';

/** The exit code of a command refused for bad input or configuration. */
export const EXIT_BAD_INPUT = 2;

/**
 * Writes a command's one error line, `error CODE: message`, and returns its exit code (2 unless
 * told). The message may quote a file, a flag or the environment, so controls are neutralised.
 */
export function fail(
  stderr: (text: string) => void,
  code: TroupeErrorCode,
  message: string,
  exitCode = EXIT_BAD_INPUT,
): number {
  stderr(`error ${code}: ${terminalText(message)}\n`);
  return exitCode;
}

/**
 * What `read` gives, or the exit code after writing the error it throws when `refused` says the
 * operator must fix it (by default any TroupeError); anything else is thrown on.
 */
export async function readOrFail<T extends object>(
  stderr: (text: string) => void,
  read: () => T | Promise<T>,
  refused: (error: unknown) => error is TroupeError = isTroupeError,
): Promise<T | number> {
  try {
    return await read();
  } catch (error) {
    if (!refused(error)) throw error;
    return fail(stderr, error.code, error.message);
  }
}
