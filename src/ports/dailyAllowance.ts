import type { Logger } from './logger.js';
import type { DocumentStore } from './store.js';
import { TroupeError } from './troupeError.js';

const DAY_MS = 86_400_000;
const ATTEMPTS = 8;

/** What {@link takeDailyAllowance} found: taken, used up (and when it comes back), or too contended. */
export type DailyAllowance =
  | { taken: true }
  | { taken: false; reason: 'used-up'; resetsInMs: number }
  | { taken: false; reason: 'busy' };

/**
 * Takes one from `key`'s allowance of `perDay` per UTC day, kept in the store (so every process
 * sharing it counts together; compare-and-set, retried when two takes race). `perDay` 0: no limit.
 * Counts of earlier days are expired now and then.
 */
export async function takeDailyAllowance(
  documents: DocumentStore,
  options: { collection: string; key: string; perDay: number; now: number; logger: Logger },
): Promise<DailyAllowance> {
  const { collection, key, perDay, now, logger } = options;
  if (perDay <= 0) return { taken: true };
  const day = new Date(now).toISOString().slice(0, 10);
  for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
    const stored = await documents.get<{ day: string; count: number }>(collection, key);
    const count = stored?.value.day === day ? stored.value.count : 0;
    if (count >= perDay) {
      const midnight = Date.parse(`${day}T00:00:00.000Z`) + DAY_MS;
      return { taken: false, reason: 'used-up', resetsInMs: midnight - now };
    }
    try {
      await documents.put(
        collection,
        key,
        { day, count: count + 1 },
        { expectedVersion: stored?.version ?? 0, at: now },
      );
      if (!stored) void documents.expireIdle(collection, now - 2 * DAY_MS).catch(() => undefined);
      return { taken: true };
    } catch (error) {
      if (!TroupeError.isInstance(error) || error.code !== 'TROUPE_STORE_CONFLICT') throw error;
      // Another take by the same key won the race: read again.
      logger.debug({ err: error, collection, key }, 'daily count changed under us; retrying');
    }
  }
  return { taken: false, reason: 'busy' };
}
