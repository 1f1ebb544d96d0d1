/**
 * What Troupe's MongoDB adapter depends on in transactions and retryable writes, checked with the
 * real driver: first against the fake replica set, and against a real server as well when
 * MONGODB_URI is set (a replica set: transactions need one), together with two processes racing
 * batches over the same documents. Then the adapter itself, where the fake can inject what a real
 * server cannot be made to do on cue (a concurrent writer mid-batch, a refused write, a reply lost
 * after the write was applied).
 */
import { randomUUID } from 'node:crypto';
import { type Document, MongoClient, MongoServerError } from 'mongodb';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { openMongoStore } from '../../src/adapters/store/mongo/mongoStore.js';
import type { TroupeStore } from '../../src/ports/store.js';
import { FakeMongoEngine } from '../support/fakeMongoEngine.js';
import { type FakeMongoServer, startFakeMongoServer } from '../support/fakeMongoServer.js';

async function serverError(promise: Promise<unknown>): Promise<MongoServerError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof MongoServerError) return error;
    throw error;
  }
  throw new Error('expected a server error');
}

/** The transaction rules, for any server reachable at `uri()`. */
function describeTransactions(label: string, uri: () => string) {
  describe(`transactions (${label})`, () => {
    let client: MongoClient;
    const database = `troupe_txn_${randomUUID().replaceAll('-', '').slice(0, 10)}`;
    const coll = () => client.db(database).collection<Document>('things');

    beforeAll(async () => {
      client = new MongoClient(uri(), { serverSelectionTimeoutMS: 5_000 });
      await client.connect();
      await coll().insertOne({ _id: 'seed' as never, n: 0 });
    });
    afterAll(async () => {
      await client.db(database).dropDatabase();
      await client.close();
    });

    it('hides uncommitted writes from other sessions, shows them on commit, drops them on abort', async () => {
      const session = client.startSession();
      try {
        session.startTransaction();
        await coll().insertOne({ _id: 'a' as never, n: 1 }, { session });
        await coll().updateOne({ _id: 'seed' as never }, { $set: { n: 5 } }, { session });
        expect(await coll().findOne({ _id: 'a' as never }, { session })).toMatchObject({ n: 1 });
        expect(await coll().findOne({ _id: 'a' as never })).toBeNull();
        expect(await coll().findOne({ _id: 'seed' as never })).toMatchObject({ n: 0 });
        await session.commitTransaction();
        expect(await coll().findOne({ _id: 'a' as never })).toMatchObject({ n: 1 });
        expect(await coll().findOne({ _id: 'seed' as never })).toMatchObject({ n: 5 });

        session.startTransaction();
        await coll().insertOne({ _id: 'b' as never, n: 2 }, { session });
        await session.abortTransaction();
        expect(await coll().findOne({ _id: 'b' as never })).toBeNull();
      } finally {
        await session.endSession();
      }
    });

    it('aborts a transaction whose write failed: its commit answers NoSuchTransaction (251)', async () => {
      const session = client.startSession();
      try {
        session.startTransaction();
        await coll().insertOne({ _id: 'c' as never, n: 1 }, { session });
        const duplicate = await serverError(coll().insertOne({ _id: 'seed' as never, n: 9 }, { session }));
        expect(duplicate.code).toBe(11000);
        const commit = await serverError(session.commitTransaction());
        expect(commit.code).toBe(251);
        expect(await coll().findOne({ _id: 'c' as never })).toBeNull();
      } finally {
        await session.endSession();
      }
    });

    it('gives the second of two transactions writing one document WriteConflict (112), labelled transient', async () => {
      const first = client.startSession();
      const second = client.startSession();
      try {
        first.startTransaction();
        second.startTransaction();
        await coll().updateOne({ _id: 'seed' as never }, { $inc: { n: 1 } }, { session: first });
        const conflict = await serverError(
          coll().updateOne({ _id: 'seed' as never }, { $inc: { n: 100 } }, { session: second }),
        );
        expect(conflict.code).toBe(112);
        expect(conflict.hasErrorLabel('TransientTransactionError')).toBe(true);
        await second.abortTransaction().catch(() => undefined);
        const before = (await coll().findOne({ _id: 'seed' as never }))?.n as number;
        await first.commitTransaction();
        expect((await coll().findOne({ _id: 'seed' as never }))?.n).toBe(before + 1);
      } finally {
        await first.endSession();
        await second.endSession();
      }
    });

    it('retries a transaction that met a conflict (withTransaction), and the retry sees the other write', async () => {
      const session = client.startSession();
      let attempts = 0;
      try {
        await session.withTransaction(async () => {
          attempts += 1;
          const seed = await coll().findOne({ _id: 'seed' as never }, { session });
          // Another writer commits in between, the first time only.
          if (attempts === 1) await coll().updateOne({ _id: 'seed' as never }, { $set: { by: 'other' } });
          await coll().updateOne(
            { _id: 'seed' as never },
            { $set: { n: (seed?.n as number) + 10 } },
            { session },
          );
        });
      } finally {
        await session.endSession();
      }
      expect(attempts).toBe(2);
      expect(await coll().findOne({ _id: 'seed' as never })).toMatchObject({ by: 'other' });
    });
  });
}

/** Two processes (two stores, two clients) writing batches over the same documents at once. */
function describeConcurrentBatches(label: string, uri: () => string) {
  describe(`concurrent putMany from two processes (${label})`, () => {
    const database = `troupe_race_${randomUUID().replaceAll('-', '').slice(0, 10)}`;
    let one: TroupeStore;
    let two: TroupeStore;

    beforeAll(async () => {
      const open = () => openMongoStore({ uri: uri(), database, serverSelectionTimeoutMS: 5_000 });
      [one, two] = await Promise.all([open(), open()]);
    });
    afterAll(async () => {
      const client = new MongoClient(uri());
      try {
        await client.db(database).dropDatabase();
      } finally {
        await client.close();
        await Promise.all([one?.close(), two?.close()]);
      }
    });

    /** Both batches start from a and b at version 1; they write them in opposite orders. */
    async function race(c: string, expectedVersion?: number) {
      await one.documents.putMany(c, [
        { key: 'a', value: 'start' },
        { key: 'b', value: 'start' },
      ]);
      const batch = (who: string, keys: string[]) =>
        keys.map((key) => ({ key, value: who, ...(expectedVersion ? { expectedVersion } : {}) }));
      const results = await Promise.allSettled([
        one.documents.putMany(c, batch('one', ['a', 'b'])),
        two.documents.putMany(c, batch('two', ['b', 'a'])),
      ]);
      const a = await one.documents.get(c, 'a');
      const b = await one.documents.get(c, 'b');
      return { results, a, b };
    }

    it('applies both unconditional batches, one after the other, never interleaved', async () => {
      const { results, a, b } = await race(`race-${randomUUID()}`);
      // The loser of the write conflict was retried in a new transaction, after the winner.
      const versions = results.map((r) => (r.status === 'fulfilled' ? r.value : r.reason));
      expect(versions).toEqual(
        expect.arrayContaining([
          [2, 2],
          [3, 3],
        ]),
      );
      const last = versions[0]?.[0] === 3 ? 'one' : 'two';
      expect([a?.value, b?.value]).toEqual([last, last]);
      expect([a?.version, b?.version]).toEqual([3, 3]);
    });

    it('lets exactly one of two batches expecting the same versions win, and keeps all of it', async () => {
      const { results, a, b } = await race(`race-${randomUUID()}`, 1);
      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r) => r.status === 'rejected');
      expect(won.map((r) => r.value)).toEqual([[2, 2]]);
      expect(lost.map((r) => (r.reason as { code?: string }).code)).toEqual(['TROUPE_STORE_CONFLICT']);
      const winner = results[0]?.status === 'fulfilled' ? 'one' : 'two';
      expect([a?.value, b?.value]).toEqual([winner, winner]);
      expect([a?.version, b?.version]).toEqual([2, 2]);
    });
  });
}

describe('against the fake replica set', () => {
  let server: FakeMongoServer;
  beforeAll(async () => {
    server = await startFakeMongoServer({ replicaSet: 'rs0' });
  });
  afterAll(async () => {
    await server.close();
  });

  describeTransactions('fake replica set', () => server.uri);
  describeConcurrentBatches('fake replica set', () => server.uri);

  describe('injected failures', () => {
    it('aborts the transaction of a statement whose failure was injected: its commit answers 251', async () => {
      const client = new MongoClient(server.uri, { serverSelectionTimeoutMS: 2_000 });
      await client.connect();
      const session = client.startSession();
      try {
        const coll = client.db('troupe_injected').collection<Document>('things');
        session.startTransaction();
        await coll.insertOne({ _id: 'first' as never }, { session });
        server.failNext('insert', {
          reply: { code: 13, codeName: 'Unauthorized', errmsg: 'not authorized' },
        });
        expect((await serverError(coll.insertOne({ _id: 'second' as never }, { session }))).code).toBe(13);
        expect((await serverError(session.commitTransaction())).code).toBe(251);
        expect(await coll.findOne({ _id: 'first' as never })).toBeNull();
      } finally {
        await session.endSession();
        await client.close();
      }
    });
  });

  describe('retryable writes', () => {
    it('applies a write once when its reply was lost and the driver retried it', async () => {
      const client = new MongoClient(server.uri, { serverSelectionTimeoutMS: 2_000 });
      await client.connect();
      try {
        const coll = client.db('troupe_retry').collection<Document>('counters');
        server.failNext('findAndModify', { afterApply: true });
        const row = await coll.findOneAndUpdate(
          { _id: 'c' as never },
          { $inc: { value: 1 } },
          { upsert: true, returnDocument: 'after' },
        );
        expect(row?.value).toBe(1);
        expect((await coll.findOne({ _id: 'c' as never }))?.value).toBe(1);
        expect(server.commands.filter((c) => c === 'findAndModify').length).toBeGreaterThanOrEqual(2);
      } finally {
        await client.close();
      }
    });
  });

  describe('the adapter', () => {
    const database = 'troupe_adapter_txn';
    const open = () => openMongoStore({ uri: server.uri, database, serverSelectionTimeoutMS: 2_000 });
    /** Another writer, straight into the fake's committed state (outside any transaction). */
    const raw = (body: Document) => FakeMongoEngine.prototype.run.call(server.engine, database, body);

    afterEach(() => {
      Reflect.deleteProperty(server.engine, 'run');
    });

    /** Runs `interfere` once, just before the first command named `name` inside a transaction. */
    function interfereInTransaction(name: string, interfere: () => void): void {
      const run = server.engine.run.bind(server.engine);
      let done = false;
      server.engine.run = (db, body) => {
        if (!done && Object.keys(body)[0] === name && body.autocommit === false) {
          done = true;
          interfere();
        }
        return run(db, body);
      };
    }

    it('putMany leaves nothing of a batch whose later write loses to another writer mid-transaction', async () => {
      const store = await open();
      const c = `batch-${randomUUID()}`;
      try {
        await store.documents.put(c, 'b', 'b1', { at: 1 });
        // The batch has read b at version 1; another writer moves it on before the batch writes.
        interfereInTransaction('insert', () =>
          raw({
            update: 'documents',
            updates: [{ q: { collection: c, key: 'b' }, u: { $inc: { version: 1 } } }],
          }),
        );
        await expect(
          store.documents.putMany(c, [
            { key: 'a', value: 'a1' },
            { key: 'b', value: 'b2', expectedVersion: 1 },
          ]),
        ).rejects.toMatchObject({ code: 'TROUPE_STORE_CONFLICT' });
        // Had the insert of a gone outside the transaction, it would be here now.
        expect(await store.documents.get(c, 'a')).toBeUndefined();
        expect((await store.documents.get(c, 'b'))?.version).toBe(2);
        expect(server.commands).toContain('abortTransaction');
      } finally {
        await store.close();
      }
    });

    it('putMany retries a batch overtaken between its read and its write, instead of refusing it', async () => {
      const store = await open();
      const c = `batch-${randomUUID()}`;
      try {
        await store.documents.put(c, 'a', 'a1', { at: 1 });
        // The batch has read a at version 1; another writer moves it to 2 before the batch writes.
        interfereInTransaction('update', () =>
          raw({
            update: 'documents',
            updates: [
              { q: { collection: c, key: 'a' }, u: { $set: { json: '"other"' }, $inc: { version: 1 } } },
            ],
          }),
        );
        // No expectations: the write conflict sends it round again, and the retry reads version 2.
        expect(
          await store.documents.putMany(c, [
            { key: 'a', value: 'a3' },
            { key: 'b', value: 'b1' },
          ]),
        ).toEqual([3, 1]);
        expect(await store.documents.get(c, 'a')).toMatchObject({ value: 'a3', version: 3 });
        expect(await store.documents.get(c, 'b')).toMatchObject({ value: 'b1', version: 1 });
      } finally {
        await store.close();
      }
    });

    it('putMany leaves nothing of a batch when the server refuses one of its writes', async () => {
      const store = await open();
      const c = `batch-${randomUUID()}`;
      try {
        await store.documents.put(c, 'b', 'b1', { at: 1 });
        // The insert of a goes through; the update of b is refused (and aborts the transaction).
        server.failNext('update', {
          reply: { code: 13, codeName: 'Unauthorized', errmsg: 'not authorized' },
        });
        await expect(
          store.documents.putMany(c, [
            { key: 'a', value: 'a1' },
            { key: 'b', value: 'b2' },
          ]),
        ).rejects.toMatchObject({ code: 'TROUPE_STORE_UNAVAILABLE', retryable: false });
        expect(await store.documents.get(c, 'a')).toBeUndefined();
        expect(await store.documents.get(c, 'b')).toMatchObject({ value: 'b1', version: 1 });
      } finally {
        await store.close();
      }
    });

    it('putMany writes nothing another session can see before its commit', async () => {
      const store = await open();
      const c = `batch-${randomUUID()}`;
      const seen: unknown[] = [];
      try {
        // Just before the commit, a reader outside the transaction looks.
        const run = server.engine.run.bind(server.engine);
        server.engine.run = (db, body) => {
          if (Object.keys(body)[0] === 'commitTransaction')
            seen.push(...(raw({ find: 'documents', filter: { collection: c } }).cursor?.firstBatch ?? []));
          return run(db, body);
        };
        await store.documents.put(c, 'a', 'a1', { at: 1 });
        const before = raw({ find: 'documents', filter: { collection: c } }).cursor?.firstBatch;
        await store.documents.putMany(c, [
          { key: 'a', value: 'a2', expectedVersion: 1 },
          { key: 'b', value: 'b1' },
        ]);
        // Updates and inserts alike stayed inside the transaction until it committed.
        expect(seen).toEqual(before);
        expect((await store.documents.get(c, 'a'))?.value).toBe('a2');
        expect((await store.documents.get(c, 'b'))?.value).toBe('b1');
      } finally {
        await store.close();
      }
    });

    const response = (key: string) => ({
      idempotencyKey: key,
      channel: { kind: 'test', id: 'c' },
      text: 'hi',
      attachments: [],
      origin: { kind: 'answer' as const },
      preparedAt: 0,
    });

    /**
     * Each write of the adapter, with the reply to one of its commands lost after the server
     * applied it (the driver retries; a replica set answers the retry from the first run). `run`
     * calls `lose()` just before the operation and returns what the caller and a later read see.
     */
    const lostReplies: {
      what: string;
      command: string;
      run: (store: TroupeStore, id: string, lose: () => void) => Promise<unknown>;
      expected: unknown;
    }[] = [
      {
        what: 'events.increment counts once',
        command: 'findAndModify',
        run: async (store, id, lose) => {
          lose();
          return [await store.events.increment(id), await store.events.counter(id)];
        },
        expected: [1, 1],
      },
      {
        what: 'events.append takes one sequence number',
        command: 'findAndModify',
        run: async (store, id, lose) => {
          await store.events.append(id, { n: 1 }, 1);
          lose();
          await store.events.append(id, { n: 2 }, 2);
          const [first, second] = await store.events.read(id);
          // Counted twice, the second event would leave a gap in the sequence.
          return [second?.data.n, (second?.seq ?? 0) - (first?.seq ?? 0)];
        },
        expected: [2, 1],
      },
      {
        what: 'events.append logs the event once',
        command: 'insert',
        run: async (store, id, lose) => {
          lose();
          await store.events.append(id, { n: 1 }, 1);
          return (await store.events.read(id)).map((e) => e.data.n);
        },
        expected: [1],
      },
      {
        // A retry that met its own insert as someone else's would say `created: false`.
        what: 'outbox.record creates the entry once, and says this call created it',
        command: 'insert',
        run: async (store, id, lose) => {
          lose();
          const { created } = await store.outbox.record(response(id), 1);
          return [created, (await store.outbox.unsettled()).filter((e) => e.key === id).length];
        },
        expected: [true, 1],
      },
      {
        what: 'outbox.markPartSent notes the part once',
        command: 'update',
        run: async (store, id, lose) => {
          await store.outbox.record(response(id), 1);
          lose();
          await store.outbox.markPartSent(id, { index: 0, kind: 'text', messageId: 'm0', attempts: 1 });
          return (await store.outbox.get(id))?.sentParts.map((p) => p.messageId);
        },
        expected: ['m0'],
      },
      {
        what: 'outbox.settle settles once',
        command: 'update',
        run: async (store, id, lose) => {
          await store.outbox.record(response(id), 1);
          lose();
          await store.outbox.settle(id, { at: 2, sent: true });
          return [
            (await store.outbox.get(id))?.settled,
            (await store.outbox.unsettled()).some((e) => e.key === id),
          ];
        },
        expected: [{ at: 2, sent: true }, false],
      },
      {
        // A retry that met its own mark would say "already processed", and the message be dropped.
        what: 'processed.markProcessed tells the first caller it was first',
        command: 'insert',
        run: async (store, id, lose) => {
          lose();
          return [
            await store.processed.markProcessed('s', id, 1),
            await store.processed.markProcessed('s', id, 2),
          ];
        },
        expected: [true, false],
      },
      {
        what: 'memory.put writes one version',
        command: 'insert',
        run: async (store, id, lose) => {
          lose();
          const { version } = await store.memory.put('ns', id, 'v1');
          return [version, (await store.memory.history('ns', id)).length];
        },
        expected: [1, 1],
      },
      {
        what: 'documents.put writes one version',
        command: 'findAndModify',
        run: async (store, id, lose) => {
          lose();
          return [await store.documents.put('d', id, 'v1'), (await store.documents.get('d', id))?.version];
        },
        expected: [1, 1],
      },
      {
        // A retry that met its own write would report a conflict with itself.
        what: 'documents.put with an expected version succeeds, not conflicts with itself',
        command: 'update',
        run: async (store, id, lose) => {
          await store.documents.put('d', id, 'v1');
          lose();
          return [
            await store.documents.put('d', id, 'v2', { expectedVersion: 1 }),
            (await store.documents.get('d', id))?.version,
          ];
        },
        expected: [2, 2],
      },
      {
        what: 'documents.delete reports that it deleted',
        command: 'delete',
        run: async (store, id, lose) => {
          await store.documents.put('d', id, 'v1');
          lose();
          return [await store.documents.delete('d', id), await store.documents.get('d', id)];
        },
        expected: [true, undefined],
      },
      {
        what: 'history.append writes the line once',
        command: 'insert',
        run: async (store, id, lose) => {
          lose();
          await store.history.append({
            channelId: id,
            messageId: 'm1',
            at: 1,
            author: { kind: 'human', id: 'ada', name: 'Ada' },
            text: 'hello',
          });
          return (await store.history.recent(id, 10)).map((line) => line.messageId);
        },
        expected: ['m1'],
      },
      {
        // The driver retries the commit; a second transaction would write versions 2.
        what: 'documents.putMany commits the batch once (commit reply lost)',
        command: 'commitTransaction',
        run: async (store, id, lose) => {
          lose();
          const versions = await store.documents.putMany(id, [
            { key: 'a', value: 1 },
            { key: 'b', value: 2 },
          ]);
          return [versions, (await store.documents.list(id)).map((d) => d.version)];
        },
        expected: [
          [1, 1],
          [1, 1],
        ],
      },
      {
        // The transaction is retried as a whole: what the lost statement wrote must not stay.
        what: 'documents.putMany writes the batch once (a statement reply lost mid-transaction)',
        command: 'insert',
        run: async (store, id, lose) => {
          lose();
          const versions = await store.documents.putMany(id, [
            { key: 'a', value: 1 },
            { key: 'b', value: 2 },
          ]);
          return [versions, (await store.documents.list(id)).map((d) => d.version)];
        },
        expected: [
          [1, 1],
          [1, 1],
        ],
      },
    ];

    for (const c of lostReplies) {
      it(`${c.what} when the reply to its ${c.command} is lost after the write`, async () => {
        const store = await open();
        try {
          const lose = () => server.failNext(c.command, { afterApply: true });
          expect(await c.run(store, `lost-${randomUUID()}`, lose)).toEqual(c.expected);
        } finally {
          await store.close();
        }
      });
    }
  });
});

const realUri = process.env.MONGODB_URI;
describe.skipIf(!realUri)('against a real server (MONGODB_URI)', () => {
  describeTransactions('real server', () => realUri as string);
  describeConcurrentBatches('real server', () => realUri as string);
});

describe('a transaction whose client died (the fake replica set)', () => {
  it('holds its documents only for the lifetime limit: then the next writer gets them and the dead one is gone', async () => {
    const server = await startFakeMongoServer({ replicaSet: 'rs0', transactionLifetimeLimitMs: 60_000 });
    const client = new MongoClient(server.uri, { serverSelectionTimeoutMS: 5_000 });
    const things = client.db('lifetime').collection<Document>('things');
    // Only the server's clock is simulated; sockets keep real timers.
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      await things.insertOne({ _id: 'seed' as never, n: 0 });
      const dead = client.startSession();
      const next = client.startSession();
      dead.startTransaction();
      await things.updateOne({ _id: 'seed' as never }, { $set: { n: 1 } }, { session: dead });
      // Its client is killed here: it never commits or aborts.
      next.startTransaction();
      const blocked = await serverError(
        things.updateOne({ _id: 'seed' as never }, { $set: { n: 2 } }, { session: next }),
      );
      expect(blocked.code).toBe(112);
      await next.abortTransaction().catch(() => undefined);

      vi.advanceTimersByTime(60_001);
      next.startTransaction();
      await things.updateOne({ _id: 'seed' as never }, { $set: { n: 2 } }, { session: next });
      await next.commitTransaction();
      expect(await things.findOne({ _id: 'seed' as never })).toMatchObject({ n: 2 });
      // The reaped transaction cannot commit what it wrote.
      expect((await serverError(dead.commitTransaction())).code).toBe(251);
    } finally {
      vi.useRealTimers();
      await client.close();
      await server.close();
    }
  });
});
