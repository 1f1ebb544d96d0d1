import { redactCredentials } from './redactCredentials.js';
import { describe } from './troupeError.js';

/**
 * A thrown value as an ordinary `Error` that is safe to keep as a cause, log and print: its
 * message (see {@link describe}), and its name, stack and code when they are plain text and can be
 * read. The value itself is not kept: one from outside (a caller's getter or Proxy, a stream's
 * source) may throw again each time it is read — in a logger, or in a program's `errors$` handler.
 */
export function plainError(thrown: unknown): Error {
  const copy = new Error(describe(thrown));
  const name = readField(thrown, 'name');
  if (typeof name === 'string' && name !== '') copy.name = name;
  const stack = readField(thrown, 'stack');
  copy.stack = typeof stack === 'string' ? redactCredentials(stack) : `${copy.name}: ${copy.message}`;
  const code = readField(thrown, 'code');
  if (typeof code === 'string' || typeof code === 'number')
    Object.defineProperty(copy, 'code', { value: code, enumerable: true });
  return copy;
}

/** `value[key]`, or undefined when `value` has no fields or reading one throws. */
function readField(value: unknown, key: string): unknown {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return undefined;
  try {
    return (value as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}
