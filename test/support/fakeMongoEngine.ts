import { type Document, deserialize, EJSON, Long, ObjectId, serialize } from 'bson';
import { update as mingoUpdate } from 'mingo';
import { Context } from 'mingo/core';
import * as expressionOperators from 'mingo/operators/expression';
import * as pipelineOperators from 'mingo/operators/pipeline';
import * as projectionOperators from 'mingo/operators/projection';
import * as queryOperators from 'mingo/operators/query';
import { Query } from 'mingo/query';
import type { Options } from 'mingo/types';
import { compare, ensureArray, resolve } from 'mingo/util';

/**
 * The command side of the fake MongoDB server (the wire side is `fakeMongoServer.ts`): state in
 * memory, one array of documents per namespace, queries, projections and update operators by
 * mingo. Strings compare by code point (MongoDB compares UTF-8 bytes; JavaScript, UTF-16 units),
 * in sorts and in `$gt`/`$gte`/`$lt`/`$lte`. Unique indexes (partial and sparse too) are enforced on every write with MongoDB's
 * duplicate-key error (code 11000); TTL indexes are recorded and applied by `expireTtl()`.
 *
 * Transactions (replica-set mode only) keep an undo log per session: writes apply at once and an
 * abort reverts them. There is no isolation between sessions; tests that need it use a real server.
 */

export interface IndexSpec {
  name: string;
  key: Record<string, number>;
  unique?: boolean;
  sparse?: boolean;
  expireAfterSeconds?: number;
  partialFilterExpression?: Document;
}

interface Collection {
  docs: Document[];
  indexes: IndexSpec[];
}

interface Cursor {
  ns: string;
  docs: Document[];
}

type Reply = Document;

class CommandError extends Error {
  constructor(
    readonly code: number,
    readonly codeName: string,
    message: string,
    readonly extra: Document = {},
  ) {
    super(message);
  }
}

/** Code point order, as MongoDB's binary comparison of UTF-8 gives. */
function compareStrings(a: string, b: string): number {
  const rank = (unit: number) => (unit >= 0xe000 ? unit - 0x800 : unit >= 0xd800 ? unit + 0x2000 : unit);
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const d = rank(a.charCodeAt(i)) - rank(b.charCodeAt(i));
    if (d !== 0) return d;
  }
  return a.length - b.length;
}

function compareValues(a: unknown, b: unknown): number {
  return typeof a === 'string' && typeof b === 'string' ? compareStrings(a, b) : compare(a, b);
}

type QueryOperator = (selector: string, value: unknown, options: Options) => (doc: Document) => boolean;

/** mingo's range operator, with strings compared by code point. */
function range(builtin: QueryOperator, test: (order: number) => boolean): QueryOperator {
  return (selector, value, options) => {
    if (typeof value !== 'string') return builtin(selector, value, options);
    return (doc) =>
      ensureArray(resolve(doc, selector, { unwrapArray: true })).some(
        (v) => typeof v === 'string' && test(compareStrings(v, value)),
      );
  };
}

const queryOptions: Partial<Options> = {
  scriptEnabled: false,
  context: Context.init({
    query: {
      ...queryOperators,
      $gt: range(queryOperators.$gt as QueryOperator, (o) => o > 0),
      $gte: range(queryOperators.$gte as QueryOperator, (o) => o >= 0),
      $lt: range(queryOperators.$lt as QueryOperator, (o) => o < 0),
      $lte: range(queryOperators.$lte as QueryOperator, (o) => o <= 0),
    },
    projection: projectionOperators,
    expression: expressionOperators,
    pipeline: pipelineOperators,
  }),
};

/** Documents matching `filter`, in stored (natural) order. */
function match(docs: Document[], filter: Document): Document[] {
  return new Query(filter, queryOptions).find(docs).all() as Document[];
}

function sortDocs(docs: Document[], spec: Record<string, number>): Document[] {
  const fields = Object.entries(spec);
  return [...docs].sort((a, b) => {
    for (const [path, direction] of fields) {
      const order = compareValues(getPath(a, path), getPath(b, path));
      if (order !== 0) return direction < 0 ? -order : order;
    }
    return 0;
  });
}

function project(docs: Document[], projection: Document | undefined): Document[] {
  if (!projection || Object.keys(projection).length === 0) return docs;
  return new Query({}, queryOptions).find(docs, projection).all() as Document[];
}

export class FakeMongoEngine {
  /** Namespace (`db.collection`) → collection. */
  readonly collections = new Map<string, Collection>();
  private readonly cursors = new Map<string, Cursor>();
  private nextCursorId = 1;
  /** Undo logs of open transactions, by session. */
  private readonly transactions = new Map<string, (() => void)[]>();
  private undo: (() => void)[] | undefined;

  /** Runs one command (its body, `$db` included); never throws. */
  run(db: string, body: Document): Reply {
    const name = Object.keys(body)[0] ?? '';
    try {
      this.undo = this.transactionLog(body);
      return this.dispatch(name, db, body);
    } catch (error) {
      if (error instanceof CommandError) {
        return { ok: 0, errmsg: error.message, code: error.code, codeName: error.codeName, ...error.extra };
      }
      return { ok: 0, errmsg: String((error as Error).message ?? error), code: 8, codeName: 'UnknownError' };
    } finally {
      this.undo = undefined;
    }
  }

  /** Removes every database and cursor. */
  dropAll(): void {
    this.collections.clear();
    this.cursors.clear();
  }

  /** Deletes documents whose TTL index date lies more than `expireAfterSeconds` before `now`. */
  expireTtl(now = Date.now()): number {
    let removed = 0;
    for (const coll of this.collections.values()) {
      for (const { key, expireAfterSeconds } of coll.indexes) {
        if (expireAfterSeconds === undefined) continue;
        const field = Object.keys(key)[0] ?? '';
        const before = coll.docs.length;
        coll.docs = coll.docs.filter((doc) => {
          const at = getPath(doc, field);
          return !(at instanceof Date && at.getTime() + expireAfterSeconds * 1000 <= now);
        });
        removed += before - coll.docs.length;
      }
    }
    return removed;
  }

  private dispatch(name: string, db: string, body: Document): Reply {
    const ns = `${db}.${String(body[name])}`;
    switch (name) {
      case 'ping':
      case 'endSessions':
      case 'dropDatabase':
        if (name === 'dropDatabase') {
          for (const key of [...this.collections.keys()])
            if (key.startsWith(`${db}.`)) this.collections.delete(key);
        }
        return { ok: 1 };
      case 'buildInfo':
      case 'buildinfo':
        return { version: '7.0.0', versionArray: [7, 0, 0, 0], maxBsonObjectSize: 16 * 1024 * 1024, ok: 1 };
      case 'insert':
        return this.insert(ns, body.documents ?? [], body.ordered !== false);
      case 'find':
        return this.find(ns, body);
      case 'getMore':
        return this.getMore(body);
      case 'killCursors':
        for (const id of body.cursors ?? []) this.cursors.delete(String(id));
        return {
          cursorsKilled: body.cursors ?? [],
          cursorsNotFound: [],
          cursorsAlive: [],
          cursorsUnknown: [],
          ok: 1,
        };
      case 'update':
        return this.update(ns, body.updates ?? [], body.ordered !== false);
      case 'delete':
        return this.delete(ns, body.deletes ?? []);
      case 'findAndModify':
      case 'findandmodify':
        return this.findAndModify(ns, body);
      case 'count': {
        const docs = match(this.docs(ns), body.query ?? {});
        const skipped = docs.slice(body.skip ?? 0);
        return { n: body.limit ? Math.min(skipped.length, body.limit) : skipped.length, ok: 1 };
      }
      case 'createIndexes':
        return this.createIndexes(ns, body.indexes ?? []);
      case 'listIndexes': {
        const coll = this.collections.get(ns);
        if (!coll) throw new CommandError(26, 'NamespaceNotFound', `ns does not exist: ${ns}`);
        return this.cursorReply(
          ns,
          coll.indexes.map(({ unique, ...index }) => ({
            v: 2,
            ...index,
            ...(unique && index.name !== '_id_' ? { unique } : {}),
          })),
          body.cursor?.batchSize,
        );
      }
      case 'listCollections': {
        const names = [...this.collections.keys()].filter((key) => key.startsWith(`${db}.`));
        const infos = names.map((key) => ({
          name: key.slice(db.length + 1),
          type: 'collection',
          options: {},
        }));
        return this.cursorReply(`${db}.$cmd.listCollections`, infos, body.cursor?.batchSize);
      }
      case 'drop':
        if (!this.collections.delete(ns)) throw new CommandError(26, 'NamespaceNotFound', 'ns not found');
        return { ok: 1 };
      case 'commitTransaction':
      case 'abortTransaction':
        return this.endTransaction(name, body);
      default:
        throw new CommandError(59, 'CommandNotFound', `no such command: '${name}'`);
    }
  }

  // ---- transactions --------------------------------------------------------------------------

  private transactionLog(body: Document): (() => void)[] | undefined {
    if (body.autocommit !== false || !body.lsid) return undefined;
    const session = sessionKey(body);
    if (body.startTransaction === true) this.transactions.set(session, []);
    return this.transactions.get(session);
  }

  private endTransaction(name: string, body: Document): Reply {
    const session = sessionKey(body);
    const log = this.transactions.get(session);
    this.transactions.delete(session);
    this.undo = undefined;
    if (name === 'abortTransaction' && log) for (const undo of log.reverse()) undo();
    return { ok: 1 };
  }

  // ---- writes --------------------------------------------------------------------------------

  private insert(ns: string, documents: Document[], ordered: boolean): Reply {
    const coll = this.collection(ns);
    const writeErrors: Document[] = [];
    let n = 0;
    for (const [index, doc] of documents.entries()) {
      const stored = doc._id === undefined ? { _id: new ObjectId(), ...doc } : doc;
      const dup = this.duplicate(coll, ns, stored);
      if (dup) {
        writeErrors.push({ index, ...dup });
        if (ordered) break;
        continue;
      }
      this.put(coll, undefined, stored);
      n++;
    }
    return writeErrors.length ? { n, writeErrors, ok: 1 } : { n, ok: 1 };
  }

  private update(ns: string, updates: Document[], ordered: boolean): Reply {
    const coll = this.collection(ns);
    const writeErrors: Document[] = [];
    const upserted: Document[] = [];
    let n = 0;
    let nModified = 0;
    for (const [index, stmt] of updates.entries()) {
      try {
        const targets = match(coll.docs, stmt.q ?? {});
        const chosen = stmt.multi ? targets : targets.slice(0, 1);
        for (const doc of chosen) {
          const next = applyUpdate(doc, stmt.u, false);
          n++;
          if (EJSON.stringify(next) !== EJSON.stringify(doc)) {
            this.write(coll, ns, doc, next);
            nModified++;
          }
        }
        if (chosen.length === 0 && stmt.upsert) {
          const doc = applyUpdate(seedFromFilter(stmt.q ?? {}), stmt.u, true);
          this.write(coll, ns, undefined, doc);
          upserted.push({ index, _id: doc._id });
          n++;
        }
      } catch (error) {
        if (!(error instanceof CommandError)) throw error;
        writeErrors.push({
          index,
          code: error.code,
          codeName: error.codeName,
          errmsg: error.message,
          ...error.extra,
        });
        if (ordered) break;
      }
    }
    return {
      n,
      nModified,
      ...(upserted.length ? { upserted } : {}),
      ...(writeErrors.length ? { writeErrors } : {}),
      ok: 1,
    };
  }

  private delete(ns: string, deletes: Document[]): Reply {
    const coll = this.collections.get(ns);
    let n = 0;
    for (const stmt of deletes) {
      if (!coll) break;
      const targets = match(coll.docs, stmt.q ?? {});
      for (const doc of stmt.limit === 1 ? targets.slice(0, 1) : targets) {
        this.put(coll, doc, undefined);
        n++;
      }
    }
    return { n, ok: 1 };
  }

  private findAndModify(ns: string, body: Document): Reply {
    const coll = this.collection(ns);
    const found = sortDocs(match(coll.docs, body.query ?? {}), body.sort ?? {})[0];
    const view = (doc: Document | undefined) => (doc ? (project([doc], body.fields)[0] ?? null) : null);
    if (body.remove) {
      if (found) this.put(coll, found, undefined);
      return { lastErrorObject: { n: found ? 1 : 0 }, value: view(found), ok: 1 };
    }
    if (found) {
      const next = applyUpdate(found, body.update, false);
      this.write(coll, ns, found, next);
      return {
        lastErrorObject: { n: 1, updatedExisting: true },
        value: view(body.new ? next : found),
        ok: 1,
      };
    }
    if (!body.upsert) return { lastErrorObject: { n: 0, updatedExisting: false }, value: null, ok: 1 };
    const doc = applyUpdate(seedFromFilter(body.query ?? {}), body.update, true);
    this.write(coll, ns, undefined, doc);
    return {
      lastErrorObject: { n: 1, updatedExisting: false, upserted: doc._id },
      value: body.new ? view(doc) : null,
      ok: 1,
    };
  }

  /** Replaces `before` by `after` (either may be absent) after the unique-index check. */
  private write(coll: Collection, ns: string, before: Document | undefined, after: Document): void {
    const dup = this.duplicate(coll, ns, after, before);
    if (dup) throw new CommandError(11000, 'DuplicateKey', String(dup.errmsg), dup);
    this.put(coll, before, after);
  }

  /** The one place documents change, so an open transaction can undo it. */
  private put(coll: Collection, before: Document | undefined, after: Document | undefined): void {
    if (before && after) coll.docs[coll.docs.indexOf(before)] = after;
    else if (after) coll.docs.push(after);
    else if (before) coll.docs.splice(coll.docs.indexOf(before), 1);
    this.undo?.push(() => {
      if (before && after) coll.docs[coll.docs.indexOf(after)] = before;
      else if (after) coll.docs.splice(coll.docs.indexOf(after), 1);
      else if (before) coll.docs.push(before);
    });
  }

  private duplicate(coll: Collection, ns: string, doc: Document, replacing?: Document): Document | undefined {
    for (const index of coll.indexes) {
      if (!index.unique) continue;
      const key = indexKey(index, doc);
      if (key === undefined) continue;
      const clash = coll.docs.find((other) => other !== replacing && indexKey(index, other) === key);
      if (!clash) continue;
      const keyValue = Object.fromEntries(Object.keys(index.key).map((p) => [p, getPath(doc, p) ?? null]));
      return {
        code: 11000,
        errmsg: `E11000 duplicate key error collection: ${ns} index: ${index.name} dup key: ${EJSON.stringify(keyValue)}`,
        keyPattern: index.key,
        keyValue,
      };
    }
    return undefined;
  }

  // ---- reads ---------------------------------------------------------------------------------

  private find(ns: string, body: Document): Reply {
    const sorted = sortDocs(match(this.docs(ns), body.filter ?? {}), body.sort ?? {});
    const from = body.skip ?? 0;
    const docs = project(
      sorted.slice(from, body.limit ? from + Math.abs(body.limit) : undefined),
      body.projection,
    );
    if (body.singleBatch) return { cursor: { id: Long.ZERO, ns, firstBatch: docs }, ok: 1 };
    return this.cursorReply(ns, docs, body.batchSize);
  }

  private getMore(body: Document): Reply {
    const id = String(body.getMore);
    const cursor = this.cursors.get(id);
    if (!cursor) throw new CommandError(43, 'CursorNotFound', `cursor id ${id} not found`);
    const batch = cursor.docs.splice(0, body.batchSize || cursor.docs.length);
    if (cursor.docs.length === 0) this.cursors.delete(id);
    const nextId = cursor.docs.length ? Long.fromString(id) : Long.ZERO;
    return { cursor: { id: nextId, ns: cursor.ns, nextBatch: batch }, ok: 1 };
  }

  private cursorReply(ns: string, docs: Document[], batchSize: number | undefined): Reply {
    const size = batchSize ?? 101;
    const firstBatch = docs.slice(0, size);
    if (docs.length <= size) return { cursor: { id: Long.ZERO, ns, firstBatch }, ok: 1 };
    const id = this.nextCursorId++;
    this.cursors.set(String(id), { ns, docs: docs.slice(size) });
    return { cursor: { id: Long.fromNumber(id), ns, firstBatch }, ok: 1 };
  }

  // ---- indexes -------------------------------------------------------------------------------

  private createIndexes(ns: string, specs: Document[]): Reply {
    const created = !this.collections.has(ns);
    const coll = this.collection(ns);
    const before = coll.indexes.length;
    for (const spec of specs) {
      const index: IndexSpec = { name: String(spec.name), key: spec.key };
      for (const option of ['unique', 'sparse', 'expireAfterSeconds', 'partialFilterExpression'] as const) {
        if (spec[option] !== undefined) Object.assign(index, { [option]: spec[option] });
      }
      const existing = coll.indexes.find((i) => i.name === index.name);
      if (existing) {
        if (EJSON.stringify(existing) !== EJSON.stringify(index)) {
          throw new CommandError(
            86,
            'IndexKeySpecsConflict',
            `An existing index named ${index.name} differs`,
          );
        }
        continue;
      }
      if (index.unique) {
        const seen = new Set<string>();
        for (const doc of coll.docs) {
          const key = indexKey(index, doc);
          if (key === undefined) continue;
          if (seen.has(key))
            throw new CommandError(11000, 'DuplicateKey', `E11000 duplicate key in ${index.name}`);
          seen.add(key);
        }
      }
      coll.indexes.push(index);
    }
    return {
      createdCollectionAutomatically: created,
      numIndexesBefore: before,
      numIndexesAfter: coll.indexes.length,
      ok: 1,
    };
  }

  private collection(ns: string): Collection {
    let coll = this.collections.get(ns);
    if (!coll) {
      coll = { docs: [], indexes: [{ name: '_id_', key: { _id: 1 }, unique: true }] };
      this.collections.set(ns, coll);
    }
    return coll;
  }

  private docs(ns: string): Document[] {
    return this.collections.get(ns)?.docs ?? [];
  }
}

// ---- helpers ---------------------------------------------------------------------------------

function sessionKey(body: Document): string {
  return EJSON.stringify(body.lsid ?? null);
}

function getPath(doc: Document, path: string): unknown {
  let value: unknown = doc;
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Document)[part];
  }
  return value;
}

function indexKey(index: IndexSpec, doc: Document): string | undefined {
  if (index.partialFilterExpression && !new Query(index.partialFilterExpression, queryOptions).test(doc)) {
    return undefined;
  }
  const values = Object.keys(index.key).map((path) => getPath(doc, path) ?? null);
  if (index.sparse && values.every((v) => v === null)) return undefined;
  return EJSON.stringify(values);
}

/** A deep copy that keeps BSON types (ObjectId, Date, Long…). */
function clone(doc: Document): Document {
  return deserialize(serialize(doc));
}

/** The document an upsert starts from: the filter's equality conditions. */
function seedFromFilter(filter: Document): Document {
  const seed: Document = {};
  for (const [path, condition] of Object.entries(filter)) {
    if (path.startsWith('$')) continue;
    const isOperators =
      condition !== null &&
      typeof condition === 'object' &&
      !Array.isArray(condition) &&
      Object.keys(condition).some((k) => k.startsWith('$'));
    if (isOperators && !('$eq' in condition)) continue;
    setPath(seed, path, isOperators ? condition.$eq : condition);
  }
  return seed;
}

function setPath(doc: Document, path: string, value: unknown): void {
  const parts = path.split('.');
  let target = doc;
  for (const part of parts.slice(0, -1)) {
    if (target[part] === null || typeof target[part] !== 'object') target[part] = {};
    target = target[part];
  }
  target[parts[parts.length - 1] ?? ''] = value;
}

/** The document after `update` (operators or a replacement); the input is left untouched. */
function applyUpdate(doc: Document, update: Document, inserting: boolean): Document {
  if (Array.isArray(update)) throw new CommandError(9, 'FailedToParse', 'pipeline updates are not supported');
  const next = clone(doc);
  const operators = Object.keys(update).some((k) => k.startsWith('$'));
  if (!operators) {
    const replaced = { _id: doc._id, ...clone(update) };
    if (replaced._id === undefined) replaced._id = new ObjectId();
    return replaced;
  }
  const { $setOnInsert, ...rest } = update;
  if (inserting && $setOnInsert) mingoUpdate(next, { $set: $setOnInsert });
  if (Object.keys(rest).length) mingoUpdate(next, rest);
  if (next._id === undefined) return { _id: new ObjectId(), ...next };
  if (doc._id !== undefined && EJSON.stringify(next._id) !== EJSON.stringify(doc._id)) {
    throw new CommandError(
      66,
      'ImmutableField',
      "Performing an update on the path '_id' would modify the immutable field '_id'",
    );
  }
  return next;
}
