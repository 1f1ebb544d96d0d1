import { TroupeError } from '../../../ports/troupeError.js';

/** What a write that gives nothing back resolves with (one promise for all of them). */
export const DONE: Promise<void> = Promise.resolve();

/** What every part of one memory store shares: whether it is closed, and its clock. */
export interface MemoryState {
  closed: boolean;
  now: () => number;
}

export function ensureOpen(state: MemoryState): void {
  if (state.closed)
    throw new TroupeError('TROUPE_STORE_UNAVAILABLE', 'The memory store is closed; open a new one.', {
      retryable: true,
    });
}

export function conflict(kind: string, place: string, expected: number, actual: number): TroupeError {
  return new TroupeError(
    'TROUPE_STORE_CONFLICT',
    `Compare-and-set lost on ${kind} "${place}": expected version ${expected}, found ${actual === 0 ? 'none (0)' : `version ${actual}`}. Someone else wrote first; nothing was written.`,
    { details: { place, expectedVersion: expected, actualVersion: actual } },
  );
}

export function limitOf(limit: number | undefined): number {
  if (limit === undefined) return Number.POSITIVE_INFINITY;
  return Math.max(0, Math.floor(limit));
}
