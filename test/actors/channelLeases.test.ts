import { describe, expect, it } from 'vitest';
import { ChannelLeases, HEARTBEATS, LEASES, leaseOwner } from '../../src/actors/channelLeases.js';
import { SimulatedClock } from '../../src/actors/clock.js';
import { createMemoryStore } from '../../src/adapters/store/memory/memoryStore.js';
import { silentLogger } from '../../src/logging/logger.js';
import type { DocumentStore } from '../../src/ports/store.js';

const KEY = 'discord:general';

function leasesOf(
  documents: DocumentStore,
  clock: SimulatedClock,
  owner: string,
  onLost: (key: string) => void = () => undefined,
): ChannelLeases {
  return new ChannelLeases({ documents, clock, owner, logger: silentLogger(), onLost });
}

/** The documents port, counting the writes made to each collection. */
function countingWrites(documents: DocumentStore): { documents: DocumentStore; writes: Map<string, number> } {
  const writes = new Map<string, number>();
  const counted: DocumentStore = Object.create(documents);
  counted.put = (collection, key, value, options) => {
    writes.set(collection, (writes.get(collection) ?? 0) + 1);
    return documents.put(collection, key, value, options);
  };
  return { documents: counted, writes };
}

/** Runs the timers due within `ms` and lets the writes they start finish. */
async function pass(clock: SimulatedClock, ms: number): Promise<void> {
  const target = clock.now() + ms;
  while (clock.fireNext(target)) await new Promise((resolve) => setImmediate(resolve));
  clock.setNow(target);
  await new Promise((resolve) => setImmediate(resolve));
}

describe('channel leases', () => {
  it('two parts of one runtime taking the same channel at once both get it (neither sees itself as another process)', async () => {
    const { documents } = createMemoryStore();
    const clock = new SimulatedClock(1_000_000);
    // The lease of a process that stopped holding the channel has lapsed.
    await documents.put(LEASES, KEY, { owner: 'elsewhere:1:gone', expiresAt: 990_000 }, { at: 990_000 });
    const leases = leasesOf(documents, clock, leaseOwner('restart'));
    // After a restart: the reply left in the outbox is resent while a new message arrives.
    const [forResend, forMessage] = await Promise.all([leases.acquire(KEY), leases.acquire(KEY)]);
    expect(forResend).toBeUndefined();
    expect(forMessage).toBeUndefined();
    expect(leases.holds(KEY)).toBe(true);
    // Asking again once it is held keeps it.
    expect(await leases.acquire(KEY)).toBeUndefined();
    await leases.dispose();
  });

  it('another live runtime is told who holds the channel and until when', async () => {
    const { documents } = createMemoryStore();
    const clock = new SimulatedClock(1_000_000);
    const first = leasesOf(documents, clock, 'host-a:1:first');
    const second = leasesOf(documents, clock, 'host-b:2:second');
    expect(await first.acquire(KEY)).toBeUndefined();
    expect(await second.acquire(KEY)).toEqual({ owner: 'host-a:1:first', expiresAt: 1_030_000 });
    expect(second.holds(KEY)).toBe(false);
    await first.dispose();
    expect(await second.acquire(KEY)).toBeUndefined();
    await second.dispose();
  });

  it('a holder keeps all its leases with one heartbeat write per renewal, and others see them held past their own expiry', async () => {
    const store = createMemoryStore();
    const { documents, writes } = countingWrites(store.documents);
    const clock = new SimulatedClock(1_000_000);
    const holder = leasesOf(documents, clock, 'host-a:1:holder');
    const keys = Array.from({ length: 200 }, (_, i) => `discord:c${i}`);
    for (const key of keys) expect(await holder.acquire(key)).toBeUndefined();
    expect(writes.get(LEASES)).toBe(200);
    // Three minutes: eighteen renewals, one write each.
    await pass(clock, 180_000);
    expect(writes.get(LEASES)).toBe(200);
    expect(writes.get(HEARTBEATS)).toBe(18);
    const other = leasesOf(store.documents, clock, 'host-b:2:other');
    expect(await other.acquire('discord:c7')).toEqual({ owner: 'host-a:1:holder', expiresAt: 1_210_000 });
    await holder.dispose();
    expect(await store.documents.get(HEARTBEATS, 'host-a:1:holder')).toBeUndefined();
    expect(await other.acquire('discord:c7')).toBeUndefined();
    await other.dispose();
  });

  it('a holder paused past its lease loses the channels taken meanwhile, keeps the others, and knows which', async () => {
    const { documents } = createMemoryStore();
    const holderClock = new SimulatedClock(1_000_000);
    const takerClock = new SimulatedClock(1_000_000);
    const lost: string[] = [];
    const holder = leasesOf(documents, holderClock, 'host-a:1:holder', (key) => lost.push(key));
    expect(await holder.acquire('discord:taken')).toBeUndefined();
    expect(await holder.acquire('discord:kept')).toBeUndefined();
    await pass(holderClock, 10_000);
    // The holder hangs; forty seconds later its heartbeat (renewed at 1,010,000) has lapsed.
    takerClock.setNow(1_050_000);
    const taker = leasesOf(documents, takerClock, 'host-b:2:taker');
    expect(await taker.acquire('discord:taken')).toBeUndefined();
    // The holder wakes: its renewal is late, so it renews each lease by compare-and-set.
    holderClock.setNow(1_050_000);
    await pass(holderClock, 1);
    expect(lost).toEqual(['discord:taken']);
    expect(holder.holds('discord:taken')).toBe(false);
    expect(holder.holds('discord:kept')).toBe(true);
    expect(await taker.acquire('discord:kept')).toEqual({ owner: 'host-a:1:holder', expiresAt: 1_080_000 });
    await holder.dispose();
    await taker.dispose();
  });

  it('a holder renewing on time is never taken over, though its leases were written long ago', async () => {
    const { documents } = createMemoryStore();
    const clock = new SimulatedClock(1_000_000);
    const lost: string[] = [];
    const holder = leasesOf(documents, clock, 'host-a:1:holder', (key) => lost.push(key));
    expect(await holder.acquire(KEY)).toBeUndefined();
    const taker = leasesOf(documents, clock, 'host-b:2:taker');
    for (let minute = 0; minute < 10; minute++) {
      await pass(clock, 60_000);
      expect(await taker.acquire(KEY)).toMatchObject({ owner: 'host-a:1:holder' });
    }
    expect(lost).toEqual([]);
    await holder.dispose();
    await taker.dispose();
  });

  it('a late renewal that could not verify a lease (the store failed) verifies it again at the next renewal', async () => {
    const store = createMemoryStore();
    const { documents, writes } = countingWrites(store.documents);
    let failLease = false;
    const flaky: DocumentStore = Object.create(documents);
    flaky.put = (collection, key, value, options) =>
      failLease && collection === LEASES
        ? Promise.reject(new Error('store away'))
        : documents.put(collection, key, value, options);
    const clock = new SimulatedClock(1_000_000);
    const holder = leasesOf(flaky, clock, 'host-a:1:holder');
    expect(await holder.acquire(KEY)).toBeUndefined();
    // Paused for 25 s: the renewal is late, and the store refuses the lease's renewal.
    clock.setNow(1_025_000);
    failLease = true;
    await pass(clock, 1);
    const afterLate = writes.get(LEASES) ?? 0;
    failLease = false;
    // On time now, but the lease is still unverified: it is renewed by compare-and-set once more.
    await pass(clock, 10_000);
    expect(writes.get(LEASES)).toBe(afterLate + 1);
    // Then on time and verified: only the heartbeat.
    await pass(clock, 10_000);
    expect(writes.get(LEASES)).toBe(afterLate + 1);
    await holder.dispose();
  });
});
