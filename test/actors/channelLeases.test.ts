import { describe, expect, it } from 'vitest';
import { ChannelLeases, LEASES, leaseOwner } from '../../src/actors/channelLeases.js';
import { SimulatedClock } from '../../src/actors/clock.js';
import { createMemoryStore } from '../../src/adapters/store/memory/memoryStore.js';
import { silentLogger } from '../../src/logging/logger.js';
import type { DocumentStore } from '../../src/ports/store.js';

const KEY = 'discord:general';

function leasesOf(documents: DocumentStore, clock: SimulatedClock, owner: string): ChannelLeases {
  return new ChannelLeases({ documents, clock, owner, logger: silentLogger(), onLost: () => undefined });
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
});
