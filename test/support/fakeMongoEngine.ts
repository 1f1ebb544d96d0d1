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
 * Transactions (replica-set mode only) behave as far as Troupe's adapter depends on them: a
 * transaction reads and writes its own copy of each collection it touches, invisible to other
 * sessions until it commits and gone if it aborts; a document (or unique key) written by one open
 * transaction is locked, and another transaction writing it, or writing a document changed since
 * it started, gets WriteConflict (112) with the `TransientTransactionError` label (so the driver's
 * retry runs); any failed statement aborts the transaction, and every later command of it,
 * `commitTransaction` included, answers NoSuchTransaction (251). A write outside a transaction
 * never waits for a lock (a real server would): it lands, and the transaction that overlaps it
 * fails with WriteConflict when it writes or commits. A transaction open longer than the
 * lifetime limit (MongoDB's `transactionLifetimeLimitSeconds`, a minute by default) is aborted
 * when another transaction needs one of its locks, and its own next command gets
 * NoSuchTransaction: so a client killed mid-transaction holds its documents only that long.
 *
 * Retryable writes are de-duplicated: a write command carrying `lsid` + `txnNumber` outside a
 * transaction is applied once, and a retry with the same pair gets the first reply back (the case
 * of a reply lost after the write was applied).
 */

/** An open (or aborted) multi-document transaction of one session. */
interface Transaction {
  txnNumber: number;
  /** The engine's commit clock when it started: a document changed after that conflicts. */
  startedAt: number;
  /** Wall-clock ms when it started, for the lifetime limit. */
  openedAt: number;
  aborted: boolean;
  /** Namespace → this transaction's copy of the collection's documents. */
  views: Map<string, Document[]>;
  /** `ns|_id` → the document's state at commit (undefined: deleted). */
  finals: Map<string, { ns: string; id: unknown; doc: Document | undefined }>;
  /** Lock keys held (documents and unique-index values). */
  locks: Set<string>;
}

/** Write commands the driver retries with the same `txnNumber`. */
const RETRYABLE_WRITES = new Set(['insert', 'update', 'delete', 'findAndModify', 'findandmodify']);
/** How many retryable-write replies are remembered. */
const RETRYABLE_REMEMBERED = 10_000;

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
  /** Transactions by session (an aborted one stays until the session starts another). */
  private readonly transactions = new Map<string, Transaction>();
  /** The last committed transaction number of each session (a retried commit succeeds). */
  private readonly committed = new Map<string, number>();
  /** Lock key → the transaction holding it. */
  private readonly locks = new Map<string, Transaction>();
  /** `ns|_id` → the commit clock of its last committed change. */
  private readonly lastChange = new Map<string, number>();
  private clock = 0;
  /** `session#txnNumber` → the reply of a retryable write already applied. */
  private readonly retried = new Map<string, Reply>();
  /** The transaction the current command runs in, if any. */
  private active: Transaction | undefined;

  /**
   * @param transactionLifetimeLimitMs how long a transaction may stay open before it is aborted
   * (MongoDB's `transactionLifetimeLimitSeconds`, 60 s by default)
   */
  constructor(private readonly transactionLifetimeLimitMs = 60_000) {}

  /** Runs one command (its body, `$db` included); never throws. */
  run(db: string, body: Document): Reply {
    const name = Object.keys(body)[0] ?? '';
    try {
      const session = body.lsid ? sessionKey(body) : undefined;
      if (session !== undefined && body.autocommit === false)
        return this.inTransaction(session, name, db, body);
      if (session !== undefined && body.txnNumber !== undefined && RETRYABLE_WRITES.has(name)) {
        const key = `${session}#${numberOf(body.txnNumber)}`;
        const first = this.retried.get(key);
        if (first) return first;
        const reply = this.dispatch(name, db, body);
        this.retried.set(key, reply);
        if (this.retried.size > RETRYABLE_REMEMBERED)
          this.retried.delete(this.retried.keys().next().value as string);
        return reply;
      }
      if (name === 'endSessions')
        for (const lsid of body.endSessions ?? []) this.endSession(sessionKey({ lsid }));
      return this.dispatch(name, db, body);
    } catch (error) {
      return errorReply(error);
    } finally {
      this.active = undefined;
    }
  }
  /**
   * Aborts the transaction `body` runs in, if any: what a real server does when one of its
   * statements fails, here for a failure the wire side injected instead of running the command.
   */
  abortTransactionOf(body: Document): void {
    if (!body.lsid || body.autocommit !== false) return;
    const txn = this.transactions.get(sessionKey(body));
    if (txn && txn.txnNumber === numberOf(body.txnNumber) && !txn.aborted) this.abort(txn);
  }

  /** Removes every database and cursor. */
  dropAll(): void {
    this.collections.clear();
    this.cursors.clear();
    this.transactions.clear();
    this.committed.clear();
    this.locks.clear();
    this.lastChange.clear();
    this.retried.clear();
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
        // Outside a transaction (no `autocommit: false`) there is nothing to end.
        throw noSuchTransaction(numberOf(body.txnNumber));
      default:
        throw new CommandError(59, 'CommandNotFound', `no such command: '${name}'`);
    }
  }

  // ---- transactions --------------------------------------------------------------------------

  private inTransaction(session: string, name: string, db: string, body: Document): Reply {
    const txnNumber = numberOf(body.txnNumber);
    if (name === 'commitTransaction') return this.commit(session, txnNumber);
    if (name === 'abortTransaction') {
      const txn = this.transactions.get(session);
      if (!txn || txn.txnNumber !== txnNumber || txn.aborted) throw noSuchTransaction(txnNumber);
      this.abort(txn);
      return { ok: 1 };
    }
    if (body.startTransaction === true) {
      const previous = this.transactions.get(session);
      if (previous && !previous.aborted) this.abort(previous);
      this.transactions.set(session, {
        txnNumber,
        startedAt: this.clock,
        openedAt: Date.now(),
        aborted: false,
        views: new Map(),
        finals: new Map(),
        locks: new Set(),
      });
    }
    const txn = this.transactions.get(session);
    if (txn && !txn.aborted && this.expired(txn)) this.abort(txn);
    if (!txn || txn.txnNumber !== txnNumber || txn.aborted) throw noSuchTransaction(txnNumber);
    this.active = txn;
    let reply: Reply;
    try {
      reply = this.dispatch(name, db, body);
    } catch (error) {
      // A failed statement aborts the whole transaction, as on a real server.
      this.abort(txn);
      throw error;
    }
    if (reply.ok !== 1 || (Array.isArray(reply.writeErrors) && reply.writeErrors.length > 0)) this.abort(txn);
    return reply;
  }

  private commit(session: string, txnNumber: number): Reply {
    const txn = this.transactions.get(session);
    if (!txn || txn.txnNumber !== txnNumber) {
      if (this.committed.get(session) === txnNumber) return { ok: 1 }; // a retried commit
      throw noSuchTransaction(txnNumber);
    }
    if (!txn.aborted && this.expired(txn)) this.abort(txn);
    if (txn.aborted) throw noSuchTransaction(txnNumber);
    // Everything it wrote must be unchanged since it started (a write outside it may have landed).
    for (const key of txn.finals.keys()) {
      if ((this.lastChange.get(key) ?? 0) > txn.startedAt) {
        this.abort(txn);
        throw writeConflict();
      }
    }
    const next = new Map<string, Document[]>();
    for (const [key, { ns, id, doc }] of txn.finals) {
      const docs = next.get(ns) ?? [...this.collection(ns).docs];
      next.set(ns, docs);
      const at = docs.findIndex((d) => EJSON.stringify(d._id) === EJSON.stringify(id));
      if (doc && at >= 0) docs[at] = doc;
      else if (doc) docs.push(doc);
      else if (at >= 0) docs.splice(at, 1);
      this.lastChange.set(key, this.clock + 1);
    }
    for (const [ns, docs] of next) {
      const coll = this.collection(ns);
      for (const { doc } of txn.finals.values()) {
        if (doc && this.duplicate({ ...coll, docs }, ns, doc, doc)) {
          this.abort(txn);
          throw writeConflict();
        }
      }
    }
    for (const [ns, docs] of next) this.collection(ns).docs = docs;
    this.clock += 1;
    this.release(txn);
    this.transactions.delete(session);
    this.committed.set(session, txnNumber);
    return { ok: 1 };
  }

  private expired(txn: Transaction): boolean {
    return Date.now() - txn.openedAt > this.transactionLifetimeLimitMs;
  }

  private abort(txn: Transaction): void {
    txn.aborted = true;
    txn.views.clear();
    txn.finals.clear();
    this.release(txn);
  }

  private release(txn: Transaction): void {
    for (const key of txn.locks) if (this.locks.get(key) === txn) this.locks.delete(key);
    txn.locks.clear();
  }

  private endSession(session: string): void {
    const txn = this.transactions.get(session);
    if (txn && !txn.aborted) this.abort(txn);
    this.transactions.delete(session);
  }

  /** Takes the locks a transaction's write needs, or fails it with WriteConflict. */
  private claim(txn: Transaction, ns: string, coll: Collection, doc: Document): void {
    const documentKey = docKey(ns, doc._id);
    if ((this.lastChange.get(documentKey) ?? 0) > txn.startedAt) throw writeConflict();
    const keys = [documentKey];
    for (const index of coll.indexes) {
      if (!index.unique || index.name === '_id_') continue;
      const key = indexKey(index, doc);
      if (key !== undefined) keys.push(`${ns}|${index.name}|${key}`);
    }
    for (const key of keys) {
      const owner = this.locks.get(key);
      // A server reaps transactions past their lifetime; here, when one is in another's way.
      if (owner && owner !== txn && this.expired(owner)) this.abort(owner);
      else if (owner && owner !== txn) throw writeConflict();
    }
    for (const key of keys) {
      this.locks.set(key, txn);
      txn.locks.add(key);
    }
  }

  /** The documents a command sees: the transaction's copy inside one, else the committed ones. */
  private view(ns: string): Document[] {
    const txn = this.active;
    if (!txn) return this.collection(ns).docs;
    let docs = txn.views.get(ns);
    if (!docs) {
      docs = [...(this.collections.get(ns)?.docs ?? [])];
      txn.views.set(ns, docs);
    }
    return docs;
  }

  // ---- writes --------------------------------------------------------------------------------

  private insert(ns: string, documents: Document[], ordered: boolean): Reply {
    const coll = this.collection(ns);
    const writeErrors: Document[] = [];
    let n = 0;
    for (const [index, doc] of documents.entries()) {
      const stored = doc._id === undefined ? { _id: new ObjectId(), ...doc } : doc;
      const dup = this.duplicate({ ...coll, docs: this.view(ns) }, ns, stored);
      if (dup) {
        writeErrors.push({ index, ...dup });
        if (ordered) break;
        continue;
      }
      this.put(coll, ns, undefined, stored);
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
        const targets = match(this.view(ns), stmt.q ?? {});
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
        // A write conflict fails the command (and its transaction), not one statement.
        if (!(error instanceof CommandError) || error.code === WRITE_CONFLICT) throw error;
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
      const targets = match(this.view(ns), stmt.q ?? {});
      for (const doc of stmt.limit === 1 ? targets.slice(0, 1) : targets) {
        this.put(coll, ns, doc, undefined);
        n++;
      }
    }
    return { n, ok: 1 };
  }

  private findAndModify(ns: string, body: Document): Reply {
    const coll = this.collection(ns);
    const found = sortDocs(match(this.view(ns), body.query ?? {}), body.sort ?? {})[0];
    const view = (doc: Document | undefined) => (doc ? (project([doc], body.fields)[0] ?? null) : null);
    if (body.remove) {
      if (found) this.put(coll, ns, found, undefined);
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
    const dup = this.duplicate({ ...coll, docs: this.view(ns) }, ns, after, before);
    if (dup) throw new CommandError(11000, 'DuplicateKey', String(dup.errmsg), dup);
    this.put(coll, ns, before, after);
  }

  /** The one place documents change: in the transaction's copy (locked), or committed. */
  private put(coll: Collection, ns: string, before: Document | undefined, after: Document | undefined): void {
    const txn = this.active;
    const changed = (after ?? before) as Document;
    if (txn) {
      if (before) this.claim(txn, ns, coll, before);
      if (after) this.claim(txn, ns, coll, after);
    }
    const docs = this.view(ns);
    if (before && after) docs[docs.indexOf(before)] = after;
    else if (after) docs.push(after);
    else if (before) docs.splice(docs.indexOf(before), 1);
    const key = docKey(ns, changed._id);
    if (txn) txn.finals.set(key, { ns, id: changed._id, doc: after });
    else this.lastChange.set(key, ++this.clock);
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
    return this.active ? this.view(ns) : (this.collections.get(ns)?.docs ?? []);
  }
}

// ---- helpers ---------------------------------------------------------------------------------

function sessionKey(body: Document): string {
  return EJSON.stringify(body.lsid ?? null);
}

function docKey(ns: string, id: unknown): string {
  return `${ns}|${EJSON.stringify(id ?? null)}`;
}

function numberOf(value: unknown): number {
  return typeof value === 'number' ? value : Number(String(value));
}

const WRITE_CONFLICT = 112;

function writeConflict(): CommandError {
  return new CommandError(
    WRITE_CONFLICT,
    'WriteConflict',
    'Write conflict during plan execution and yielding is disabled. :: Please retry your operation or multi-document transaction.',
    { errorLabels: ['TransientTransactionError'] },
  );
}

function noSuchTransaction(txnNumber: number): CommandError {
  return new CommandError(
    251,
    'NoSuchTransaction',
    `Transaction with { txnNumber: ${txnNumber} } has been aborted.`,
    { errorLabels: ['TransientTransactionError'] },
  );
}

function errorReply(error: unknown): Reply {
  if (error instanceof CommandError)
    return { ok: 0, errmsg: error.message, code: error.code, codeName: error.codeName, ...error.extra };
  return { ok: 0, errmsg: String((error as Error).message ?? error), code: 8, codeName: 'UnknownError' };
}

function getPath(doc: Document, path: string): unknown {
  let value: unknown = doc;
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Document)[part];
  }
  return value;
}

/**
 * Each index's key of each document, computed once: stored documents are never changed in place
 * (an update stores a new document), so a unique-index check costs a lookup per document, not a
 * serialisation.
 */
const indexKeys = new WeakMap<IndexSpec, WeakMap<Document, string | undefined>>();

function indexKey(index: IndexSpec, doc: Document): string | undefined {
  let keys = indexKeys.get(index);
  if (!keys) {
    keys = new WeakMap();
    indexKeys.set(index, keys);
  }
  if (keys.has(doc)) return keys.get(doc);
  const key = computeIndexKey(index, doc);
  keys.set(doc, key);
  return key;
}

function computeIndexKey(index: IndexSpec, doc: Document): string | undefined {
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
