import { setTimeout as delay } from 'node:timers/promises';
import {
  type Db,
  type IndexDescription,
  MongoClient,
  type MongoClientOptions,
  MongoServerError,
} from 'mongodb';
import { z } from 'zod';
import { type Logger, silentLogger } from '../../../logging/logger.js';
import type { TroupeStore } from '../../../ports/store.js';
import { TroupeError } from '../../../ports/troupeError.js';
import { Context, MONGO_COLLECTIONS, type Names } from './mongoContext.js';
import { MongoDocuments } from './mongoDocuments.js';
import { cleanMessage, isTransient, redactUri, storeError } from './mongoErrors.js';
import { MongoEvents } from './mongoEvents.js';
import { MongoHistory } from './mongoHistory.js';
import { MongoMemory } from './mongoMemory.js';
import { MongoOutbox } from './mongoOutbox.js';
import { MongoProcessed } from './mongoProcessed.js';

/** Options of {@link openMongoStore}. */
export interface MongoStoreOptions {
  /** `mongodb://…` or `mongodb+srv://…` (required unless `client` is given). */
  uri?: string;
  /** A client the application manages; the store uses it and never closes it. */
  client?: MongoClient;
  /** Database name (default `troupe`). */
  database?: string;
  /** Prefix of every collection name, to share a database (default none). */
  collectionPrefix?: string;
  logger?: Logger;
  /**
   * Idle expiry per document collection (ms): a document of such a collection carries
   * `expiresAt = updatedAt + ms`, and MongoDB's TTL monitor (about once a minute) deletes it once
   * that has passed without a newer write. `expireIdle` works either way.
   */
  idleExpiry?: Record<string, number>;
  /** How long server selection may wait, per attempt and per operation (default 5 000 ms). */
  serverSelectionTimeoutMS?: number;
  /**
   * How long an operation waits for the server's answer on its connection before it fails with
   * `TROUPE_STORE_UNAVAILABLE` (retryable; the connection is closed and the next operation opens
   * another). Default 30 000 ms, unless the connection string sets `socketTimeoutMS`; 0 waits
   * forever, as the driver does by default. A server that stops answering without closing the
   * connection (a stuck primary, a half-open network path) otherwise holds every channel write
   * queued behind that operation, with no error.
   */
  socketTimeoutMS?: number;
  /** Connection attempts when opening, with backoff between them (default 2). */
  connectAttempts?: number;
  /** History lines kept per channel (default 200); older ones are trimmed as channels grow. */
  historyPerChannel?: number;
  /** How long settled outbox entries are kept for duplicate detection (default 7 days). */
  outboxRetentionMs?: number;
  /**
   * `auto` (default): `putMany` uses a multi-document transaction when the server is a replica-set
   * member or mongos, and compare-and-set with rollback on a standalone server. `never`: always the
   * latter.
   */
  transactions?: 'auto' | 'never';
  /** Extra driver options (they win over the store's defaults). */
  clientOptions?: MongoClientOptions;
}

const DAY = 24 * 60 * 60 * 1000;

/** The longest a Node.js timer can wait, in ms (a longer one fires at once). */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * The numeric options, as they must be. The driver takes NaN and Infinity for its timeouts
 * without a word, and a NaN socket timeout then fails every operation's connection instead of
 * the open: refused here, before anything connects.
 */
const numericOptions = {
  serverSelectionTimeoutMS: {
    schema: z.number().int().min(1).max(MAX_TIMER_MS),
    expected: 'a whole number of milliseconds from 1 to 2147483647',
  },
  socketTimeoutMS: {
    schema: z.number().int().min(0).max(MAX_TIMER_MS),
    expected: 'a whole number of milliseconds from 0 (wait forever) to 2147483647',
  },
  connectAttempts: { schema: z.number().int().min(1).max(100), expected: 'a whole number from 1 to 100' },
  historyPerChannel: {
    schema: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    expected: 'a whole number of lines, 0 or more',
  },
  outboxRetentionMs: {
    schema: z.number().finite().positive(),
    expected: 'a finite number of milliseconds above 0',
  },
} as const;

/** @throws TroupeError `TROUPE_CONFIG_INVALID` naming every numeric option that is wrong. */
function checkNumericOptions(options: MongoStoreOptions): void {
  const wrong = Object.entries(numericOptions).flatMap(([name, { schema, expected }]) => {
    const value = options[name as keyof typeof numericOptions];
    return value === undefined || schema.safeParse(value).success
      ? []
      : [
          `${name}=${typeof value === 'string' ? JSON.stringify(value) : String(value)} (expected ${expected})`,
        ];
  });
  if (wrong.length > 0)
    throw new TroupeError(
      'TROUPE_CONFIG_INVALID',
      `openMongoStore cannot use ${wrong.join(', ')}; nothing was opened.`,
      { details: { options: wrong } },
    );
}
/** {@link MongoStoreOptions.socketTimeoutMS}'s default: longer than any single write or index check takes. */
const DEFAULT_SOCKET_TIMEOUT_MS = 30_000;

/**
 * Opens the MongoDB `TroupeStore` (kind `mongodb`): production storage shared by several
 * processes. It connects (retrying transient failures), creates its indexes (idempotent) and asks
 * the server whether it runs transactions.
 *
 * Values are kept as JSON text (`json` fields), so every JSON value round-trips exactly (keys with
 * dots or dollars, empty keys, key order) and every adapter stores the same thing; what surrounds
 * them (collection, key, version, times) are ordinary fields under unique indexes, which is what
 * makes compare-and-set, processed ids and memory versions hold across processes.
 *
 * `documents.putMany` is all-or-nothing in a multi-document transaction on a replica set or
 * mongos. A standalone server has no transactions: there every expectation is checked against one
 * read before anything is written (a stale batch writes nothing), each write is compare-and-set
 * against what was read, and if one loses to a concurrent writer the writes already made are
 * rolled back. Without a transaction, readers can see part of a batch while it is written, and a
 * process that dies mid-batch leaves what it wrote; use a replica set (one member is enough) when
 * that matters.
 *
 * The driver retries reads once after a network error (and writes too, on a replica set);
 * failures that remain become `TROUPE_STORE_UNAVAILABLE`, retryable when transient.
 *
 * @throws TroupeError `TROUPE_STORE_UNAVAILABLE` naming the hosts (never the password) when the
 *   server cannot be reached; `TROUPE_CONFIG_INVALID` for a malformed connection string or a
 *   numeric option that is not a usable number (NaN, Infinity, negative, fractional timeouts).
 */
export async function openMongoStore(options: MongoStoreOptions): Promise<TroupeStore> {
  checkNumericOptions(options);
  const logger = options.logger ?? silentLogger();
  const client = options.client ?? createClient(options);
  const owned = options.client === undefined;
  const hosts = client.options.hosts.map((h) => h.toString()).join(',') || 'unknown host';
  const databaseName = options.database ?? 'troupe';
  try {
    await connect(client, hosts, Math.max(1, options.connectAttempts ?? 2), logger);
    const db = client.db(databaseName);
    const names = collectionNames(options.collectionPrefix ?? '');
    await createIndexes(db, names).catch((error: unknown) => {
      throw storeError(error, hosts, `create the indexes of database "${databaseName}"`);
    });
    const transactions = options.transactions === 'never' ? false : await supportsTransactions(client, hosts);
    logger.info({ hosts, database: databaseName, transactions }, 'MongoDB store open');
    const ctx = new Context(client, db, names, hosts, logger, transactions);
    return {
      kind: 'mongodb',
      documents: new MongoDocuments(ctx, options.idleExpiry ?? {}),
      memory: new MongoMemory(ctx),
      outbox: new MongoOutbox(ctx, options.outboxRetentionMs ?? 7 * DAY),
      events: new MongoEvents(ctx),
      processed: new MongoProcessed(ctx),
      history: new MongoHistory(ctx, options.historyPerChannel ?? 200),
      async close() {
        if (ctx.closed) return;
        ctx.closed = true;
        if (owned) await client.close().catch(() => undefined);
        logger.debug({ hosts }, 'MongoDB store closed');
      },
    };
  } catch (error) {
    if (owned) await client.close().catch(() => undefined);
    throw error;
  }
}

function createClient(options: MongoStoreOptions): MongoClient {
  if (!options.uri) {
    throw new TroupeError('TROUPE_CONFIG_INVALID', 'openMongoStore needs a `uri` (or a connected `client`).');
  }
  try {
    return new MongoClient(options.uri, {
      serverSelectionTimeoutMS: options.serverSelectionTimeoutMS ?? 5_000,
      // A value in the connection string stands (options given here would override it).
      ...(options.socketTimeoutMS !== undefined || !uriNames(options.uri, 'socketTimeoutMS')
        ? { socketTimeoutMS: options.socketTimeoutMS ?? DEFAULT_SOCKET_TIMEOUT_MS }
        : {}),
      ignoreUndefined: true,
      appName: 'troupe',
      ...options.clientOptions,
    });
  } catch (error) {
    throw new TroupeError(
      'TROUPE_CONFIG_INVALID',
      `The MongoDB connection string ${redactUri(options.uri)} is not valid: ${cleanMessage(error)}`,
      { cause: error },
    );
  }
}

/** Whether a connection string's options name `option` (case-insensitive, as the driver reads them). */
function uriNames(uri: string, option: string): boolean {
  const query = uri.indexOf('?');
  if (query < 0) return false;
  const wanted = option.toLowerCase();
  for (const name of new URLSearchParams(uri.slice(query + 1)).keys())
    if (name.toLowerCase() === wanted) return true;
  return false;
}

async function connect(client: MongoClient, hosts: string, attempts: number, logger: Logger): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await client.connect();
      return;
    } catch (error) {
      if (!isTransient(error) || attempt >= attempts) throw storeError(error, hosts, 'connect');
      logger.warn({ hosts, attempt, reason: cleanMessage(error) }, 'MongoDB not reachable; retrying');
      await delay(Math.min(250 * 2 ** (attempt - 1), 2_000));
    }
  }
}

/** Replica-set members and mongos run multi-document transactions; a standalone server does not. */
async function supportsTransactions(client: MongoClient, hosts: string): Promise<boolean> {
  const admin = client.db('admin');
  try {
    // `hello` came with MongoDB 4.4.2; the driver still supports 4.4.0, which only knows isMaster.
    const reply = await admin.command({ hello: 1 }).catch((error: unknown) => {
      if (error instanceof MongoServerError && error.code === 59) return admin.command({ isMaster: 1 });
      throw error;
    });
    return typeof reply.setName === 'string' || reply.msg === 'isdbgrid';
  } catch (error) {
    throw storeError(error, hosts, 'ask the server whether it runs transactions');
  }
}

function collectionNames(prefix: string): Names {
  const names = { ...MONGO_COLLECTIONS } as Names;
  for (const key of Object.keys(names) as (keyof Names)[]) names[key] = `${prefix}${names[key]}`;
  return names;
}

/** Every index the store relies on; unique ones are what make its promises hold across processes. */
async function createIndexes(db: Db, names: Names): Promise<void> {
  const specs: [string, IndexDescription[]][] = [
    [
      names.documents,
      [
        { key: { collection: 1, key: 1 }, name: 'collection_key', unique: true },
        { key: { collection: 1, updatedAt: 1 }, name: 'collection_updatedAt' },
        { key: { expiresAt: 1 }, name: 'expiresAt_ttl', expireAfterSeconds: 0 },
      ],
    ],
    [
      names.memory,
      [{ key: { namespace: 1, key: 1, version: -1 }, name: 'namespace_key_version', unique: true }],
    ],
    [
      names.outbox,
      [
        {
          key: { pending: 1, recordedAt: 1, order: 1 },
          name: 'pending_recordedAt',
          partialFilterExpression: { pending: true },
        },
        { key: { expiresAt: 1 }, name: 'expiresAt_ttl', expireAfterSeconds: 0 },
      ],
    ],
    [names.events, [{ key: { stream: 1, seq: 1 }, name: 'stream_seq', unique: true }]],
    [names.processed, [{ key: { scope: 1, id: 1 }, name: 'scope_id', unique: true }]],
    [names.history, [{ key: { channelId: 1, at: 1, order: 1 }, name: 'channelId_at' }]],
  ];
  await Promise.all(specs.map(([name, indexes]) => db.collection(name).createIndexes(indexes)));
}
