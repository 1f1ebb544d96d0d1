import { setTimeout as delay } from 'node:timers/promises';
import type { Collection } from 'mongodb';
import type { MemoryRecord, VersionedMemory } from '../../../ports/store.js';
import { checkNumber, decodeJson, encodeJson } from '../jsonValue.js';
import { type Context, checkName, conflict, limitOf, numberOf } from './mongoContext.js';
import { isDuplicateKey } from './mongoErrors.js';

interface MemoryRow {
  namespace: string;
  key: string;
  version: number;
  json: string;
  at: number;
  source?: string;
}

/** Versioned memory: one MongoDB document per version, unique on (namespace, key, version). */
export class MongoMemory implements VersionedMemory {
  private readonly rows: Collection<MemoryRow>;

  constructor(private readonly ctx: Context) {
    this.rows = ctx.collection<MemoryRow>('memory');
  }

  async get<T = unknown>(namespace: string, key: string): Promise<MemoryRecord<T> | undefined> {
    return this.ctx.run(`read memory "${namespace}/${key}"`, async () => {
      const row = await this.rows.findOne({ namespace, key }, { sort: { version: -1 } });
      return row ? toRecord<T>(row) : undefined;
    });
  }

  /**
   * Inserts version latest+1. The unique index on (namespace, key, version) makes concurrent
   * writers collide: with `expectedVersion` the loser gets a conflict, without it it tries again.
   */
  async put<T = unknown>(
    namespace: string,
    key: string,
    value: T,
    options: { expectedVersion?: number; at?: number; source?: string } = {},
  ): Promise<MemoryRecord<T>> {
    const place = `${namespace}/${key}`;
    return this.ctx.run(`write memory "${place}"`, async () => {
      checkName('memory namespace', namespace);
      checkName('memory key', key);
      checkNumber(options.at, 'at', `memory "${place}"`);
      checkNumber(options.expectedVersion, 'expectedVersion', `memory "${place}"`);
      const json = encodeJson(value, `memory "${place}"`);
      const at = options.at ?? Date.now();
      for (let attempt = 1; ; attempt++) {
        const latest = await this.rows.findOne(
          { namespace, key },
          { sort: { version: -1 }, projection: { version: 1 } },
        );
        const actual = latest ? numberOf(latest.version, `memory "${place}"`, 'version') : 0;
        const { expectedVersion } = options;
        if (expectedVersion !== undefined && expectedVersion !== actual) {
          throw conflict('memory', place, expectedVersion, actual);
        }
        const row: MemoryRow = {
          namespace,
          key,
          version: actual + 1,
          json,
          at,
          ...(options.source !== undefined ? { source: options.source } : {}),
        };
        try {
          await this.rows.insertOne(row);
          return toRecord<T>(row);
        } catch (error) {
          if (!isDuplicateKey(error)) throw error;
          if (expectedVersion !== undefined) throw conflict('memory', place, expectedVersion, actual + 1);
          if (attempt >= 50) throw conflict('memory', place, actual, actual + 1);
          if (attempt > 3) await delay(Math.random() * attempt * 2);
        }
      }
    });
  }

  async history<T = unknown>(namespace: string, key: string, limit?: number): Promise<MemoryRecord<T>[]> {
    return this.ctx.run(`read the history of memory "${namespace}/${key}"`, async () => {
      const count = limitOf(limit);
      if (count === 0) return [];
      const cursor = this.rows.find({ namespace, key }).sort({ version: -1 });
      if (count !== undefined) cursor.limit(count);
      return (await cursor.toArray()).map((row) => toRecord<T>(row));
    });
  }

  /** Reads every version of the namespace (key order, newest first) and keeps the first per key. */
  async list<T = unknown>(namespace: string): Promise<MemoryRecord<T>[]> {
    return this.ctx.run(`list memory "${namespace}"`, async () => {
      const latest: MemoryRecord<T>[] = [];
      let lastKey: string | undefined;
      for await (const row of this.rows.find({ namespace }).sort({ key: 1, version: -1 })) {
        if (row.key === lastKey) continue;
        lastKey = row.key;
        latest.push(toRecord<T>(row));
      }
      return latest;
    });
  }
}

function toRecord<T>(row: MemoryRow): MemoryRecord<T> {
  const place = `memory "${row.namespace}/${row.key}" version ${row.version}`;
  return {
    namespace: row.namespace,
    key: row.key,
    value: decodeJson<T>(row.json, place),
    version: numberOf(row.version, place, 'version'),
    at: numberOf(row.at, place, 'at'),
    ...(typeof row.source === 'string' ? { source: row.source } : {}),
  };
}
