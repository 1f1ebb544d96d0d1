/**
 * Stores for the delivery benchmark's end-to-end runs: a memory store whose history and outbox can
 * be dropped after a run (to tell what the retained heap holds), and a durable SQLite store on a
 * temporary file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryStore } from '../../src/adapters/store/memory/memoryStore.js';
import { openSqliteStore } from '../../src/adapters/store/sqlite/sqliteStore.js';
import type { HistoryStore } from '../../src/ports/history.js';
import type { Outbox } from '../../src/ports/outbox.js';
import type { TroupeStore } from '../../src/ports/store.js';

/** A memory store whose history and outbox are reached through a holder, so they can be let go. */
export interface DroppableMemoryStore {
  store: TroupeStore;
  /** Lines of history the store holds for a channel. */
  historyLines(channelKey: string): Promise<number>;
  /** Lets the history go (an empty one takes its place). */
  dropHistory(): void;
  /** Lets the outbox go (an empty one takes its place). */
  dropOutbox(): void;
}

export function droppableMemoryStore(): DroppableMemoryStore {
  // Nothing but `held` may keep the store's history and outbox (not even the store object).
  const { kind, documents, memory, events, processed, close, ...parts } = createMemoryStore();
  const held: { history: HistoryStore; outbox: Outbox } = { history: parts.history, outbox: parts.outbox };
  const history: HistoryStore = {
    append: (entry) => held.history.append(entry),
    recent: (channelId, limit) => held.history.recent(channelId, limit),
  };
  const outbox: Outbox = {
    record: (response, at) => held.outbox.record(response, at),
    markPartSent: (key, part) => held.outbox.markPartSent(key, part),
    settle: (key, settlement, lastPart) => held.outbox.settle(key, settlement, lastPart),
    unsettled: (limit) => held.outbox.unsettled(limit),
    get: (key) => held.outbox.get(key),
    get immediate() {
      return held.outbox.immediate;
    },
  };
  return {
    store: { kind, documents, memory, events, processed, history, outbox, close },
    historyLines: async (channelKey) =>
      (await held.history.recent(channelKey, Number.MAX_SAFE_INTEGER)).length,
    dropHistory: () => {
      held.history = createMemoryStore().history;
    },
    dropOutbox: () => {
      held.outbox = createMemoryStore().outbox;
    },
  };
}

/** A SQLite store on a new temporary file (WAL, synchronous = NORMAL: what troupe chat runs on). */
export async function temporarySqliteStore(): Promise<{ store: TroupeStore; dispose(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'troupe-bench-'));
  const store = await openSqliteStore({ path: join(dir, 'troupe.db') });
  return {
    store,
    async dispose() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
