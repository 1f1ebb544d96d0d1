import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import type { Document } from 'mongodb';
import { MongoClient } from 'mongodb';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { redactUri } from '../../../src/adapters/store/mongo/mongoErrors.js';
import { type MongoStoreOptions, openMongoStore } from '../../../src/adapters/store/mongo/mongoStore.js';
import type { Logger } from '../../../src/logging/logger.js';
import type { TroupeStore } from '../../../src/ports/store.js';
import { FakeMongoEngine } from '../../support/fakeMongoEngine.js';
import { type FakeMongoServer, startFakeMongoServer } from '../../support/fakeMongoServer.js';
import { describeStoreContract } from '../../support/storeContract.js';

/** A closed store's error, or a failure if the promise resolved. */
async function rejection(promise: Promise<unknown>): Promise<Error & { code?: string; retryable?: boolean }> {
  try {
    await promise;
  } catch (error) {
    return error as Error & { code?: string; retryable?: boolean };
  }
  throw new Error('expected a rejection');
}

/** A pino logger that keeps its lines in memory. */
function memoryLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { logger: pino<never>({ level: 'debug' }, stream), lines };
}

/** A port nothing listens on (a server started and closed again). */
async function closedPort(): Promise<number> {
  const server = await startFakeMongoServer();
  await server.close();
  return server.port;
}

describe('MongoDB store against the fake wire server (standalone)', () => {
  let server: FakeMongoServer;
  const database = 'troupe_contract';
  const open = (extra: Partial<MongoStoreOptions> = {}) =>
    openMongoStore({ uri: server.uri, database, serverSelectionTimeoutMS: 2_000, ...extra });

  beforeAll(async () => {
    server = await startFakeMongoServer();
  });

  afterAll(async () => {
    await server.close();
  });

  describeStoreContract('mongodb (fake wire server)', () => open(), { reopen: () => open() });

  it('creates its indexes on start: unique where uniqueness is promised, TTL on expiresAt', async () => {
    const store = await open();
    await store.close();
    const indexes = (name: string) =>
      (server.engine.collections.get(`${database}.${name}`)?.indexes ?? []).filter((i) => i.name !== '_id_');
    expect(indexes('documents')).toEqual(
      expect.arrayContaining([
        { name: 'collection_key', key: { collection: 1, key: 1 }, unique: true },
        { name: 'expiresAt_ttl', key: { expiresAt: 1 }, expireAfterSeconds: 0 },
      ]),
    );
    expect(indexes('memory')).toEqual([
      { name: 'namespace_key_version', key: { namespace: 1, key: 1, version: -1 }, unique: true },
    ]);
    expect(indexes('processed')).toEqual([{ name: 'scope_id', key: { scope: 1, id: 1 }, unique: true }]);
    expect(indexes('agent_event_logs')).toEqual([
      { name: 'stream_seq', key: { stream: 1, seq: 1 }, unique: true },
    ]);
    expect(indexes('history')).toEqual([{ name: 'channelId_at', key: { channelId: 1, at: 1, order: 1 } }]);
    expect(indexes('outbox').map((i) => i.name)).toEqual(['pending_recordedAt', 'expiresAt_ttl']);
    // Opening again finds the same indexes and changes nothing.
    await (await open()).close();
    expect(indexes('memory')).toHaveLength(1);
  });

  it('sets expiresAt from idleExpiry so the TTL index removes idle documents', async () => {
    const store = await open({ idleExpiry: { sessions: 60_000 } });
    try {
      const collection = `sessions`;
      const key = randomUUID();
      await store.documents.put(collection, key, { user: 'ada' }, { at: 1_000 });
      await store.documents.put('kept', key, 1, { at: 1_000 });
      const raw = server.engine.collections
        .get(`${database}.documents`)
        ?.docs.find((d: Document) => d.key === key && d.collection === collection);
      expect(raw?.expiresAt).toEqual(new Date(61_000));
      server.engine.expireTtl(61_000);
      expect(await store.documents.get(collection, key)).toBeUndefined();
      expect(await store.documents.get('kept', key)).toBeDefined();
    } finally {
      await store.close();
    }
  });

  it('sends only commands the fake answers (the contract ran through it before this test)', async () => {
    const store = await open();
    await store.close();
    const seen = new Set(server.commands);
    const answered = new Set([
      'ismaster',
      'hello',
      'createIndexes',
      'insert',
      'find',
      'getMore',
      'killCursors',
    ]);
    for (const name of ['update', 'delete', 'findAndModify', 'endSessions']) answered.add(name);
    expect([...seen].filter((name) => !answered.has(name))).toEqual([]);
    for (const name of [
      'ismaster',
      'hello',
      'createIndexes',
      'insert',
      'find',
      'update',
      'delete',
      'findAndModify',
    ]) {
      expect(seen, name).toContain(name);
    }
  });

  describe('putMany without transactions (compare-and-set, then roll back)', () => {
    /** Runs `interfere` once, just before the first command named `name` reaches the fake. */
    function interfereBefore(name: string, interfere: () => void): void {
      const run = server.engine.run.bind(server.engine);
      let done = false;
      server.engine.run = (db, body) => {
        if (!done && Object.keys(body)[0] === name) {
          done = true;
          interfere();
        }
        return run(db, body);
      };
    }

    /** Another writer, straight into the fake's state (past any interference hook). */
    const raw = (body: Document) => FakeMongoEngine.prototype.run.call(server.engine, database, body);

    afterEach(() => {
      Reflect.deleteProperty(server.engine, 'run');
    });

    it('rolls back the writes it made when a later one loses to another writer', async () => {
      const store = await open();
      const c = `batch-${randomUUID()}`;
      try {
        await store.documents.put(c, 'b', 'b1', { at: 1 });
        await store.documents.put(c, 'c', 'c1', { at: 1 });
        // After the batch read versions, someone else writes c.
        interfereBefore('insert', () =>
          raw({
            update: 'documents',
            updates: [{ q: { collection: c, key: 'c' }, u: { $inc: { version: 1 } } }],
          }),
        );
        const error = await rejection(
          store.documents.putMany(c, [
            { key: 'a', value: 'a1' },
            { key: 'b', value: 'b2', expectedVersion: 1 },
            { key: 'c', value: 'c2' },
          ]),
        );
        expect(error.code).toBe('TROUPE_STORE_CONFLICT');
        expect(error.message).toContain(`${c}/c`);
        expect(await store.documents.get(c, 'a')).toBeUndefined();
        expect(await store.documents.get(c, 'b')).toMatchObject({ value: 'b1', version: 1, updatedAt: 1 });
        expect((await store.documents.get(c, 'c'))?.version).toBe(2);
      } finally {
        await store.close();
      }
    });

    it('batch: restores a document it deleted and removes one it created when a later write loses', async () => {
      const store = await open();
      const inbox = `inbox-${randomUUID()}`;
      const emails = `emails-${randomUUID()}`;
      try {
        await store.documents.put(inbox, 'i1', { status: 'pending' }, { at: 1 });
        await store.documents.put(emails, 'e1', 'v1', { at: 1 });
        // After the batch read versions, someone else writes e1.
        interfereBefore('delete', () =>
          raw({
            update: 'documents',
            updates: [{ q: { collection: emails, key: 'e1' }, u: { $inc: { version: 1 } } }],
          }),
        );
        const error = await rejection(
          store.documents.batch([
            { op: 'put', collection: inbox, key: 'answered', value: 'yes', expectedVersion: 0 },
            { op: 'delete', collection: inbox, key: 'i1' },
            { op: 'put', collection: emails, key: 'e1', value: 'v2', expectedVersion: 1 },
          ]),
        );
        expect(error.code).toBe('TROUPE_STORE_CONFLICT');
        expect(error.message).toContain(`${emails}/e1`);
        expect(await store.documents.get(inbox, 'answered')).toBeUndefined();
        expect(await store.documents.get(inbox, 'i1')).toMatchObject({
          value: { status: 'pending' },
          version: 1,
          updatedAt: 1,
        });
        expect((await store.documents.get(emails, 'e1'))?.version).toBe(2);
      } finally {
        await store.close();
      }
    });

    it('says which documents stayed written when a rollback is impossible', async () => {
      const store = await open();
      const c = `batch-${randomUUID()}`;
      try {
        await store.documents.put(c, 'b', 'b1');
        // Another writer changes b between the read and the write, and then a, which the batch
        // has just created, so the rollback of a no longer matches.
        interfereBefore('insert', () =>
          raw({
            update: 'documents',
            updates: [{ q: { collection: c, key: 'b' }, u: { $inc: { version: 1 } } }],
          }),
        );
        interfereBefore('update', () =>
          raw({
            update: 'documents',
            updates: [{ q: { collection: c, key: 'a' }, u: { $inc: { version: 1 } } }],
          }),
        );
        const error = await rejection(
          store.documents.putMany(c, [
            { key: 'a', value: 'a1' },
            { key: 'b', value: 'b2' },
          ]),
        );
        expect(error.code).toBe('TROUPE_STORE_CONFLICT');
        expect(error.message).toContain('could not be rolled back');
        expect(error.message).toContain(`"${c}/a"`);
      } finally {
        await store.close();
      }
    });
  });

  describe('failures', () => {
    it('reports an unreachable server quickly as TROUPE_STORE_UNAVAILABLE, naming the host but never the password', async () => {
      const port = await closedPort();
      const { logger, lines } = memoryLogger();
      const started = Date.now();
      const error = await rejection(
        openMongoStore({
          uri: `mongodb://troupe:s3cret-Pa55@127.0.0.1:${port}/?authSource=admin`,
          serverSelectionTimeoutMS: 150,
          connectAttempts: 2,
          logger,
        }),
      );
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(error.code).toBe('TROUPE_STORE_UNAVAILABLE');
      expect(error.retryable).toBe(true);
      expect(error.message).toContain(`127.0.0.1:${port}`);
      expect(error.message).not.toContain('s3cret');
      expect(JSON.stringify((error as { details?: unknown }).details)).not.toContain('s3cret');
      expect(lines.length).toBeGreaterThan(0); // the retry was logged
      expect(lines.join('\n')).not.toContain('s3cret');
    });

    it('reports a server that went away as TROUPE_STORE_UNAVAILABLE (retryable), and works again when it is back', async () => {
      const own = await startFakeMongoServer();
      const store = await openMongoStore({ uri: own.uri, serverSelectionTimeoutMS: 2_000 });
      try {
        await store.documents.put('c', 'k', 1);
        own.failNext('find', { closeConnection: true, times: 2 });
        const error = await rejection(store.documents.get('c', 'k'));
        expect(error.code).toBe('TROUPE_STORE_UNAVAILABLE');
        expect(error.retryable).toBe(true);
        expect(error.message).toContain(`127.0.0.1:${own.port}`);
        expect((await store.documents.get('c', 'k'))?.value).toBe(1);
      } finally {
        await store.close();
        await own.close();
      }
    });

    it.each([
      ['the store option', (uri: string) => ({ uri, socketTimeoutMS: 200 })],
      [
        'the connection string (the store default does not override it)',
        (uri: string) => ({ uri: `${uri}/?socketTimeoutMS=200` }),
      ],
    ])(
      'fails an operation the server never answers (connection left open) after socketTimeoutMS from %s, retryable, and works again',
      async (_how, options) => {
        const own = await startFakeMongoServer();
        // A real-time limit: the server is external, and this one has stopped answering.
        const store = await openMongoStore({ serverSelectionTimeoutMS: 2_000, ...options(own.uri) });
        try {
          await store.documents.put('c', 'k', 1);
          own.failNext('update', { hang: true });
          own.failNext('findAndModify', { hang: true });
          const error = await rejection(store.documents.put('c', 'k', 2));
          expect(error.code).toBe('TROUPE_STORE_UNAVAILABLE');
          expect(error.retryable).toBe(true);
          expect(error.message).toContain(`127.0.0.1:${own.port}`);
          expect(error.message).toContain('timed out');
          // Not applied (the server never ran it), and the next write goes through on a new connection.
          expect((await store.documents.get('c', 'k'))?.value).toBe(1);
          await store.documents.put('c', 'k', 3);
          expect((await store.documents.get('c', 'k'))?.value).toBe(3);
        } finally {
          await store.close();
          await own.close();
        }
      },
      // Far above the 200 ms asked for, far below the store's 30 s default (which must not apply).
      15_000,
    );

    it('maps a command the server refuses to a non-retryable TROUPE_STORE_UNAVAILABLE', async () => {
      const own = await startFakeMongoServer();
      const store = await openMongoStore({ uri: own.uri, serverSelectionTimeoutMS: 300 });
      try {
        own.failNext('insert', { reply: { code: 13, codeName: 'Unauthorized', errmsg: 'not authorized' } });
        const error = await rejection(store.processed.markProcessed('s', 'id', 1));
        expect(error.code).toBe('TROUPE_STORE_UNAVAILABLE');
        expect(error.retryable).toBe(false);
        expect(error.message).toContain('not authorized');
      } finally {
        await store.close();
        await own.close();
      }
    });

    it('refuses a malformed connection string without echoing its password', async () => {
      const error = await rejection(openMongoStore({ uri: 'mongodb://ada:hunter2@/nohost' }));
      expect(error.code).toBe('TROUPE_CONFIG_INVALID');
      expect(error.message).not.toContain('hunter2');
    });

    it('refuses a timeout or count that is not a usable number before it connects, naming each', async () => {
      const error = await rejection(
        openMongoStore({
          uri: 'mongodb://ada:hunter2@127.0.0.1:1',
          socketTimeoutMS: Number.NaN,
          serverSelectionTimeoutMS: Number.POSITIVE_INFINITY,
          connectAttempts: 0,
          historyPerChannel: 2.5,
          outboxRetentionMs: -1,
        }),
      );
      expect(error.code).toBe('TROUPE_CONFIG_INVALID');
      for (const part of [
        'socketTimeoutMS=NaN',
        'serverSelectionTimeoutMS=Infinity',
        'connectAttempts=0',
        'historyPerChannel=2.5',
        'outboxRetentionMs=-1',
      ])
        expect(error.message).toContain(part);
      expect(error.message).not.toContain('hunter2');
      // 0 is a socket timeout the driver knows: wait forever.
      const fine = await rejection(
        openMongoStore({
          uri: 'mongodb://127.0.0.1:1',
          socketTimeoutMS: 0,
          serverSelectionTimeoutMS: 50,
          connectAttempts: 1,
        }),
      );
      expect(fine.code).toBe('TROUPE_STORE_UNAVAILABLE');
    });

    it('redacts passwords from connection strings', () => {
      expect(redactUri('mongodb://ada:p%40ss@db1:27017,db2/x?tls=true')).toBe(
        'mongodb://ada:***@db1:27017,db2/x?tls=true',
      );
      expect(redactUri('mongodb+srv://ada@cluster0.example.net')).toBe(
        'mongodb+srv://ada@cluster0.example.net',
      );
      expect(redactUri('mongodb://localhost')).toBe('mongodb://localhost');
    });

    it('leaves a client it was given open when it closes', async () => {
      const own = await startFakeMongoServer();
      const client = new MongoClient(own.uri, { serverSelectionTimeoutMS: 300 });
      try {
        const store = await openMongoStore({ client });
        await store.documents.put('c', 'k', 1);
        await store.close();
        expect(await client.db('admin').command({ ping: 1 })).toMatchObject({ ok: 1 });
      } finally {
        await client.close();
        await own.close();
      }
    });
  });
});

describe('MongoDB store against the fake wire server (replica set: transactions)', () => {
  let server: FakeMongoServer;
  const open = () =>
    openMongoStore({ uri: server.uri, database: 'troupe_rs', serverSelectionTimeoutMS: 2_000 });

  beforeAll(async () => {
    server = await startFakeMongoServer({ replicaSet: 'rs0' });
  });

  afterAll(async () => {
    await server.close();
  });

  describeStoreContract('mongodb (fake replica set)', open, { reopen: open });

  it('writes a batch in one transaction, and aborts it on a conflict', async () => {
    const store = await open();
    const c = `batch-${randomUUID()}`;
    try {
      server.commands.length = 0;
      expect(
        await store.documents.putMany(c, [
          { key: 'a', value: 1 },
          { key: 'b', value: 2 },
        ]),
      ).toEqual([1, 1]);
      expect(server.commands).toContain('commitTransaction');
      const error = await rejection(
        store.documents.putMany(c, [
          { key: 'a', value: 10, expectedVersion: 1 },
          { key: 'b', value: 20, expectedVersion: 5 },
        ]),
      );
      expect(error.code).toBe('TROUPE_STORE_CONFLICT');
      expect(server.commands).toContain('abortTransaction');
      expect((await store.documents.get(c, 'a'))?.value).toBe(1);
    } finally {
      await store.close();
    }
  });
});

const realUri = process.env.MONGODB_URI;

describe.skipIf(!realUri)('MongoDB store against a real server (MONGODB_URI)', () => {
  const database = `troupe_test_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
  const open = (): Promise<TroupeStore> => openMongoStore({ uri: realUri as string, database });

  afterAll(async () => {
    const client = new MongoClient(realUri as string);
    try {
      await client.db(database).dropDatabase();
    } finally {
      await client.close();
    }
  });

  describeStoreContract(`mongodb (real server, database ${database})`, open, { reopen: open });
});
