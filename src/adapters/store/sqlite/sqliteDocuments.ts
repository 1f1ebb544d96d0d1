import type {
  DocumentOperation,
  DocumentStore,
  DocumentWrite,
  StoredDocument,
} from '../../../ports/store.js';
import { checkNumber, decodeJson, encodeJson } from '../jsonValue.js';
import { conflict, limitOf, type Row, type SqliteConnection } from './sqliteConnection.js';

const DOC_UPSERT = `INSERT INTO documents (collection, key, value, version, updated_at) VALUES (?, ?, ?, 1, ?)
  ON CONFLICT (collection, key) DO UPDATE SET value = excluded.value, version = documents.version + 1, updated_at = excluded.updated_at
  RETURNING version`;
// A create makes version 1 and a compare-and-set update version `expected + 1`: no RETURNING
// (it costs SQLite a temporary table per statement), the rows changed say whether it won.
const DOC_CREATE = `INSERT INTO documents (collection, key, value, version, updated_at) VALUES (?, ?, ?, 1, ?)
  ON CONFLICT (collection, key) DO NOTHING`;
const DOC_UPDATE_IF = `UPDATE documents SET value = ?, version = version + 1, updated_at = ?
  WHERE collection = ? AND key = ? AND version = ?`;
const DOC_VERSION = 'SELECT version FROM documents WHERE collection = ? AND key = ?';

/** A write of a batch, its value already JSON. */
interface EncodedOperation {
  op: 'put' | 'delete';
  collection: string;
  key: string;
  json?: string;
  expectedVersion?: number | undefined;
}

function idOf(o: { collection: string; key: string }): string {
  return `${o.collection}\u0000${o.key}`;
}

/** The puts of a batch that create a document (expected version 0) nothing else in it names. */
function soleCreates(operations: readonly EncodedOperation[]): number[] {
  // Each id made once (a batch of a burst holds a write per channel).
  const ids = operations.map(idOf);
  const named = new Map<string, number>();
  for (const id of ids) named.set(id, (named.get(id) ?? 0) + 1);
  const creates: number[] = [];
  operations.forEach((o, i) => {
    if (o.op === 'put' && o.expectedVersion === 0 && named.get(ids[i] as string) === 1) creates.push(i);
  });
  return creates;
}

/** A write of a batch, checked, with its value as JSON. */
function encodeOperation(o: DocumentOperation): EncodedOperation {
  const place = `documents "${o.collection}/${o.key}"`;
  checkNumber(o.expectedVersion, 'expectedVersion', place);
  const { op, collection, key, expectedVersion } = o;
  return o.op === 'put'
    ? { op, collection, key, expectedVersion, json: encodeJson(o.value, place) }
    : { op, collection, key, expectedVersion };
}

export class SqliteDocuments implements DocumentStore {
  constructor(private readonly c: SqliteConnection) {}

  async get<T = unknown>(collection: string, key: string): Promise<StoredDocument<T> | undefined> {
    return this.c.read('documents.get', () => {
      const row = this.c.get(
        'SELECT key, value, version, updated_at FROM documents WHERE collection = ? AND key = ?',
        collection,
        key,
      );
      return row ? toDocument<T>(collection, row) : undefined;
    });
  }

  // Not async: the connection's promise is returned as it is (an async wrapper would add a
  // promise and two turns of the microtask queue to every write); a refusal still rejects.
  put<T = unknown>(
    collection: string,
    key: string,
    value: T,
    options: { expectedVersion?: number; at?: number } = {},
  ): Promise<number> {
    let json: string;
    try {
      const place = `documents "${collection}/${key}"`;
      json = encodeJson(value, place);
      checkNumber(options.at, 'at', place);
      checkNumber(options.expectedVersion, 'expectedVersion', place);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.c.write('documents.put', () =>
      this.writeOne(collection, key, json, options.expectedVersion, options.at ?? this.c.now()),
    );
  }

  async putMany<T = unknown>(
    collection: string,
    writes: readonly DocumentWrite<T>[],
    at?: number,
  ): Promise<number[]> {
    checkNumber(at, 'at', `documents batch of "${collection}"`);
    const encoded = writes.map((w) => ({
      key: w.key,
      json: encodeJson(w.value, `documents "${collection}/${w.key}"`),
      expectedVersion: checkNumber(
        w.expectedVersion,
        'expectedVersion',
        `documents "${collection}/${w.key}"`,
      ),
    }));
    return this.c.write('documents.putMany', () => {
      if (encoded.length === 0) return [];
      const when = at ?? this.c.now();
      return this.writeAll(
        encoded.map((w) => ({ op: 'put' as const, collection, ...w })),
        when,
      ) as number[];
    });
  }

  /** All or nothing: a conflict is found before anything is written. Not async, as `put`. */
  batch(operations: readonly DocumentOperation[], at?: number): Promise<(number | boolean)[]> {
    let encoded: EncodedOperation[];
    try {
      checkNumber(at, 'at', 'documents batch');
      encoded = operations.map(encodeOperation);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.c.write('documents.batch', () => {
      if (encoded.length === 0) return [];
      return this.writeAll(encoded, at ?? this.c.now());
    });
  }

  /**
   * Writes a batch all or nothing, with no savepoint to roll back half of it. Creates of documents
   * no other write of the batch names go first: one that loses deletes those made before it (they
   * did not exist) and fails the batch. The other compare-and-sets were checked before anything
   * was written ({@link SqliteDocuments.checkFirst}), so the rest cannot lose.
   */
  private writeAll(operations: readonly EncodedOperation[], when: number): (number | boolean)[] {
    // One write (most batches: a channel's ledger entry) is all or nothing by itself.
    const only = operations.length === 1 ? operations[0] : undefined;
    if (only)
      return [
        only.op === 'put'
          ? this.writeOne(only.collection, only.key, only.json as string, only.expectedVersion, when)
          : this.deleteOne(only.collection, only.key, only.expectedVersion),
      ];
    const creates = soleCreates(operations);
    this.checkFirst(operations, creates);
    const results: (number | boolean | undefined)[] = new Array(operations.length);
    const made: EncodedOperation[] = [];
    for (const i of creates) {
      const o = operations[i] as EncodedOperation;
      if (this.c.change(DOC_CREATE, o.collection, o.key, o.json, when) === 0) {
        for (const m of made) this.deleteOne(m.collection, m.key, undefined);
        const actual = Number(this.c.get(DOC_VERSION, o.collection, o.key)?.version ?? 0);
        throw conflict('documents', `${o.collection}/${o.key}`, 0, actual);
      }
      made.push(o);
      results[i] = 1;
    }
    operations.forEach((o, i) => {
      if (results[i] !== undefined) return;
      results[i] =
        o.op === 'put'
          ? this.writeOne(o.collection, o.key, o.json as string, o.expectedVersion, when)
          : this.deleteOne(o.collection, o.key, o.expectedVersion);
    });
    return results as (number | boolean)[];
  }

  /**
   * Throws the conflict a batch would meet, before it writes anything: a write runs in its
   * group's transaction, with no savepoint to roll back a half-written batch. Only the documents
   * that a compare-and-set put other than the sole creates names are read (their versions
   * followed through the batch); the first write needs no check when no create goes before it (it
   * writes nothing when it loses).
   */
  private checkFirst(operations: readonly EncodedOperation[], creates: readonly number[]): void {
    const sole = new Set(creates);
    const checked = new Set<string>();
    operations.forEach((o, i) => {
      if (sole.has(i) || o.op !== 'put' || o.expectedVersion === undefined) return;
      if (i > 0 || creates.length > 0) checked.add(idOf(o));
    });
    if (checked.size === 0) return;
    const versions = new Map<string, number>();
    for (const o of operations) {
      const id = idOf(o);
      if (!checked.has(id)) continue;
      const current = versions.get(id) ?? Number(this.c.get(DOC_VERSION, o.collection, o.key)?.version ?? 0);
      const expected = o.expectedVersion;
      if (o.op === 'put') {
        if (expected !== undefined && expected !== current)
          throw conflict('documents', `${o.collection}/${o.key}`, expected, current);
        versions.set(id, current + 1);
      } else {
        // A delete whose version does not match deletes nothing (and says so); it never conflicts.
        versions.set(id, expected === undefined || expected === current ? 0 : current);
      }
    }
  }

  /** One write: a single statement, compare-and-set in its WHERE clause. */
  private writeOne(
    collection: string,
    key: string,
    json: string,
    expected: number | undefined,
    at: number,
  ): number {
    if (expected === undefined) {
      const row = this.c.get(DOC_UPSERT, collection, key, json, at);
      if (row) return Number(row.version);
    } else if (expected === 0) {
      if (this.c.change(DOC_CREATE, collection, key, json, at) > 0) return 1;
    } else if (this.c.change(DOC_UPDATE_IF, json, at, collection, key, expected) > 0) {
      return expected + 1;
    }
    const actual = Number(this.c.get(DOC_VERSION, collection, key)?.version ?? 0);
    throw conflict('documents', `${collection}/${key}`, expected ?? 0, actual);
  }

  async delete(
    collection: string,
    key: string,
    options: { expectedVersion?: number } = {},
  ): Promise<boolean> {
    return this.c.write('documents.delete', () => this.deleteOne(collection, key, options.expectedVersion));
  }

  private deleteOne(collection: string, key: string, expected: number | undefined): boolean {
    return expected === undefined
      ? this.c.change('DELETE FROM documents WHERE collection = ? AND key = ?', collection, key) > 0
      : this.c.change(
          'DELETE FROM documents WHERE collection = ? AND key = ? AND version = ?',
          collection,
          key,
          expected,
        ) > 0;
  }

  async list<T = unknown>(
    collection: string,
    options: { afterKey?: string; limit?: number; keyPrefix?: string } = {},
  ): Promise<StoredDocument<T>[]> {
    return this.c.read('documents.list', () => {
      const limit = limitOf(options.limit);
      if (limit === 0) return [];
      const where = ['collection = ?'];
      const params: unknown[] = [collection];
      if (options.afterKey !== undefined) {
        where.push('key > ?');
        params.push(options.afterKey);
      }
      if (options.keyPrefix) {
        // The range start uses the index; substr (counted in characters) makes the match literal.
        where.push('key >= ?', 'substr(key, 1, ?) = ?');
        params.push(options.keyPrefix, [...options.keyPrefix].length, options.keyPrefix);
      }
      const sql = `SELECT key, value, version, updated_at FROM documents WHERE ${where.join(' AND ')} ORDER BY key LIMIT ?`;
      return this.c.all(sql, ...params, limit).map((row) => toDocument<T>(collection, row));
    });
  }

  /**
   * Reads every row of the collection (by the primary key's prefix): no index by write time, which
   * every write would pay for, to serve a sweep that runs hourly.
   */
  async expireIdle(collection: string, idleBefore: number): Promise<number> {
    return this.c.write('documents.expireIdle', () =>
      this.c.change('DELETE FROM documents WHERE collection = ? AND updated_at < ?', collection, idleBefore),
    );
  }
}

function toDocument<T>(collection: string, row: Row): StoredDocument<T> {
  const key = String(row.key);
  return {
    collection,
    key,
    value: decodeJson<T>(row.value, `documents "${collection}/${key}"`),
    version: Number(row.version),
    updatedAt: Number(row.updated_at),
  };
}
