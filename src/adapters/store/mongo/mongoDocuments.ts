import type { ClientSession, Collection } from 'mongodb';
import type {
  DocumentOperation,
  DocumentStore,
  DocumentWrite,
  StoredDocument,
} from '../../../ports/store.js';
import { TroupeError } from '../../../ports/troupeError.js';
import { checkNumber, decodeJson, encodeJson } from '../jsonValue.js';
import { type Context, checkName, conflict, limitOf, numberOf } from './mongoContext.js';
import { isDuplicateKey } from './mongoErrors.js';

/** The smallest string above every string starting with `prefix`, in code point order. */
function prefixEnd(prefix: string): string | undefined {
  const points = Array.from(prefix);
  while (points.length > 0) {
    const last = (points.pop() as string).codePointAt(0) as number;
    if (last < 0x10ffff) {
      points.push(String.fromCodePoint(last === 0xd7ff ? 0xe000 : last + 1));
      return points.join('');
    }
  }
  return undefined;
}

interface DocumentRow {
  collection: string;
  key: string;
  json: string;
  version: number;
  updatedAt: number;
  expiresAt?: Date;
}

/** One planned write of a batch: the state it replaces and the version it creates. */
interface Step {
  key: string;
  json: string;
  before: DocumentRow | undefined;
  version: number;
}

/** One planned operation of a cross-collection batch: a write, or a delete of what was read. */
interface BatchStep extends Step {
  collection: string;
  /** A delete: `before` is the document it removes (none: it removes nothing). */
  deletes: boolean;
}

/** Documents with compare-and-set: one MongoDB document per (collection, key). */
export class MongoDocuments implements DocumentStore {
  private readonly rows: Collection<DocumentRow>;

  constructor(
    private readonly ctx: Context,
    private readonly idleExpiry: Record<string, number>,
  ) {
    this.rows = ctx.collection<DocumentRow>('documents');
  }

  async get<T = unknown>(collection: string, key: string): Promise<StoredDocument<T> | undefined> {
    return this.ctx.run(`read documents "${collection}/${key}"`, async () => {
      const row = await this.rows.findOne({ collection, key });
      return row ? toDocument<T>(row) : undefined;
    });
  }

  async put<T = unknown>(
    collection: string,
    key: string,
    value: T,
    options: { expectedVersion?: number; at?: number } = {},
  ): Promise<number> {
    const place = `${collection}/${key}`;
    return this.ctx.run(`write documents "${place}"`, async () => {
      checkName('document key', key);
      checkName('collection', collection);
      checkNumber(options.at, 'at', `documents "${place}"`);
      checkNumber(options.expectedVersion, 'expectedVersion', `documents "${place}"`);
      const json = encodeJson(value, `documents "${place}"`);
      const fields = this.fields(collection, json, options.at ?? Date.now());
      const { expectedVersion } = options;
      if (expectedVersion === undefined) return this.upsert(collection, key, fields);
      if (expectedVersion === 0) {
        try {
          await this.rows.insertOne({ collection, key, version: 1, ...fields });
          return 1;
        } catch (error) {
          if (!isDuplicateKey(error)) throw error;
          throw conflict('documents', place, 0, await this.versionOf(collection, key));
        }
      }
      const result = await this.rows.updateOne(
        { collection, key, version: expectedVersion },
        { $set: fields, $inc: { version: 1 } },
      );
      if (result.matchedCount === 1) return expectedVersion + 1;
      throw conflict('documents', place, expectedVersion, await this.versionOf(collection, key));
    });
  }

  async putMany<T = unknown>(
    collection: string,
    writes: readonly DocumentWrite<T>[],
    at?: number,
  ): Promise<number[]> {
    return this.ctx.run(`write ${writes.length} documents of "${collection}"`, async () => {
      checkName('collection', collection);
      checkNumber(at, 'at', `documents batch of "${collection}"`);
      const encoded = writes.map((w) => {
        checkName('document key', w.key);
        checkNumber(w.expectedVersion, 'expectedVersion', `documents "${collection}/${w.key}"`);
        return encodeJson(w.value, `documents "${collection}/${w.key}"`);
      });
      if (writes.length === 0) return [];
      const updatedAt = at ?? Date.now();
      const keys = [...new Set(writes.map((w) => w.key))];
      if (this.ctx.transactions) {
        const session = this.ctx.client.startSession();
        try {
          return await session.withTransaction(async () => {
            const steps = this.plan(
              collection,
              writes,
              encoded,
              await this.current(collection, keys, session),
            );
            for (const step of steps) await this.apply(collection, step, updatedAt, session);
            return steps.map((s) => s.version);
          });
        } finally {
          await session.endSession();
        }
      }
      return this.putManyWithRollback(collection, writes, encoded, keys, updatedAt);
    });
  }

  /**
   * In a multi-document transaction where the server runs them; on a standalone server, planned
   * against one read, applied one by one with compare-and-set and rolled back on a conflict (as
   * {@link putMany} is: readers may see part of the batch meanwhile).
   */
  async batch(operations: readonly DocumentOperation[], at?: number): Promise<(number | boolean)[]> {
    return this.ctx.run(`write a batch of ${operations.length} documents`, async () => {
      checkNumber(at, 'at', 'documents batch');
      const encoded = operations.map((o) => {
        checkName('collection', o.collection);
        checkName('document key', o.key);
        checkNumber(o.expectedVersion, 'expectedVersion', `documents "${o.collection}/${o.key}"`);
        return o.op === 'put' ? encodeJson(o.value, `documents "${o.collection}/${o.key}"`) : '';
      });
      if (operations.length === 0) return [];
      const updatedAt = at ?? Date.now();
      const results = (steps: BatchStep[]) =>
        steps.map((s) => (s.deletes ? s.before !== undefined : s.version));
      if (this.ctx.transactions) {
        const session = this.ctx.client.startSession();
        try {
          return await session.withTransaction(async () => {
            const current = await this.currentOf(operations, session);
            const steps = this.planBatch(operations, encoded, current);
            for (const step of steps) await this.applyBatchStep(step, updatedAt, session);
            return results(steps);
          });
        } finally {
          await session.endSession();
        }
      }
      const steps = this.planBatch(operations, encoded, await this.currentOf(operations));
      const applied: BatchStep[] = [];
      try {
        for (const step of steps) {
          await this.applyBatchStep(step, updatedAt);
          applied.push(step);
        }
        return results(steps);
      } catch (error) {
        const stuck: string[] = [];
        for (const step of applied.reverse())
          if (!(await this.undo(step))) stuck.push(`"${step.collection}/${step.key}"`);
        if (stuck.length === 0) throw error;
        this.ctx.logger.error({ documents: stuck }, 'MongoDB batch could not roll back a partial batch');
        const reason = error instanceof Error ? error.message : String(error);
        throw new TroupeError(
          TroupeError.isInstance(error) ? error.code : 'TROUPE_STORE_UNAVAILABLE',
          `${reason} The batch was partly written and ${stuck.join(', ')} could not be rolled back (written again meanwhile, or the server went away).`,
          {
            retryable: TroupeError.isInstance(error) ? error.retryable : true,
            cause: error,
            details: { partiallyWritten: stuck },
          },
        );
      }
    });
  }

  async delete(
    collection: string,
    key: string,
    options: { expectedVersion?: number } = {},
  ): Promise<boolean> {
    return this.ctx.run(`delete documents "${collection}/${key}"`, async () => {
      const filter =
        options.expectedVersion === undefined
          ? { collection, key }
          : { collection, key, version: options.expectedVersion };
      return (await this.rows.deleteOne(filter)).deletedCount === 1;
    });
  }

  async list<T = unknown>(
    collection: string,
    options: { afterKey?: string; limit?: number; keyPrefix?: string } = {},
  ): Promise<StoredDocument<T>[]> {
    return this.ctx.run(`list documents of "${collection}"`, async () => {
      const limit = limitOf(options.limit);
      if (limit === 0) return [];
      const range: { $gt?: string; $gte?: string; $lt?: string } = {};
      if (options.afterKey !== undefined) range.$gt = options.afterKey;
      if (options.keyPrefix) {
        range.$gte = options.keyPrefix;
        const end = prefixEnd(options.keyPrefix);
        if (end !== undefined) range.$lt = end;
      }
      const filter = Object.keys(range).length ? { collection, key: range } : { collection };
      const cursor = this.rows.find(filter).sort({ key: 1 });
      if (limit !== undefined) cursor.limit(limit);
      return (await cursor.toArray()).map((row) => toDocument<T>(row));
    });
  }

  async expireIdle(collection: string, idleBefore: number): Promise<number> {
    return this.ctx.run(`expire idle documents of "${collection}"`, async () => {
      const result = await this.rows.deleteMany({ collection, updatedAt: { $lt: idleBefore } });
      return result.deletedCount;
    });
  }

  private fields(collection: string, json: string, updatedAt: number) {
    const idle = this.idleExpiry[collection];
    return idle === undefined
      ? { json, updatedAt }
      : { json, updatedAt, expiresAt: new Date(updatedAt + idle) };
  }

  /** An unconditional write: upsert with `$inc`, retried when two first writes race on the unique index. */
  private async upsert(collection: string, key: string, fields: Partial<DocumentRow>): Promise<number> {
    for (let attempt = 1; ; attempt++) {
      try {
        const row = await this.rows.findOneAndUpdate(
          { collection, key },
          { $set: fields, $inc: { version: 1 } },
          { upsert: true, returnDocument: 'after', projection: { version: 1 } },
        );
        return numberOf(row?.version, `documents "${collection}/${key}"`, 'version');
      } catch (error) {
        if (!isDuplicateKey(error) || attempt >= 5) throw error;
      }
    }
  }

  private async versionOf(collection: string, key: string): Promise<number> {
    const row = await this.rows.findOne({ collection, key }, { projection: { version: 1 } });
    return row ? numberOf(row.version, `documents "${collection}/${key}"`, 'version') : 0;
  }

  private async current(
    collection: string,
    keys: string[],
    session?: ClientSession,
  ): Promise<Map<string, DocumentRow>> {
    const rows = await this.rows.find({ collection, key: { $in: keys } }, inSession(session)).toArray();
    return new Map(rows.map((row) => [row.key, row]));
  }

  /** The documents a batch touches, by `collection\0key`. */
  private async currentOf(
    operations: readonly DocumentOperation[],
    session?: ClientSession,
  ): Promise<Map<string, DocumentRow>> {
    const keys = new Map<string, Set<string>>();
    for (const o of operations) keys.set(o.collection, (keys.get(o.collection) ?? new Set()).add(o.key));
    const filter = {
      $or: [...keys].map(([collection, set]) => ({ collection, key: { $in: [...set] } })),
    };
    const rows = await this.rows.find(filter, inSession(session)).toArray();
    return new Map(rows.map((row) => [`${row.collection}\0${row.key}`, row]));
  }

  /** A batch's operations against the documents as the earlier ones leave them; a failed expectation refuses all. */
  private planBatch(
    operations: readonly DocumentOperation[],
    encoded: string[],
    current: Map<string, DocumentRow>,
  ): BatchStep[] {
    // What each document is once the earlier operations applied (null: deleted).
    const staged = new Map<string, DocumentRow | null>();
    return operations.map((o, i) => {
      const id = `${o.collection}\0${o.key}`;
      const earlier = staged.get(id);
      const before = (earlier === undefined ? current.get(id) : earlier) ?? undefined;
      const actual = before?.version ?? 0;
      const base = { collection: o.collection, key: o.key, json: encoded[i] as string };
      if (o.op === 'delete') {
        const matches = before !== undefined && (o.expectedVersion ?? actual) === actual;
        if (matches) staged.set(id, null);
        return { ...base, deletes: true, before: matches ? before : undefined, version: actual };
      }
      if (o.expectedVersion !== undefined && o.expectedVersion !== actual)
        throw conflict('documents', `${o.collection}/${o.key}`, o.expectedVersion, actual);
      staged.set(id, {
        collection: o.collection,
        key: o.key,
        json: base.json,
        version: actual + 1,
        updatedAt: 0,
      });
      return { ...base, deletes: false, before, version: actual + 1 };
    });
  }

  /** One planned operation, compare-and-set against the version it was planned from. */
  private async applyBatchStep(step: BatchStep, updatedAt: number, session?: ClientSession): Promise<void> {
    if (!step.deletes) return this.apply(step.collection, step, updatedAt, session);
    if (!step.before) return;
    const { collection, key } = step;
    const result = await this.rows.deleteOne({ collection, key, version: step.version }, inSession(session));
    if (result.deletedCount !== 1)
      throw conflict(
        'documents',
        `${collection}/${key}`,
        step.version,
        session ? undefined : await this.versionOf(collection, key),
      );
  }

  /** Undoes one applied operation (compare-and-set); false when it could not be. */
  private async undo(step: BatchStep): Promise<boolean> {
    if (!step.deletes) return (await this.rollBack(step.collection, [step])).length === 0;
    if (!step.before) return true;
    try {
      const { _id: _ignored, ...row } = step.before as DocumentRow & { _id?: unknown };
      await this.rows.insertOne(row);
      return true;
    } catch {
      return false;
    }
  }

  /** The writes of a batch against the current state, in order; a failed expectation refuses all. */
  private plan<T>(
    collection: string,
    writes: readonly DocumentWrite<T>[],
    encoded: string[],
    current: Map<string, DocumentRow>,
  ): Step[] {
    const staged = new Map<string, Step>();
    return writes.map((w, i) => {
      const previous = staged.get(w.key);
      const before = previous ? undefined : current.get(w.key);
      const actual = previous?.version ?? before?.version ?? 0;
      if (w.expectedVersion !== undefined && w.expectedVersion !== actual) {
        throw conflict('documents', `${collection}/${w.key}`, w.expectedVersion, actual);
      }
      const step: Step = { key: w.key, json: encoded[i] as string, before, version: actual + 1 };
      staged.set(w.key, step);
      return step;
    });
  }

  /** Applies one planned write with compare-and-set against the version it planned from. */
  private async apply(
    collection: string,
    step: Step,
    updatedAt: number,
    session?: ClientSession,
  ): Promise<void> {
    const fields = { ...this.fields(collection, step.json, updatedAt), version: step.version };
    const place = `${collection}/${step.key}`;
    // Inside a transaction the session cannot read after a failed write: the version stays unknown.
    const lost = async () =>
      conflict(
        'documents',
        place,
        step.version - 1,
        session ? undefined : await this.versionOf(collection, step.key),
      );
    if (step.version === 1) {
      try {
        await this.rows.insertOne({ collection, key: step.key, ...fields }, inSession(session));
      } catch (error) {
        throw isDuplicateKey(error) ? await lost() : error;
      }
      return;
    }
    const result = await this.rows.updateOne(
      { collection, key: step.key, version: step.version - 1 },
      { $set: fields },
      inSession(session),
    );
    if (result.matchedCount !== 1) throw await lost();
  }

  /**
   * A batch without transactions (standalone server): every expectation is checked against one
   * read first, so a stale batch writes nothing; then each write is compare-and-set against the
   * version read, and if one loses to a concurrent writer the ones already made are rolled back
   * (again compare-and-set, newest first). Readers may see part of a batch while it is written,
   * and a process that dies mid-batch leaves the part it wrote.
   */
  private async putManyWithRollback<T>(
    collection: string,
    writes: readonly DocumentWrite<T>[],
    encoded: string[],
    keys: string[],
    updatedAt: number,
  ): Promise<number[]> {
    const steps = this.plan(collection, writes, encoded, await this.current(collection, keys));
    const applied: Step[] = [];
    try {
      for (const step of steps) {
        await this.apply(collection, step, updatedAt);
        applied.push(step);
      }
      return steps.map((s) => s.version);
    } catch (error) {
      const stuck = await this.rollBack(collection, applied);
      if (stuck.length === 0) throw error;
      this.ctx.logger.error(
        { collection, keys: stuck },
        'MongoDB putMany could not roll back a partial batch',
      );
      const reason = error instanceof Error ? error.message : String(error);
      throw new TroupeError(
        TroupeError.isInstance(error) ? error.code : 'TROUPE_STORE_UNAVAILABLE',
        `${reason} The batch was partly written and ${stuck.map((k) => `"${collection}/${k}"`).join(', ')} could not be rolled back (written again meanwhile, or the server went away).`,
        {
          retryable: TroupeError.isInstance(error) ? error.retryable : true,
          cause: error,
          details: { collection, partiallyWritten: stuck },
        },
      );
    }
  }

  /** Undoes applied steps newest first; returns the keys that could not be restored. */
  private async rollBack(collection: string, applied: Step[]): Promise<string[]> {
    const stuck: string[] = [];
    for (const step of [...applied].reverse()) {
      const filter = { collection, key: step.key, version: step.version };
      try {
        const before = step.before;
        const undone = before
          ? (await this.rows.updateOne(filter, restoreUpdate(before))).matchedCount
          : (await this.rows.deleteOne(filter)).deletedCount;
        if (undone !== 1) stuck.push(step.key);
      } catch {
        stuck.push(step.key);
      }
    }
    return stuck;
  }
}

/** A session option only when there is a session (the driver reads a missing one and an undefined one alike). */
function inSession(session: ClientSession | undefined): { session?: ClientSession } {
  return session !== undefined ? { session } : {};
}

/** The update that puts a row back as it was before a step. */
function restoreUpdate(before: DocumentRow) {
  const restore = { json: before.json, updatedAt: before.updatedAt, version: before.version };
  return before.expiresAt
    ? { $set: { ...restore, expiresAt: before.expiresAt } }
    : { $set: restore, $unset: { expiresAt: '' as const } };
}

function toDocument<T>(row: DocumentRow): StoredDocument<T> {
  const place = `documents "${row.collection}/${row.key}"`;
  return {
    collection: row.collection,
    key: row.key,
    value: decodeJson<T>(row.json, place),
    version: numberOf(row.version, place, 'version'),
    updatedAt: numberOf(row.updatedAt, place, 'updatedAt'),
  };
}
