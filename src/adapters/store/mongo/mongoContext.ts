import type { Collection, Db, MongoClient } from 'mongodb';
import type { Logger } from '../../../logging/logger.js';
import { TroupeError } from '../../../ports/troupeError.js';
import { storeError } from './mongoErrors.js';

// What the parts of the MongoDB store share: collection names, the connection, checks and errors.

/** The collections the store uses (before `collectionPrefix`). */
export const MONGO_COLLECTIONS = {
  documents: 'documents',
  memory: 'memory',
  outbox: 'outbox',
  events: 'agent_event_logs',
  counters: 'counters',
  processed: 'processed',
  history: 'history',
} as const;

export type Names = { -readonly [K in keyof typeof MONGO_COLLECTIONS]: string };

/** What every part of the store shares: the connection, names, and the closed flag. */
export class Context {
  closed = false;

  constructor(
    readonly client: MongoClient,
    readonly db: Db,
    readonly names: Names,
    readonly hosts: string,
    readonly logger: Logger,
    readonly transactions: boolean,
  ) {}

  /** Runs one store operation: refused once closed; driver errors become `TroupeError`s. */
  async run<T>(action: string, operation: () => Promise<T>): Promise<T> {
    if (this.closed) {
      throw new TroupeError(
        'TROUPE_STORE_UNAVAILABLE',
        `Cannot ${action}: the MongoDB store (${this.hosts}) is closed; open a new one.`,
        { retryable: true, details: { hosts: this.hosts } },
      );
    }
    try {
      return await operation();
    } catch (error) {
      throw storeError(error, this.hosts, action);
    }
  }

  collection<T extends object>(name: keyof Names): Collection<T> {
    return this.db.collection<T>(this.names[name]);
  }
}

/** Refuses names MongoDB cannot store exactly (a lone surrogate would be replaced in UTF-8). */
export function checkName(kind: string, value: string): void {
  if (typeof value !== 'string' || /\p{Surrogate}/u.test(value)) {
    throw new TroupeError(
      'TROUPE_STORE_INVALID_VALUE',
      `The ${kind} ${JSON.stringify(value)} is not a well-formed Unicode string; nothing was written.`,
    );
  }
}

export function conflict(
  kind: string,
  place: string,
  expected: number,
  actual: number | undefined,
): TroupeError {
  const found = actual === undefined ? 'another version' : actual === 0 ? 'none (0)' : `version ${actual}`;
  return new TroupeError(
    'TROUPE_STORE_CONFLICT',
    `Compare-and-set lost on ${kind} "${place}": expected version ${expected}, found ${found}. Someone else wrote first; nothing was written.`,
    { details: { place, expectedVersion: expected, actualVersion: actual } },
  );
}

export function corrupt(place: string, what: string): TroupeError {
  return new TroupeError('TROUPE_STORE_CORRUPT', `The stored ${place} is damaged: ${what}.`, {
    details: { place },
  });
}

export function numberOf(value: unknown, place: string, field: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw corrupt(place, `${field} is not a number`);
  return value;
}

/** A `limit` as the port means it: undefined is no limit, anything else a count ≥ 0. */
export function limitOf(limit: number | undefined): number | undefined {
  return limit === undefined ? undefined : Math.max(0, Math.floor(limit));
}
