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
const DOC_CREATE = `INSERT INTO documents (collection, key, value, version, updated_at) VALUES (?, ?, ?, 1, ?)
  ON CONFLICT (collection, key) DO NOTHING RETURNING version`;
const DOC_UPDATE_IF = `UPDATE documents SET value = ?, version = version + 1, updated_at = ?
  WHERE collection = ? AND key = ? AND version = ? RETURNING version`;
const DOC_VERSION = 'SELECT version FROM documents WHERE collection = ? AND key = ?';

export class SqliteDocuments implements DocumentStore {
  constructor(private readonly c: SqliteConnection) {}

  async get<T = unknown>(collection: string, key: string): Promise<StoredDocument<T> | undefined> {
    return this.c.run('documents.get', () => {
      const row = this.c.get(
        'SELECT key, value, version, updated_at FROM documents WHERE collection = ? AND key = ?',
        collection,
        key,
      );
      return row ? toDocument<T>(collection, row) : undefined;
    });
  }

  async put<T = unknown>(
    collection: string,
    key: string,
    value: T,
    options: { expectedVersion?: number; at?: number } = {},
  ): Promise<number> {
    const place = `documents "${collection}/${key}"`;
    const json = encodeJson(value, place);
    checkNumber(options.at, 'at', place);
    checkNumber(options.expectedVersion, 'expectedVersion', place);
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
      this.checkFirst(encoded.map((w) => ({ op: 'put' as const, collection, ...w })));
      return encoded.map((w) => this.writeOne(collection, w.key, w.json, w.expectedVersion, when));
    });
  }

  /** All or nothing: a conflict is found before anything is written. */
  async batch(operations: readonly DocumentOperation[], at?: number): Promise<(number | boolean)[]> {
    checkNumber(at, 'at', 'documents batch');
    const encoded = operations.map((o) => {
      const place = `documents "${o.collection}/${o.key}"`;
      checkNumber(o.expectedVersion, 'expectedVersion', place);
      return o.op === 'put' ? encodeJson(o.value, place) : undefined;
    });
    return this.c.write('documents.batch', () => {
      if (operations.length === 0) return [];
      const when = at ?? this.c.now();
      this.checkFirst(operations);
      return operations.map((o, i) =>
        o.op === 'put'
          ? this.writeOne(o.collection, o.key, encoded[i] as string, o.expectedVersion, when)
          : this.deleteOne(o.collection, o.key, o.expectedVersion),
      );
    });
  }

  /**
   * Throws the conflict a batch would meet, before it writes anything: a write runs in its
   * group's transaction, with no savepoint to roll back a half-written batch. Only the documents
   * that a later compare-and-set put names are read (their versions followed through the batch);
   * a batch whose only compare-and-set is its first write needs no check (it writes nothing when
   * it loses).
   */
  private checkFirst(
    operations: readonly {
      op: 'put' | 'delete';
      collection: string;
      key: string;
      expectedVersion?: number | undefined;
    }[],
  ): void {
    const idOf = (o: { collection: string; key: string }) => `${o.collection}\u0000${o.key}`;
    const checked = new Set<string>();
    operations.forEach((o, i) => {
      if (i > 0 && o.op === 'put' && o.expectedVersion !== undefined) checked.add(idOf(o));
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
    let row: Row | undefined;
    if (expected === undefined) row = this.c.get(DOC_UPSERT, collection, key, json, at);
    else if (expected === 0) row = this.c.get(DOC_CREATE, collection, key, json, at);
    else row = this.c.get(DOC_UPDATE_IF, json, at, collection, key, expected);
    if (row) return Number(row.version);
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
    return this.c.run('documents.list', () => {
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
