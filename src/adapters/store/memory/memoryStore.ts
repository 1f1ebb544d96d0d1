import { DEFAULT_HISTORY_WINDOW } from '../../../ports/history.js';
import type { TroupeStore } from '../../../ports/store.js';
import { CopyingHistory } from './copyingHistory.js';
import { CopyingOutbox } from './copyingOutbox.js';
import { MemoryDocuments } from './memoryDocuments.js';
import { MemoryEvents } from './memoryEvents.js';
import { MemoryProcessed } from './memoryProcessed.js';
import type { MemoryState } from './memoryState.js';
import { MemoryVersions } from './memoryVersions.js';
import { SettledKeys } from './settledKeys.js';

/** Options of {@link createMemoryStore}. */
export interface MemoryStoreOptions {
  /** The clock for writes that give no `at` (default `Date.now`). */
  now?: () => number;
  /**
   * History lines kept per channel (default {@link DEFAULT_HISTORY_WINDOW}, what a prompt reads):
   * older lines are never read again. A runtime reading more (`historyLimit`) needs as many.
   */
  historyPerChannel?: number;
  /** Settled outbox entries kept for duplicate detection, in all (default 10 000). */
  retainSettled?: number;
  /**
   * Settled outbox entries kept per channel (default {@link DEFAULT_SETTLED_PER_CHANNEL}). One is
   * read again only for a turn a restored channel still shows in flight, among its latest answers.
   */
  settledPerChannel?: number;
}

/** The latest settled answers of a channel the memory outbox keeps (more than a channel has in flight). */
export const DEFAULT_SETTLED_PER_CHANNEL = 16;

/**
 * A complete `TroupeStore` in memory: for tests and for embedding without disk. What goes in is
 * checked and copied (documents, memory and events as JSON text; the outbox and history, written
 * on every reply, as objects copied in one pass), and what comes out is a fresh copy a caller may
 * change freely. It keeps every promise of the durable adapters within one process.
 */
export function createMemoryStore(options: MemoryStoreOptions = {}): TroupeStore {
  const state: MemoryState = { closed: false, now: options.now ?? Date.now };
  return {
    kind: 'memory',
    documents: new MemoryDocuments(state),
    memory: new MemoryVersions(state),
    outbox: new CopyingOutbox(
      state,
      new SettledKeys(
        options.retainSettled ?? 10_000,
        options.settledPerChannel ?? DEFAULT_SETTLED_PER_CHANNEL,
      ),
    ),
    events: new MemoryEvents(state),
    processed: new MemoryProcessed(state),
    history: new CopyingHistory(state, options.historyPerChannel ?? DEFAULT_HISTORY_WINDOW),
    async close() {
      state.closed = true;
    },
  };
}
