import { MongoClient, MongoServerError } from 'mongodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeMongoServer, startFakeMongoServer } from '../support/fakeMongoServer.js';

describe('fake MongoDB wire server, through the official driver', () => {
  let server: FakeMongoServer;
  let client: MongoClient;

  beforeAll(async () => {
    server = await startFakeMongoServer();
    client = new MongoClient(server.uri, { serverSelectionTimeoutMS: 2_000 });
    await client.connect();
  });

  afterAll(async () => {
    await client.close();
    await server.close();
  });

  beforeEach(() => {
    server.dropAll();
  });

  it('answers the legacy handshake and pings', async () => {
    expect(await client.db('admin').command({ ping: 1 })).toMatchObject({ ok: 1 });
    expect(server.commands[0]?.toLowerCase()).toBe('ismaster');
  });

  it('inserts many (a document sequence) and finds them back in batches through getMore', async () => {
    const items = client.db('t').collection<{ n: number; label: string }>('items');
    await items.insertMany(Array.from({ length: 25 }, (_, n) => ({ n, label: `item ${n}` })));
    const before = server.commands.filter((c) => c === 'getMore').length;
    const found = await items
      .find({ n: { $gte: 5 } }, { batchSize: 4 })
      .sort({ n: -1 })
      .toArray();
    expect(found.map((d) => d.n)).toEqual(Array.from({ length: 20 }, (_, i) => 24 - i));
    expect(server.commands.filter((c) => c === 'getMore').length - before).toBe(4);
    const page = await items
      .find({}, { projection: { _id: 0, n: 1 } })
      .sort({ n: 1 })
      .skip(3) // the cursor option (skip three documents), not a skipped test
      .limit(2)
      .toArray();
    expect(page).toEqual([{ n: 3 }, { n: 4 }]);
  });

  it('kills a cursor that is closed early', async () => {
    const items = client.db('t').collection('items');
    await items.insertMany(Array.from({ length: 10 }, (_, n) => ({ n })));
    const cursor = items.find({}, { batchSize: 2 });
    expect((await cursor.next())?.n).toBe(0);
    await cursor.close();
    expect(server.commands).toContain('killCursors');
  });

  it('enforces a unique index with MongoServerError 11000', async () => {
    const people = client.db('t').collection('people');
    await people.createIndex({ team: 1, name: 1 }, { unique: true, name: 'team_name' });
    await people.insertOne({ team: 'a', name: 'Ada' });
    await people.insertOne({ team: 'b', name: 'Ada' });
    const error = await people.insertOne({ team: 'a', name: 'Ada' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MongoServerError);
    expect((error as MongoServerError).code).toBe(11000);
    const update = await people.updateOne({ team: 'b' }, { $set: { team: 'a' } }).catch((e: unknown) => e);
    expect((update as MongoServerError).code).toBe(11000);
    expect(await people.find({ team: 'a' }).toArray()).toHaveLength(1);
  });

  it('upserts with findOneAndUpdate, returning the document itself', async () => {
    const counters = client.db('t').collection<{ _id: string; value: number }>('counters');
    const first = await counters.findOneAndUpdate(
      { _id: 'visits' },
      { $inc: { value: 1 } },
      { upsert: true, returnDocument: 'after' },
    );
    expect(first).toEqual({ _id: 'visits', value: 1 });
    const second = await counters.findOneAndUpdate(
      { _id: 'visits' },
      { $inc: { value: 2 } },
      { upsert: true, returnDocument: 'before' },
    );
    expect(second).toEqual({ _id: 'visits', value: 1 });
    expect(await counters.findOne({ _id: 'visits' })).toEqual({ _id: 'visits', value: 3 });
    expect(await counters.findOneAndUpdate({ _id: 'missing' }, { $inc: { value: 1 } })).toBeNull();
  });

  it('updates with $setOnInsert only on insert, and $push onto arrays conditionally', async () => {
    const docs = client
      .db('t')
      .collection<{ _id: string; created?: number; parts: number[]; n?: number }>('d');
    const upsert = await docs.updateOne(
      { _id: 'x' },
      { $setOnInsert: { created: 1 }, $set: { n: 1, parts: [] } },
      { upsert: true },
    );
    expect(upsert.upsertedId).toBe('x');
    await docs.updateOne({ _id: 'x' }, { $setOnInsert: { created: 2 }, $set: { n: 2 } }, { upsert: true });
    await docs.updateOne({ _id: 'x', parts: { $ne: 7 } }, { $push: { parts: 7 } });
    const again = await docs.updateOne({ _id: 'x', parts: { $ne: 7 } }, { $push: { parts: 7 } });
    expect(again.matchedCount).toBe(0);
    expect(await docs.findOne({ _id: 'x' })).toEqual({ _id: 'x', created: 1, n: 2, parts: [7] });
    expect((await docs.deleteMany({})).deletedCount).toBe(1);
  });

  it('records TTL and partial indexes, and applies TTL expiry on demand', async () => {
    const sessions = client.db('t').collection('sessions');
    await sessions.createIndexes([
      { key: { expiresAt: 1 }, name: 'ttl', expireAfterSeconds: 0 },
      { key: { open: 1 }, name: 'open_only', partialFilterExpression: { open: true } },
    ]);
    const indexes = await sessions.listIndexes().toArray();
    expect(indexes.find((i) => i.name === 'ttl')).toMatchObject({
      key: { expiresAt: 1 },
      expireAfterSeconds: 0,
    });
    expect(indexes.find((i) => i.name === 'open_only')).toMatchObject({
      partialFilterExpression: { open: true },
    });
    await sessions.insertMany([
      { expiresAt: new Date(1_000) },
      { expiresAt: new Date(10_000) },
      { other: 1 },
    ]);
    expect(server.engine.expireTtl(5_000)).toBe(1);
    expect(await sessions.estimatedDocumentCount()).toBe(2);
  });

  it('compares strings by code point, as MongoDB does', async () => {
    const keys = client.db('t').collection<{ k: string }>('keys');
    await keys.insertMany(['🎭', 'ｚ', '中', 'z'].map((k) => ({ k })));
    expect((await keys.find().sort({ k: 1 }).toArray()).map((d) => d.k)).toEqual(['z', '中', 'ｚ', '🎭']);
    expect((await keys.find({ k: { $gt: 'ｚ' } }).toArray()).map((d) => d.k)).toEqual(['🎭']);
  });

  it('answers an unknown command with code 59', async () => {
    const error = await client
      .db('admin')
      .command({ frobnicate: 1 })
      .catch((e: unknown) => e);
    expect((error as MongoServerError).code).toBe(59);
  });

  it('drops collections and databases', async () => {
    const db = client.db('gone');
    await db.collection('a').insertOne({ x: 1 });
    expect((await db.listCollections().toArray()).map((c) => c.name)).toEqual(['a']);
    await db.collection('a').drop();
    await db.collection('b').insertOne({ x: 1 });
    await db.dropDatabase();
    expect(await db.listCollections().toArray()).toEqual([]);
  });
});

describe('fake MongoDB wire server as a one-member replica set', () => {
  it('runs a transaction and undoes it on abort', async () => {
    const server = await startFakeMongoServer({ replicaSet: 'rs0' });
    const client = new MongoClient(server.uri, { serverSelectionTimeoutMS: 2_000 });
    try {
      await client.connect();
      const docs = client.db('t').collection<{ _id: string; n: number }>('docs');
      await docs.insertOne({ _id: 'kept', n: 1 });
      const session = client.startSession();
      await session
        .withTransaction(async () => {
          await docs.insertOne({ _id: 'new', n: 1 }, { session });
          await docs.updateOne({ _id: 'kept' }, { $set: { n: 2 } }, { session });
          throw new Error('give up');
        })
        .catch(() => undefined);
      await session.withTransaction(async () => {
        await docs.insertOne({ _id: 'committed', n: 3 }, { session });
      });
      await session.endSession();
      expect(await docs.find().sort({ _id: 1 }).toArray()).toEqual([
        { _id: 'committed', n: 3 },
        { _id: 'kept', n: 1 },
      ]);
      expect(server.commands).toContain('abortTransaction');
      expect(server.commands).toContain('commitTransaction');
    } finally {
      await client.close();
      await server.close();
    }
  });
});
