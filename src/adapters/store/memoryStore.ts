import { DEFAULT_HISTORY_WINDOW, type HistoryEntry, type HistoryStore } from '../../ports/history.js';
import type { ImmediateOutboxWrites, Outbox, OutboxEntry, OutboxSettlement } from '../../ports/outbox.js';
import type { OutgoingResponse } from '../../ports/outgoingResponse.js';
import type { SentPart } from '../../ports/routingOutcome.js';
import type {
  DocumentOperation,
  DocumentStore,
  DocumentWrite,
  EventLog,
  LoggedEvent,
  MemoryRecord,
  ProcessedIds,
  StoredDocument,
  TroupeStore,
  VersionedMemory,
} from '../../ports/store.js';
import { TroupeError } from '../../ports/troupeError.js';
import { checkIncrement, checkNumber, compareKeys, copyJson, decodeJson, encodeJson } from './jsonValue.js';
import { SettledKeys } from './settledKeys.js';
import { applyDelta, type Delta, deltaBetween, deltaSize } from './textDelta.js';

/** Options of {@link createMemoryStore}. */
export interface MemoryStoreOptions {
  /** The clock for writes that give no `at` (default `Date.now`). */
  now?: () => number;
  /**
   * History lines kept per channel (default {@link DEFAULT_HISTORY_WINDOW}, what a prompt reads):
   * older lines are never read again. A runtime reading more (`historyLimit`) needs as many.
   */
  historyPerChannel?: number;
  /** Settled outbox entries kept for duplicate detection, in all (default 10 000). */
  retainSettled?: number;
  /**
   * Settled outbox entries kept per channel (default {@link DEFAULT_SETTLED_PER_CHANNEL}). One is
   * read again only for a turn a restored channel still shows in flight, among its latest answers.
   */
  settledPerChannel?: number;
}

/** The latest settled answers of a channel the memory outbox keeps (more than a channel has in flight). */
export const DEFAULT_SETTLED_PER_CHANNEL = 16;

/**
 * A complete `TroupeStore` in memory: for tests and for embedding without disk. What goes in is
 * checked and copied (documents, memory and events as JSON text; the outbox and history, written
 * on every reply, as objects copied in one pass), and what comes out is a fresh copy a caller may
 * change freely. It keeps every promise of the durable adapters within one process.
 */
export function createMemoryStore(options: MemoryStoreOptions = {}): TroupeStore {
  const state: MemoryState = { closed: false, now: options.now ?? Date.now };
  return {
    kind: 'memory',
    documents: new MemoryDocuments(state),
    memory: new MemoryVersions(state),
    outbox: new CopyingOutbox(
      state,
      new SettledKeys(
        options.retainSettled ?? 10_000,
        options.settledPerChannel ?? DEFAULT_SETTLED_PER_CHANNEL,
      ),
    ),
    events: new MemoryEvents(state),
    processed: new MemoryProcessed(state),
    history: new CopyingHistory(state, options.historyPerChannel ?? DEFAULT_HISTORY_WINDOW),
    async close() {
      state.closed = true;
    },
  };
}

/**
 * Text as the store keeps it (JSON, a memory version's source, a delta's literal text): in one
 * piece. `JSON.stringify` and concatenation give a tree of parts (with room to spare), which a
 * store holding the text for long would keep; reading a character makes V8 join a string into one
 * piece in place (a stored email record takes about a fifth less heap).
 */
function kept(text: string): string {
  text.charCodeAt(0);
  return text;
}

/**
 * A copy of text cut from a longer string. A slice of 13 characters or more keeps the whole
 * string it was cut from; an old version's delta literal would keep the JSON it came from (twice
 * the delta's worth). Joining two halves and reading a character makes a string of its own.
 */
function copied(text: string): string {
  const half = text.length >> 1;
  return kept(text.slice(0, half) + text.slice(half));
}

/** What a write that gives nothing back resolves with (one promise for all of them). */
const DONE: Promise<void> = Promise.resolve();

interface MemoryState {
  closed: boolean;
  now: () => number;
}

function ensureOpen(state: MemoryState): void {
  if (state.closed)
    throw new TroupeError('TROUPE_STORE_UNAVAILABLE', 'The memory store is closed; open a new one.', {
      retryable: true,
    });
}

function conflict(kind: string, place: string, expected: number, actual: number): TroupeError {
  return new TroupeError(
    'TROUPE_STORE_CONFLICT',
    `Compare-and-set lost on ${kind} "${place}": expected version ${expected}, found ${actual === 0 ? 'none (0)' : `version ${actual}`}. Someone else wrote first; nothing was written.`,
    { details: { place, expectedVersion: expected, actualVersion: actual } },
  );
}

function limitOf(limit: number | undefined): number {
  if (limit === undefined) return Number.POSITIVE_INFINITY;
  return Math.max(0, Math.floor(limit));
}

interface DocumentRow {
  json: string;
  version: number;
  updatedAt: number;
}

class MemoryDocuments implements DocumentStore {
  private readonly collections = new Map<string, Map<string, DocumentRow>>();
  /**
   * Each collection's keys in list order, kept until a key is added or removed: paging through a
   * collection (a restore lists every channel, a page at a time) sorts it once, not once a page.
   */
  private readonly sortedKeys = new Map<string, string[]>();

  constructor(private readonly state: MemoryState) {}

  async get<T = unknown>(collection: string, key: string): Promise<StoredDocument<T> | undefined> {
    ensureOpen(this.state);
    const row = this.collections.get(collection)?.get(key);
    return row ? toDocument<T>(collection, key, row) : undefined;
  }

  async put<T = unknown>(
    collection: string,
    key: string,
    value: T,
    options: { expectedVersion?: number; at?: number } = {},
  ): Promise<number> {
    ensureOpen(this.state);
    const [version] = this.write(
      collection,
      [{ key, value, expectedVersion: options.expectedVersion }],
      options.at,
    );
    return version as number;
  }

  async putMany<T = unknown>(
    collection: string,
    writes: readonly DocumentWrite<T>[],
    at?: number,
  ): Promise<number[]> {
    ensureOpen(this.state);
    return this.write(collection, writes, at);
  }

  /** Checks every operation against the documents as the earlier ones leave them, then applies all. */
  async batch(operations: readonly DocumentOperation[], at?: number): Promise<(number | boolean)[]> {
    ensureOpen(this.state);
    checkNumber(at, 'at', 'documents batch');
    const when = at ?? this.state.now();
    // Staged rows by "collection\0key"; null: deleted by an earlier operation of the batch.
    const staged = new Map<string, { collection: string; key: string; row: DocumentRow | null }>();
    const results = operations.map((o) => {
      const place = `documents "${o.collection}/${o.key}"`;
      checkNumber(o.expectedVersion, 'expectedVersion', place);
      const id = `${o.collection}\0${o.key}`;
      const earlier = staged.get(id);
      const current = earlier ? earlier.row : this.collections.get(o.collection)?.get(o.key);
      const actual = current?.version ?? 0;
      if (o.op === 'delete') {
        if (!current || (o.expectedVersion !== undefined && o.expectedVersion !== actual)) return false;
        staged.set(id, { collection: o.collection, key: o.key, row: null });
        return true;
      }
      const json = kept(encodeJson(o.value, place));
      if (o.expectedVersion !== undefined && o.expectedVersion !== actual)
        throw conflict('documents', `${o.collection}/${o.key}`, o.expectedVersion, actual);
      staged.set(id, {
        collection: o.collection,
        key: o.key,
        row: { json, version: actual + 1, updatedAt: when },
      });
      return actual + 1;
    });
    for (const { collection, key, row } of staged.values()) {
      let rows = this.collections.get(collection);
      if (row === null) {
        if (rows?.delete(key)) this.sortedKeys.delete(collection);
        continue;
      }
      if (!rows) {
        rows = new Map();
        this.collections.set(collection, rows);
      }
      if (!rows.has(key)) this.sortedKeys.delete(collection);
      rows.set(key, row);
    }
    return results;
  }

  async delete(
    collection: string,
    key: string,
    options: { expectedVersion?: number } = {},
  ): Promise<boolean> {
    ensureOpen(this.state);
    const rows = this.collections.get(collection);
    const row = rows?.get(key);
    if (!rows || !row) return false;
    if (options.expectedVersion !== undefined && row.version !== options.expectedVersion) return false;
    rows.delete(key);
    this.sortedKeys.delete(collection);
    return true;
  }

  async list<T = unknown>(
    collection: string,
    options: { afterKey?: string; limit?: number; keyPrefix?: string } = {},
  ): Promise<StoredDocument<T>[]> {
    ensureOpen(this.state);
    const rows = this.collections.get(collection);
    const limit = limitOf(options.limit);
    if (!rows || limit === 0) return [];
    const { afterKey, keyPrefix } = options;
    let sorted = this.sortedKeys.get(collection);
    if (!sorted) {
      sorted = [...rows.keys()].sort(compareKeys);
      this.sortedKeys.set(collection, sorted);
    }
    // Keys sharing a prefix are contiguous in this order: start at the later of the two bounds and
    // stop at the first key past the prefix.
    let at = afterKey === undefined ? 0 : firstAbove(sorted, afterKey, false);
    if (keyPrefix !== undefined) at = Math.max(at, firstAbove(sorted, keyPrefix, true));
    const docs: StoredDocument<T>[] = [];
    for (; at < sorted.length && docs.length < limit; at++) {
      const key = sorted[at] as string;
      if (keyPrefix !== undefined && !key.startsWith(keyPrefix)) break;
      docs.push(toDocument<T>(collection, key, rows.get(key) as DocumentRow));
    }
    return docs;
  }

  async expireIdle(collection: string, idleBefore: number): Promise<number> {
    ensureOpen(this.state);
    const rows = this.collections.get(collection);
    if (!rows) return 0;
    let removed = 0;
    for (const [key, row] of rows) {
      if (row.updatedAt < idleBefore) {
        rows.delete(key);
        removed++;
      }
    }
    if (removed > 0) this.sortedKeys.delete(collection);
    return removed;
  }

  /** Checks every write, then applies all of them or none. */
  private write<T>(
    collection: string,
    writes: readonly DocumentWrite<T>[],
    at: number | undefined,
  ): number[] {
    checkNumber(at, 'at', `documents batch of "${collection}"`);
    const encoded = writes.map((w) => {
      const place = `documents "${collection}/${w.key}"`;
      checkNumber(w.expectedVersion, 'expectedVersion', place);
      return kept(encodeJson(w.value, place));
    });
    const rows = this.collections.get(collection) ?? new Map<string, DocumentRow>();
    const when = at ?? this.state.now();
    const staged = new Map<string, DocumentRow>();
    const versions = writes.map((w, i) => {
      const current = staged.get(w.key) ?? rows.get(w.key);
      const actual = current?.version ?? 0;
      if (w.expectedVersion !== undefined && w.expectedVersion !== actual)
        throw conflict('documents', `${collection}/${w.key}`, w.expectedVersion, actual);
      staged.set(w.key, { json: encoded[i] as string, version: actual + 1, updatedAt: when });
      return actual + 1;
    });
    for (const [key, row] of staged) {
      if (!rows.has(key)) this.sortedKeys.delete(collection);
      rows.set(key, row);
    }
    if (staged.size > 0) this.collections.set(collection, rows);
    return versions;
  }
}

/** The index of the first key after `bound` in `sorted` (or at it, when `inclusive`): a binary search. */
function firstAbove(sorted: readonly string[], bound: string, inclusive: boolean): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    const order = compareKeys(sorted[mid] as string, bound);
    if (order > 0 || (inclusive && order === 0)) high = mid;
    else low = mid + 1;
  }
  return low;
}

function toDocument<T>(collection: string, key: string, row: DocumentRow): StoredDocument<T> {
  return {
    collection,
    key,
    value: decodeJson<T>(row.json, `documents "${collection}/${key}"`),
    version: row.version,
    updatedAt: row.updatedAt,
  };
}

interface MemoryRow {
  /**
   * The value's JSON; an older version's, once the next version is written, its difference from
   * that one's JSON when that is much smaller (history is read from the latest back, one
   * difference at a time).
   */
  json: string | Delta;
  /**
   * The latest version's value as read once (profiles are read far more often than written);
   * handed out as copies, dropped when a newer version comes.
   */
  parsed: { value: unknown } | undefined;
  version: number;
  at: number;
  source: string | undefined;
}

class MemoryVersions implements VersionedMemory {
  private readonly namespaces = new Map<string, Map<string, MemoryRow[]>>();

  constructor(private readonly state: MemoryState) {}

  async get<T = unknown>(namespace: string, key: string): Promise<MemoryRecord<T> | undefined> {
    ensureOpen(this.state);
    const versions = this.namespaces.get(namespace)?.get(key);
    const latest = versions?.[versions.length - 1];
    return latest ? latestRecord<T>(namespace, key, latest) : undefined;
  }

  async put<T = unknown>(
    namespace: string,
    key: string,
    value: T,
    options: { expectedVersion?: number; at?: number; source?: string } = {},
  ): Promise<MemoryRecord<T>> {
    ensureOpen(this.state);
    const place = `memory "${namespace}/${key}"`;
    const json = kept(encodeJson(value, place));
    checkNumber(options.at, 'at', place);
    checkNumber(options.expectedVersion, 'expectedVersion', place);
    const keys = this.namespaces.get(namespace) ?? new Map<string, MemoryRow[]>();
    const versions = keys.get(key) ?? [];
    const actual = versions.length;
    if (options.expectedVersion !== undefined && options.expectedVersion !== actual)
      throw conflict('memory', `${namespace}/${key}`, options.expectedVersion, actual);
    const row: MemoryRow = {
      json,
      parsed: undefined,
      version: actual + 1,
      at: options.at ?? this.state.now(),
      source: options.source === undefined ? undefined : kept(options.source),
    };
    // The version this one replaces is kept as its difference from it, when that is much smaller.
    const previous = versions[versions.length - 1];
    if (previous) previous.parsed = undefined;
    if (previous && typeof previous.json === 'string') {
      const delta = deltaBetween(json, previous.json);
      if (deltaSize(delta) * 2 < previous.json.length)
        previous.json = delta.map((op) => (typeof op === 'string' ? copied(op) : op));
    }
    versions.push(row);
    keys.set(key, versions);
    this.namespaces.set(namespace, keys);
    // The value just checked, copied (not parsed back from its JSON): read next, as profiles are.
    row.parsed = { value: copyJson(value, place) };
    return latestRecord<T>(namespace, key, row);
  }

  async history<T = unknown>(namespace: string, key: string, limit?: number): Promise<MemoryRecord<T>[]> {
    ensureOpen(this.state);
    const versions = this.namespaces.get(namespace)?.get(key) ?? [];
    const out: MemoryRecord<T>[] = [];
    let text = '';
    for (let i = versions.length - 1; i >= 0 && out.length < limitOf(limit); i--) {
      const row = versions[i] as MemoryRow;
      text = typeof row.json === 'string' ? row.json : applyDelta(text, row.json);
      out.push(toRecord<T>(namespace, key, row, text));
    }
    return out;
  }

  async list<T = unknown>(namespace: string): Promise<MemoryRecord<T>[]> {
    ensureOpen(this.state);
    const keys = this.namespaces.get(namespace);
    if (!keys) return [];
    return [...keys.keys()].sort(compareKeys).flatMap((key) => {
      const versions = keys.get(key) ?? [];
      const latest = versions[versions.length - 1];
      return latest ? [latestRecord<T>(namespace, key, latest)] : [];
    });
  }
}

/** The latest version of a key, its value parsed once and copied out. */
function latestRecord<T>(namespace: string, key: string, row: MemoryRow): MemoryRecord<T> {
  const place = `memory "${namespace}/${key}" version ${row.version}`;
  row.parsed ??= { value: decodeJson<unknown>(row.json, place) };
  return {
    namespace,
    key,
    value: copyJson(row.parsed.value, place) as T,
    version: row.version,
    at: row.at,
    ...(row.source !== undefined ? { source: row.source } : {}),
  };
}

function toRecord<T>(namespace: string, key: string, row: MemoryRow, json: string): MemoryRecord<T> {
  return {
    namespace,
    key,
    value: decodeJson<T>(json, `memory "${namespace}/${key}" version ${row.version}`),
    version: row.version,
    at: row.at,
    ...(row.source !== undefined ? { source: row.source } : {}),
  };
}

interface OutboxRow {
  key: string;
  /** A checked copy, never handed out. */
  response: OutgoingResponse;
  recordedAt: number;
  sentParts: SentPart[];
  settled?: OutboxSettlement;
}

/**
 * The memory outbox with the store's guarantees: responses are checked and copied as JSON, entries
 * come out as copies, and `unsettled(limit)` gives the oldest entries (settled ones are forgotten
 * past `settledPerChannel` in their channel or `retainSettled` in all).
 */
class CopyingOutbox implements Outbox {
  private readonly entries = new Map<string, OutboxRow>();
  private readonly forget = (key: string) => {
    this.entries.delete(key);
  };

  constructor(
    private readonly state: MemoryState,
    private readonly settledKeys: SettledKeys,
  ) {}

  /** The writes answered at once: routing calls these and spares a promise per write. */
  readonly immediate: ImmediateOutboxWrites = {
    record: (response, at) => {
      const { row, created } = this.recordRow(response, at);
      return { entry: toEntryState(row), created };
    },
    markPartSent: (key, part) => this.markPartSentNow(key, part),
    settle: (key, settlement) => this.settleNow(key, settlement),
  };

  record(response: OutgoingResponse, at: number): Promise<{ entry: OutboxEntry; created: boolean }> {
    try {
      const { row, created } = this.recordRow(response, at);
      return Promise.resolve({ entry: toEntry(row), created });
    } catch (error) {
      return Promise.reject(error);
    }
  }

  markPartSent(key: string, part: SentPart): Promise<void> {
    try {
      this.markPartSentNow(key, part);
      return DONE;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  settle(key: string, settlement: OutboxSettlement): Promise<void> {
    try {
      this.settleNow(key, settlement);
      return DONE;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private recordRow(response: OutgoingResponse, at: number): { row: OutboxRow; created: boolean } {
    ensureOpen(this.state);
    const key = response.idempotencyKey;
    const copy = copyJson(response, `outbox entry "${key}"`);
    checkNumber(at, 'at', `outbox entry "${key}"`);
    const existing = this.entries.get(key);
    if (existing) return { row: existing, created: false };
    const row: OutboxRow = { key, response: copy, recordedAt: at, sentParts: [] };
    this.entries.set(key, row);
    return { row, created: true };
  }

  private markPartSentNow(key: string, part: SentPart): void {
    ensureOpen(this.state);
    const copy = copyJson(part, `outbox part of "${key}"`);
    const row = this.entries.get(key);
    if (row && !row.sentParts.some((p) => p.index === part.index)) row.sentParts.push(copy);
  }

  private settleNow(key: string, settlement: OutboxSettlement): void {
    ensureOpen(this.state);
    const copy = copyJson(settlement, `outbox settlement of "${key}"`);
    const row = this.entries.get(key);
    if (!row || row.settled) return;
    row.settled = copy;
    const { kind, id } = row.response.channel;
    this.settledKeys.add(`${kind}:${id}`, key, this.forget);
  }

  async unsettled(limit?: number): Promise<OutboxEntry[]> {
    ensureOpen(this.state);
    const open: OutboxRow[] = [];
    for (const row of this.entries.values()) if (!row.settled) open.push(row);
    // A stable sort: entries recorded at the same time stay in the order they were recorded.
    return open
      .sort((a, b) => a.recordedAt - b.recordedAt)
      .slice(0, limitOf(limit))
      .map(toEntry);
  }

  async get(key: string): Promise<OutboxEntry | undefined> {
    ensureOpen(this.state);
    const row = this.entries.get(key);
    return row ? toEntry(row) : undefined;
  }
}

/** What routing needs of a recorded entry: its parts and settlement, copied. */
function toEntryState(row: OutboxRow): Pick<OutboxEntry, 'sentParts' | 'settled'> {
  const sentParts = row.sentParts.map((p) => ({ ...p }));
  if (!row.settled) return { sentParts };
  const settled = { ...row.settled };
  if (row.settled.error) settled.error = { ...row.settled.error };
  return { sentParts, settled };
}

function toEntry(row: OutboxRow): OutboxEntry {
  return {
    key: row.key,
    response: copyJson(row.response, `outbox entry "${row.key}"`),
    recordedAt: row.recordedAt,
    sentParts: row.sentParts.map((p) => ({ ...p })),
    ...(row.settled
      ? {
          settled: {
            ...row.settled,
            ...(row.settled.error ? { error: { ...row.settled.error } } : {}),
          },
        }
      : {}),
  };
}

interface EventRow {
  seq: number;
  at: number;
  json: string;
}

class MemoryEvents implements EventLog {
  private readonly streams = new Map<string, EventRow[]>();
  private readonly counters = new Map<string, number>();
  private seq = 0;

  constructor(private readonly state: MemoryState) {}

  async append(stream: string, data: Record<string, unknown>, at: number): Promise<void> {
    ensureOpen(this.state);
    const json = kept(encodeJson(data, `event of stream "${stream}"`));
    checkNumber(at, 'at', `event of stream "${stream}"`);
    const rows = this.streams.get(stream) ?? [];
    rows.push({ seq: ++this.seq, at, json });
    this.streams.set(stream, rows);
  }

  async read(stream: string, options: { afterSeq?: number; limit?: number } = {}): Promise<LoggedEvent[]> {
    ensureOpen(this.state);
    const rows = this.streams.get(stream) ?? [];
    const start = firstAfter(rows, options.afterSeq ?? 0);
    return rows.slice(start, start + limitOf(options.limit)).map((row) => ({
      seq: row.seq,
      stream,
      at: row.at,
      data: decodeJson<Record<string, unknown>>(row.json, `event ${row.seq} of stream "${stream}"`),
    }));
  }

  async increment(counter: string, by = 1): Promise<number> {
    ensureOpen(this.state);
    checkIncrement(counter, by);
    const value = (this.counters.get(counter) ?? 0) + by;
    this.counters.set(counter, value);
    return value;
  }

  async counter(counter: string): Promise<number> {
    ensureOpen(this.state);
    return this.counters.get(counter) ?? 0;
  }
}

/** Index of the first row with `seq > afterSeq` (rows are in seq order). */
function firstAfter(rows: readonly EventRow[], afterSeq: number): number {
  let low = 0;
  let high = rows.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((rows[mid] as EventRow).seq <= afterSeq) low = mid + 1;
    else high = mid;
  }
  return low;
}

class MemoryProcessed implements ProcessedIds {
  private readonly scopes = new Map<string, Set<string>>();

  constructor(private readonly state: MemoryState) {}

  async markProcessed(scope: string, id: string, at: number): Promise<boolean> {
    ensureOpen(this.state);
    checkNumber(at, 'at', `processed id "${scope}/${id}"`);
    const ids = this.scopes.get(scope) ?? new Set<string>();
    this.scopes.set(scope, ids);
    if (ids.has(id)) return false;
    ids.add(id);
    return true;
  }

  async isProcessed(scope: string, id: string): Promise<boolean> {
    ensureOpen(this.state);
    return this.scopes.get(scope)?.has(id) ?? false;
  }
}

/**
 * Channel history as `MemoryHistory` keeps it (the last `perChannel` lines, trimmed at every
 * append), behind the store's checks: lines are copied in and handed out as copies.
 */
class CopyingHistory implements HistoryStore {
  private readonly channels = new Map<string, HistoryEntry[]>();

  constructor(
    private readonly state: MemoryState,
    private readonly perChannel: number,
  ) {}

  get keptPerChannel(): number {
    return this.perChannel;
  }

  append(entry: HistoryEntry): Promise<void> {
    try {
      this.appendNow(entry);
      return DONE;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  readonly appendNow = (entry: HistoryEntry): void => {
    ensureOpen(this.state);
    const line = copyJson(entry, `history line "${entry.channelId}/${entry.messageId}"`);
    let lines = this.channels.get(line.channelId);
    if (!lines) {
      lines = [];
      this.channels.set(line.channelId, lines);
    }
    lines.push(line);
    // Trimmed at every append, so a channel never holds more than its cap.
    if (lines.length > this.perChannel) lines.shift();
  };

  async recent(channelId: string, limit: number): Promise<HistoryEntry[]> {
    ensureOpen(this.state);
    const n = Math.min(limitOf(limit), this.perChannel);
    if (n === 0) return [];
    const lines = this.channels.get(channelId) ?? [];
    return lines
      .slice(Math.max(0, lines.length - n))
      .map((line) => ({ ...line, author: { ...line.author } }));
  }
}
