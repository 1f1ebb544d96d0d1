/**
 * Before a reply goes out, the stored floor must know its turn and the outbox must hold the reply.
 * On a store that keeps writes in order (one SQLite connection), the outbox record is made as soon
 * as the floor's write is handed to the store, so both are stored by one commit; any other store
 * records only once the floor's write is stored.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LEDGER } from '../../src/actors/channelLedger.js';
import { CHANNELS } from '../../src/actors/channelPersistence.js';
import { createMemoryStore } from '../../src/adapters/store/memory/memoryStore.js';
import { openSqliteStore } from '../../src/adapters/store/sqlite/sqliteStore.js';
import type { Outbox } from '../../src/ports/outbox.js';
import type { DocumentOperation, TroupeStore } from '../../src/ports/store.js';
import { createTestRuntime } from '../../src/testing/index.js';

/** The store, with what happened to the floor's writes (ledger or snapshot) and the outbox records, in order. */
function watched(store: TroupeStore): { store: TroupeStore; steps: string[] } {
  const steps: string[] = [];
  const documents = Object.create(store.documents) as TroupeStore['documents'];
  documents.batch = (operations: readonly DocumentOperation[], at?: number) => {
    const floor = operations.some((o) => o.collection === LEDGER || o.collection === CHANNELS);
    if (floor) steps.push('floor handed over');
    const written = store.documents.batch(operations, at);
    if (floor) void written.then(() => steps.push('floor stored'));
    return written;
  };
  const outbox = Object.create(store.outbox) as Outbox;
  outbox.record = (response, at) => {
    steps.push(`record ${response.origin.kind}`);
    return store.outbox.record(response, at);
  };
  return { store: { ...store, documents, outbox }, steps };
}

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function firstReplySteps(store: TroupeStore): Promise<string[]> {
  const w = watched(store);
  const t = createTestRuntime({
    avatars: [{ id: 'nova', name: 'Nova' }],
    store: w.store,
    persistence: { durable: true },
  });
  await t.summon('nova');
  w.steps.length = 0;
  await t.say('Nova, are you there?');
  expect(t.transport.sent.at(-1)?.text).toMatch(/^Ada, /);
  await t.stop();
  return w.steps.slice(0, 3);
}

describe('a reply and the floor that knows its turn', () => {
  it('on SQLite (writes kept in order): the reply is recorded while the floor is being stored, one commit for both', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'troupe-reply-commit-'));
    dirs.push(dir);
    const store = await openSqliteStore({ path: join(dir, 'troupe.db') });
    expect(store.outbox.writesInOrder).toBe(true);
    expect(await firstReplySteps(store)).toEqual(['floor handed over', 'record answer', 'floor stored']);
  });

  it('on any other store: the reply is recorded only once the floor is stored', async () => {
    const store = createMemoryStore();
    expect(store.outbox.writesInOrder).toBeFalsy();
    // Without its immediate writes, as a store whose writes take a while.
    const outbox = Object.create(store.outbox) as Outbox;
    Object.defineProperty(outbox, 'immediate', { value: undefined });
    expect(await firstReplySteps({ ...store, outbox })).toEqual([
      'floor handed over',
      'floor stored',
      'record answer',
    ]);
  });
});
