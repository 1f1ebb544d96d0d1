import type { MemoryRecord, VersionedMemory } from '../../../ports/store.js';
import { checkNumber, copyJson, decodeJson, encodeJson } from '../jsonValue.js';
import { conflict, limitOf, type Row, type SqliteConnection } from './sqliteConnection.js';

const MEMORY_COLUMNS = 'key, version, value, at, source';

/** Latest versions kept read at most (a profile per namespace and key is what is read). */
const LATEST_KEPT = 256;

export class SqliteMemory implements VersionedMemory {
  /**
   * The latest version of each key read or written through this connection, parsed once and
   * handed out as copies (profiles are read on every triage and draft, written far less). Valid
   * while no other connection has committed: SQLite's `data_version` says when one has.
   */
  private readonly latest = new Map<string, MemoryRecord<unknown> | null>();
  private dataVersion = Number.NaN;

  constructor(private readonly c: SqliteConnection) {
    // A version kept from a write whose group did not commit was never stored.
    c.onRollback(() => this.latest.clear());
  }

  /** Forgets the latest versions kept when another connection (or process) has written since. */
  private checkFresh(): void {
    const now = Number(this.c.get('PRAGMA data_version')?.data_version);
    if (now !== this.dataVersion) {
      this.latest.clear();
      this.dataVersion = now;
    }
  }

  /** Keeps the latest version of a key, or that it has none (`null`). */
  private keep(id: string, record: MemoryRecord<unknown> | null): void {
    if (this.latest.size >= LATEST_KEPT) this.latest.clear();
    this.latest.set(id, record);
  }

  async get<T = unknown>(namespace: string, key: string): Promise<MemoryRecord<T> | undefined> {
    return this.c.read('memory.get', () => {
      this.checkFresh();
      const id = latestId(namespace, key);
      const kept = this.latest.get(id);
      if (kept !== undefined) return kept === null ? undefined : copyRecord<T>(kept);
      const row = this.c.get(
        `SELECT ${MEMORY_COLUMNS} FROM memory_versions WHERE namespace = ? AND key = ? ORDER BY version DESC LIMIT 1`,
        namespace,
        key,
      );
      const record = row ? toRecord<T>(namespace, row) : null;
      this.keep(id, record);
      return record ? copyRecord(record) : undefined;
    });
  }

  async put<T = unknown>(
    namespace: string,
    key: string,
    value: T,
    options: { expectedVersion?: number; at?: number; source?: string } = {},
  ): Promise<MemoryRecord<T>> {
    const place = `memory "${namespace}/${key}"`;
    const json = encodeJson(value, place);
    checkNumber(options.at, 'at', place);
    checkNumber(options.expectedVersion, 'expectedVersion', place);
    return this.c.write('memory.put', () => {
      const at = options.at ?? this.c.now();
      const version = this.insertVersion(namespace, key, json, at, options);
      const record = toRecord<T>(namespace, {
        key,
        version,
        value: json,
        at,
        source: options.source ?? null,
      });
      // Written through this connection: the version it reads next (another connection writing
      // after this moves data_version, and the kept versions are forgotten).
      this.keep(latestId(namespace, key), record);
      return copyRecord(record);
    });
  }

  /** The next version of a key; a lost compare-and-set is refused before anything is written. */
  private insertVersion(
    namespace: string,
    key: string,
    json: string,
    at: number,
    options: { expectedVersion?: number; source?: string },
  ): number {
    const latest = Number(
      this.c.get(
        'SELECT MAX(version) AS version FROM memory_versions WHERE namespace = ? AND key = ?',
        namespace,
        key,
      )?.version ?? 0,
    );
    if (options.expectedVersion !== undefined && options.expectedVersion !== latest)
      throw conflict('memory', `${namespace}/${key}`, options.expectedVersion, latest);
    this.c.change(
      'INSERT INTO memory_versions (namespace, key, version, value, at, source) VALUES (?, ?, ?, ?, ?, ?)',
      namespace,
      key,
      latest + 1,
      json,
      at,
      options.source ?? null,
    );
    return latest + 1;
  }

  async history<T = unknown>(namespace: string, key: string, limit?: number): Promise<MemoryRecord<T>[]> {
    return this.c.read('memory.history', () =>
      this.c
        .all(
          `SELECT ${MEMORY_COLUMNS} FROM memory_versions WHERE namespace = ? AND key = ? ORDER BY version DESC LIMIT ?`,
          namespace,
          key,
          limitOf(limit),
        )
        .map((row) => toRecord<T>(namespace, row)),
    );
  }

  async list<T = unknown>(namespace: string): Promise<MemoryRecord<T>[]> {
    return this.c.read('memory.list', () =>
      this.c
        .all(
          `SELECT ${MEMORY_COLUMNS} FROM memory_versions AS m WHERE namespace = ?
            AND version = (SELECT MAX(version) FROM memory_versions WHERE namespace = m.namespace AND key = m.key)
            ORDER BY key`,
          namespace,
        )
        .map((row) => toRecord<T>(namespace, row)),
    );
  }
}

/**
 * A kept version's key: the namespace's length first, so a NUL in a namespace or key cannot make
 * two keys one ("a\0b"/"c" and "a"/"b\0c" joined by NUL alone are the same text).
 */
function latestId(namespace: string, key: string): string {
  return `${namespace.length}:${namespace}\0${key}`;
}

function toRecord<T>(namespace: string, row: Row): MemoryRecord<T> {
  const key = String(row.key);
  const version = Number(row.version);
  return {
    namespace,
    key,
    value: decodeJson<T>(row.value, `memory "${namespace}/${key}" version ${version}`),
    version,
    at: Number(row.at),
    ...(row.source !== null && row.source !== undefined ? { source: String(row.source) } : {}),
  };
}

/** A copy of a kept record that a caller may change freely. */
function copyRecord<T>(record: MemoryRecord<unknown>): MemoryRecord<T> {
  return {
    ...record,
    value: copyJson(record.value, `memory "${record.namespace}/${record.key}"`) as T,
  };
}
