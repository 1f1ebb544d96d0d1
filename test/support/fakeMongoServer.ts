import { createServer, type Socket } from 'node:net';
import { type Document, deserialize, ObjectId, serialize } from 'bson';
import { FakeMongoEngine } from './fakeMongoEngine.js';

/**
 * A small MongoDB server for tests: the wire protocol on 127.0.0.1 (a random port), enough of it
 * for the official driver. The driver's handshake arrives as a legacy OP_QUERY on `admin.$cmd` and
 * gets an OP_REPLY; everything after is OP_MSG (a body section, plus document sequences such as the
 * `documents` of an insert). Commands run in {@link FakeMongoEngine}; unknown ones answer
 * `no such command` (code 59).
 *
 * It reports MongoDB 7.0 (wire version 21), standalone by default; `replicaSet` makes it a
 * one-member replica set, so drivers allow transactions and retryable writes (see the engine for
 * how far they are modelled).
 */
export interface FakeMongoServer {
  /** `mongodb://127.0.0.1:PORT` (with `?replicaSet=` in replica-set mode). */
  readonly uri: string;
  readonly port: number;
  /** Names of every command received, in order (the handshake's `ismaster`/`hello` included). */
  readonly commands: string[];
  readonly engine: FakeMongoEngine;
  /**
   * Makes the next `times` commands named `name` fail: with `reply` (an error document; inside a
   * transaction it aborts the transaction, as any failed statement does) or by closing the
   * connection — before running the command, or with `afterApply` after running it (the reply is
   * lost, the write happened) — or with `hang` by never answering, the connection left open (a
   * server that stopped responding; the command is not run).
   */
  failNext(
    name: string,
    failure: {
      reply?: Document;
      closeConnection?: boolean;
      afterApply?: boolean;
      hang?: boolean;
      times?: number;
    },
  ): void;
  /** Closes every client connection (a server restart, as drivers see it). */
  dropConnections(): void;
  /** Forgets every database. */
  dropAll(): void;
  close(): Promise<void>;
}

const OP_REPLY = 1;
const OP_QUERY = 2004;
const OP_MSG = 2013;
const MORE_TO_COME = 1 << 1;
const CHECKSUM_PRESENT = 1 << 0;

export async function startFakeMongoServer(
  options: {
    replicaSet?: string;
    /** MongoDB's `transactionLifetimeLimitSeconds`, in ms (60 s by default, as on a real server). */
    transactionLifetimeLimitMs?: number;
  } = {},
): Promise<FakeMongoServer> {
  const engine = new FakeMongoEngine(options.transactionLifetimeLimitMs);
  const commands: string[] = [];
  const sockets = new Set<Socket>();
  const failures = new Map<
    string,
    { reply?: Document; closeConnection?: boolean; afterApply?: boolean; hang?: boolean; times: number }
  >();
  let connectionIds = 0;
  let requestIds = 0;
  let port = 0;
  const electionId = new ObjectId('7fffffff0000000000000001');

  const hello = (connectionId: number): Document => {
    const me = `127.0.0.1:${port}`;
    return {
      helloOk: true,
      ismaster: true,
      isWritablePrimary: true,
      ...(options.replicaSet
        ? {
            setName: options.replicaSet,
            setVersion: 1,
            electionId,
            hosts: [me],
            primary: me,
            me,
            secondary: false,
          }
        : {}),
      maxBsonObjectSize: 16 * 1024 * 1024,
      maxMessageSizeBytes: 48_000_000,
      maxWriteBatchSize: 100_000,
      localTime: new Date(),
      logicalSessionTimeoutMinutes: 30,
      connectionId,
      minWireVersion: 0,
      maxWireVersion: 21,
      readOnly: false,
      ok: 1,
    };
  };

  /** The reply to one command, `close` to drop the connection instead, or `hang` to say nothing. */
  const answer = (db: string, body: Document, connectionId: number): Document | 'close' | 'hang' => {
    const name = Object.keys(body)[0] ?? '';
    commands.push(name);
    const failure = failures.get(name);
    if (failure) {
      if (--failure.times <= 0) failures.delete(name);
      if (failure.hang) return 'hang';
      if (failure.afterApply) {
        engine.run(db, body);
        return 'close';
      }
      if (failure.closeConnection) return 'close';
      engine.abortTransactionOf(body);
      return { ok: 0, errmsg: 'injected failure', code: 8, ...failure.reply };
    }
    if (name === 'hello' || name.toLowerCase() === 'ismaster') return hello(connectionId);
    return engine.run(db, body);
  };

  const onMessage = (socket: Socket, message: Buffer, connectionId: number): void => {
    const requestId = message.readInt32LE(4);
    const opCode = message.readInt32LE(12);
    if (opCode === OP_QUERY) {
      const nsEnd = message.indexOf(0, 20);
      const ns = message.toString('utf8', 20, nsEnd);
      const query = deserialize(message.subarray(nsEnd + 9));
      const reply = answer(ns.split('.')[0] ?? 'admin', query, connectionId);
      if (reply === 'hang') return;
      if (reply === 'close') return void socket.destroy();
      const doc = serialize(reply);
      const head = Buffer.alloc(36);
      head.writeInt32LE(36 + doc.length, 0);
      head.writeInt32LE(++requestIds, 4);
      head.writeInt32LE(requestId, 8);
      head.writeInt32LE(OP_REPLY, 12);
      head.writeInt32LE(1, 32); // numberReturned; flags, cursor id and startingFrom stay 0
      socket.write(Buffer.concat([head, doc]));
      return;
    }
    if (opCode !== OP_MSG) return void socket.destroy();
    const flags = message.readUInt32LE(16);
    const end = message.length - (flags & CHECKSUM_PRESENT ? 4 : 0);
    let body: Document = {};
    const sequences: [string, Document[]][] = [];
    for (let at = 20; at < end; ) {
      const kind = message[at];
      const size = message.readInt32LE(at + 1);
      if (kind === 0) {
        body = deserialize(message.subarray(at + 1, at + 1 + size));
        at += 1 + size;
        continue;
      }
      const idEnd = message.indexOf(0, at + 5);
      const docs: Document[] = [];
      for (let d = idEnd + 1; d < at + 1 + size; d += message.readInt32LE(d)) {
        docs.push(deserialize(message.subarray(d, d + message.readInt32LE(d))));
      }
      sequences.push([message.toString('utf8', at + 5, idEnd), docs]);
      at += 1 + size;
    }
    for (const [identifier, docs] of sequences) body[identifier] = docs;
    const reply = answer(String(body.$db ?? 'admin'), body, connectionId);
    if (reply === 'hang') return;
    if (reply === 'close') return void socket.destroy();
    if (flags & MORE_TO_COME) return;
    const doc = serialize(reply);
    const head = Buffer.alloc(21);
    head.writeInt32LE(21 + doc.length, 0);
    head.writeInt32LE(++requestIds, 4);
    head.writeInt32LE(requestId, 8);
    head.writeInt32LE(OP_MSG, 12);
    // flagBits 0, then section kind 0
    socket.write(Buffer.concat([head, doc]));
  };

  const server = createServer((socket) => {
    const connectionId = ++connectionIds;
    sockets.add(socket);
    let pending = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      while (pending.length >= 4 && pending.length >= pending.readInt32LE(0)) {
        const length = pending.readInt32LE(0);
        const message = pending.subarray(0, length);
        pending = pending.subarray(length);
        try {
          onMessage(socket, message, connectionId);
        } catch {
          socket.destroy();
          return;
        }
      }
    });
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  port = typeof address === 'object' && address ? address.port : 0;

  return {
    uri: `mongodb://127.0.0.1:${port}${options.replicaSet ? `/?replicaSet=${options.replicaSet}` : ''}`,
    port,
    commands,
    engine,
    failNext(name, failure) {
      failures.set(name, { ...failure, times: failure.times ?? 1 });
    },
    dropConnections() {
      for (const socket of sockets) socket.destroy();
    },
    dropAll() {
      engine.dropAll();
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
