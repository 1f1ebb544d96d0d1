import type { HistoryStore } from './history.js';
import type { Outbox } from './outbox.js';

/** A stored document: a JSON value under a collection and key, with a version for compare-and-set. */
export interface StoredDocument<T = unknown> {
  collection: string;
  key: string;
  value: T;
  /** 1 on creation, +1 on every write. */
  version: number;
  /** When it was last written (epoch ms); idle expiry looks at this. */
  updatedAt: number;
}

/** One write of a batch. */
export interface DocumentWrite<T = unknown> {
  key: string;
  value: T;
  /** Compare-and-set: the write applies only if the stored version is this (0: must not exist). */
  expectedVersion?: number | undefined;
}

/**
 * One operation of a {@link DocumentStore.batch}: a write (compare-and-set with
 * `expectedVersion`, as in {@link DocumentStore.put}) or a delete (only of that version, with
 * `expectedVersion`, as in {@link DocumentStore.delete}).
 */
export type DocumentOperation<T = unknown> =
  | { op: 'put'; collection: string; key: string; value: T; expectedVersion?: number | undefined }
  | { op: 'delete'; collection: string; key: string; expectedVersion?: number | undefined };

/**
 * Documents by collection and key. Values are JSON (objects, arrays, strings, numbers, booleans,
 * null). Writes that name an `expectedVersion` are compare-and-set and throw a `TroupeError`
 * `TROUPE_STORE_CONFLICT` when someone else wrote first; nothing is written then.
 */
export interface DocumentStore {
  get<T = unknown>(collection: string, key: string): Promise<StoredDocument<T> | undefined>;
  /** Writes one document; returns its new version. */
  put<T = unknown>(
    collection: string,
    key: string,
    value: T,
    options?: { expectedVersion?: number; at?: number },
  ): Promise<number>;
  /**
   * Writes several documents of one collection atomically (all or none): the runtime batches
   * actor snapshots this way. Returns the new versions, in order.
   */
  putMany<T = unknown>(
    collection: string,
    writes: readonly DocumentWrite<T>[],
    at?: number,
  ): Promise<number[]>;
  /**
   * Writes and deletes documents of any collections atomically, in order: all or none. A write
   * whose `expectedVersion` does not hold throws `TROUPE_STORE_CONFLICT` (naming it) and nothing
   * is applied; a delete that finds no document (or another version) changes nothing and does not
   * fail the batch. Returns, in order, each write's new version and whether each delete removed a
   * document. (MongoDB without transactions — a standalone server — applies the operations one by
   * one with compare-and-set and rolls back on a conflict; see the adapter.)
   */
  batch(operations: readonly DocumentOperation[], at?: number): Promise<(number | boolean)[]>;
  /** Deletes a document; returns whether it existed (and, with `expectedVersion`, matched). */
  delete(collection: string, key: string, options?: { expectedVersion?: number }): Promise<boolean>;
  /** Documents of a collection in key order, `limit` at a time after `afterKey` (for paging). */
  list<T = unknown>(
    collection: string,
    options?: { afterKey?: string; limit?: number; keyPrefix?: string },
  ): Promise<StoredDocument<T>[]>;
  /** Deletes documents of a collection not written since `idleBefore` (epoch ms); returns how many. */
  expireIdle(collection: string, idleBefore: number): Promise<number>;
}

/** One version of a memory entry. */
export interface MemoryRecord<T = unknown> {
  namespace: string;
  key: string;
  value: T;
  /** 1, 2, 3… per (namespace, key): every write is a new version, older ones are kept. */
  version: number;
  at: number;
  /** Who or what wrote it (for audit: "learned from the human's choice on message X"). */
  source?: string;
}

/**
 * A namespaced key-value memory with a version per write (the email assistant's preferences live
 * here). Writes never overwrite: each is a new version, so a bad update can be seen and undone.
 */
export interface VersionedMemory {
  get<T = unknown>(namespace: string, key: string): Promise<MemoryRecord<T> | undefined>;
  /**
   * Writes a new version. With `expectedVersion`, only if the latest version is that (0: none yet),
   * else `TROUPE_STORE_CONFLICT`.
   */
  put<T = unknown>(
    namespace: string,
    key: string,
    value: T,
    options?: { expectedVersion?: number; at?: number; source?: string },
  ): Promise<MemoryRecord<T>>;
  /** Versions of one key, newest first. */
  history<T = unknown>(namespace: string, key: string, limit?: number): Promise<MemoryRecord<T>[]>;
  /** The latest version of every key in a namespace, in key order. */
  list<T = unknown>(namespace: string): Promise<MemoryRecord<T>[]>;
}

/** An event in the append-only log. */
export interface LoggedEvent {
  /** Position in the log (increasing). */
  seq: number;
  stream: string;
  at: number;
  data: Record<string, unknown>;
}

/** The append-only event log (`agent_event_logs`) with named counters. */
export interface EventLog {
  append(stream: string, data: Record<string, unknown>, at: number): Promise<void>;
  /** Events of a stream, oldest first, after `afterSeq`. */
  read(stream: string, options?: { afterSeq?: number; limit?: number }): Promise<LoggedEvent[]>;
  /** Adds `by` (default 1) to a counter and returns the new value. */
  increment(counter: string, by?: number): Promise<number>;
  counter(counter: string): Promise<number>;
}

/** Ids of work done once (a Gmail message triaged, an inbound message answered). */
export interface ProcessedIds {
  /**
   * Marks `id` processed in `scope`; true if this call marked it, false if it was already (the
   * uniqueness holds across processes sharing the store).
   */
  markProcessed(scope: string, id: string, at: number): Promise<boolean>;
  isProcessed(scope: string, id: string): Promise<boolean>;
}

/**
 * Everything the runtime keeps: one port, defined by what the runtime needs. Adapters: memory
 * (tests, embedding without disk), SQLite (the embedded default), MongoDB (production, shared by
 * several processes). One contract test suite runs against each.
 */
export interface TroupeStore {
  /** `memory`, `sqlite` or `mongodb`. */
  readonly kind: string;
  /**
   * True when the store lives in this process and always answers; memory and SQLite are local
   * without saying so. Any other store counts as external (a test runtime waits for it only so
   * long without an answer).
   */
  readonly local?: boolean;
  readonly documents: DocumentStore;
  readonly memory: VersionedMemory;
  readonly outbox: Outbox;
  readonly events: EventLog;
  readonly processed: ProcessedIds;
  readonly history: HistoryStore;
  /** Flushes and releases connections and files. */
  close(): Promise<void>;
}
