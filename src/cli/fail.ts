import { terminalText } from '../delivery/terminalText.js';
import type { TroupeErrorCode } from '../ports/errorCodes.js';

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
