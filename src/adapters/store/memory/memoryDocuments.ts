import type {
  DocumentOperation,
  DocumentStore,
  DocumentWrite,
  StoredDocument,
} from '../../../ports/store.js';
import { checkNumber, compareKeys, decodeJson, encodeJson } from '../jsonValue.js';
import { kept } from './keptText.js';
import { conflict, ensureOpen, limitOf, type MemoryState } from './memoryState.js';

interface DocumentRow {
  json: string;
  version: number;
  updatedAt: number;
}

export class MemoryDocuments implements DocumentStore {
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
