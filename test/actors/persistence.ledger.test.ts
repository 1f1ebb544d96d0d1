import { describe, expect, it } from 'vitest';
import { LEDGER, ledgerPrefix } from '../../src/actors/channelLedger.js';
import {
  CHANNELS,
  ChannelPersistence,
  type DocumentSource,
  parseStoredChannel,
  readStoredChannel,
} from '../../src/actors/channelPersistence.js';
import { SimulatedClock } from '../../src/actors/clock.js';
import { createMemoryStore } from '../../src/adapters/store/memory/memoryStore.js';
import type { FloorSnapshot } from '../../src/floor/floorSnapshotSchema.js';
import { silentLogger } from '../../src/logging/logger.js';
import type { DocumentOperation, DocumentStore } from '../../src/ports/store.js';
import { createTestRuntime } from '../../src/testing/index.js';

/** A store whose batch writes wait at a gate while it is closed (a slow disk). */
function gatedDocuments(inner: DocumentStore) {
  let open = true;
  let release: () => void = () => undefined;
  let entered: () => void = () => undefined;
  const gate = { opened: Promise.resolve(), entered: Promise.resolve() };
  const documents: DocumentStore = Object.create(inner);
  documents.batch = async (operations: readonly DocumentOperation[], at?: number) => {
    if (!open) {
      entered();
      await gate.opened;
    }
    return inner.batch(operations, at);
  };
  return {
    documents,
    close() {
      open = false;
      gate.opened = new Promise((resolve) => {
        release = resolve;
      });
      gate.entered = new Promise((resolve) => {
        entered = resolve;
      });
    },
    open() {
      open = true;
      release();
    },
    entered: () => gate.entered,
  };
}

/** A channel whose stored form is a counter (what persistence writes is opaque to it). */
function counterChannel() {
  let n = 0;
  const source: DocumentSource = {
    document: () => ({
      document: { floor: { n } as unknown as FloorSnapshot, spoken: [], seen: [] },
      wakeAt: undefined,
    }),
    wakeAt: () => undefined,
  };
  return { source, bump: () => (n += 1) };
}

/** Persistence written behind, with a ledger of 64 events, on a simulated clock. */
function ledgerPersistence(documents: DocumentStore): ChannelPersistence {
  return new ChannelPersistence({
    documents,
    clock: new SimulatedClock(),
    logger: silentLogger(),
    ledgerLimit: 64,
    onError: () => undefined,
    onConflict: () => undefined,
  });
}

describe('the turn ledger: folding it into a snapshot', () => {
  it('folds a ledger written by the flush just before a compaction (the channel no longer dirty) into the snapshot', async () => {
    const gated = gatedDocuments(createMemoryStore().documents);
    const persistence = ledgerPersistence(gated.documents);
    await persistence.load('room');
    const channel = counterChannel();
    channel.bump();
    persistence.markDirty('room', channel.source, { type: 'tick', at: 1 });
    await persistence.flush(); // the first write is a whole snapshot
    channel.bump();
    persistence.markDirty('room', channel.source, { type: 'tick', at: 2 });
    // A write-behind flush takes the change into a ledger entry and is still writing it when the
    // channel is passivated.
    gated.close();
    const behind = persistence.flush();
    await gated.entered();
    const passivation = persistence.flush(['room'], { compact: true });
    gated.open();
    await Promise.all([behind, passivation]);
    persistence.dispose();

    const stored = await readStoredChannel(gated.documents, 'room');
    expect(stored.snapshot?.value).toMatchObject({ floor: { n: 2 } });
    expect(stored.entries).toEqual([]);
    expect(parseStoredChannel('room', stored)).toMatchObject({ kind: 'restored', events: [] });
  });

  it('folds the ledger a channel was restored with when it is passivated, though nothing changed since', async () => {
    const store = createMemoryStore();
    const avatars = [{ id: 'nova', name: 'Nova', residentIn: ['test:room'] }];
    const persistence = { durable: true, ledgerLimit: 64, passivateAfterMs: 60_000, leaseTtlMs: 1_000 };
    const config = { summonProactiveEnabled: false };
    const crashed = createTestRuntime({ avatars, store, persistence, config });
    await crashed.say('Nova, what do you think of comets?');
    await crashed.advance(1_000);
    await crashed.say('Nova, and of tides?');
    // Long enough for every thread to end, not for the channel to be passivated.
    await crashed.advance(50_000);
    const ledger = () => store.documents.list(LEDGER, { keyPrefix: ledgerPrefix('test:room') });
    expect((await ledger()).length).toBeGreaterThan(0);
    const before = crashed.runtime.view({ kind: 'test', id: 'room' });
    // The process dies here: crashed is abandoned.

    const restarted = createTestRuntime({
      avatars,
      store,
      persistence,
      config,
      startAt: crashed.clock.now() + 2_000,
    });
    expect(await restarted.runtime.open({ kind: 'test', id: 'room' })).toEqual(before);
    await restarted.advance(5 * 60_000);
    expect(restarted.inspection.some((e) => e.type === 'actor.stopped' && e.reason === 'passivated')).toBe(
      true,
    );
    expect(await ledger()).toEqual([]);
    const snapshot = await store.documents.get<{ floor: FloorSnapshot }>(CHANNELS, 'test:room');
    expect(snapshot?.value.floor.now).toBe(before?.now);
    await restarted.stop();
  });
});

describe('the write-behind timer and channels whose only changes are replies delivered', () => {
  it('leaves such a channel for its next write, asks it once, and writes it once it changes again', async () => {
    const store = createMemoryStore();
    const persistence = ledgerPersistence(store.documents);
    await persistence.load('room');
    let asked = 0;
    const source: DocumentSource = {
      document: () => ({
        document: { floor: {} as unknown as FloorSnapshot, spoken: [], seen: [] },
        wakeAt: 5_000,
      }),
      wakeAt: () => {
        asked += 1;
        return 5_000;
      },
    };
    persistence.markDirty('room', source, { type: 'tick', at: 1 });
    await persistence.flush(); // the first write is a whole snapshot, with its wake-up
    const delivered = { type: 'turn.delivered', at: 2, turnId: 't1', messageId: 'm1', text: 'hi' } as const;
    persistence.markDirty('room', source, delivered);
    await persistence.flush();
    await persistence.flush();
    const entries = async () => (await readStoredChannel(store.documents, 'room')).entries;
    expect(await entries()).toEqual([]);
    expect(asked).toBe(1);
    persistence.markDirty('room', source, {
      type: 'message',
      at: 3,
      messageId: 'h1',
      author: { kind: 'human', id: 'u', name: 'Ann' },
      text: 'hello',
    });
    await persistence.flush();
    expect((await entries()).map((e) => e.value)).toEqual([
      { events: [delivered, expect.objectContaining({ type: 'message', messageId: 'h1' })] },
    ]);
    persistence.dispose();
  });
});
