/**
 * A soak through the fake Discord: 2,000 messages across 50 channels with the real discord.js
 * client, the transport and the runtime. Nothing is lost, no promise is left rejected
 * (test/support/failOnUnhandledRejection.ts), discord.js's message caches stay at their cap, and
 * the heap (after a full GC) grows no faster per message over the second span than over the
 * first. 2,000 messages do not fill the store's caps (10,000 settled keys, 200 lines a channel),
 * so the heap still grows, by a few KB a message; `npm run soak` measures the flat part.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Client } from 'discord.js';
import { describe, expect, it, vi } from 'vitest';
import type { RoutingOutcome } from '../../../src/ports/routingOutcome.js';
import { mockModel } from '../../../src/testing/index.js';
import { ada, GUILD, startDiscordHarness, stopAfterEach } from '../../support/discordHarness.js';
import { type FakeChannel, startFakeDiscord } from '../../support/fakeDiscord.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const { running, closers } = stopAfterEach();

const CHANNELS = 50;
const MESSAGES = 2_000;
const channelIds = Array.from({ length: CHANNELS }, (_, i) => String(210000000000000000n + BigInt(i)));

// It keeps no calls: the soak measures the runtime's memory, not the model's record.
const model = mockModel(({ avatar, turn }) => `${avatar.name} on ${turn.turnId}.`, { retain: 0 });

function heap(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

describe('Discord soak (break attempt)', () => {
  it('2,000 messages across 50 channels: every one answered once, memory per channel bounded', async () => {
    const channels: FakeChannel[] = channelIds.map((id, i) => ({ id, name: `c${i}`, type: 0 }));
    const fake = await startFakeDiscord({ guilds: [{ id: GUILD, name: 'Soak', channels }] });
    closers.push(() => fake.close());
    const h = await startDiscordHarness({
      fake,
      avatars: [{ id: 'nova', name: 'Nova', residentIn: channelIds.map((id) => `discord:${id}`) }],
      runtime: { model },
    });
    running.push(h);
    const outcomes: RoutingOutcome[] = [];
    h.runtime.outcomes$.subscribe((o) => outcomes.push(o));
    let asked = 0;
    let posted = 0;
    let dropped = 0;
    /** Sends `count` more messages round-robin, then clears the fake's own logs (test-side memory). */
    const send = async (count: number) => {
      const ids: string[] = [];
      for (let n = 0; n < count; n += 1) {
        const said = fake.postMessage({
          channelId: channelIds[asked % CHANNELS] as string,
          author: {
            ...ada,
            id: String(300000000000000100n + BigInt(asked % 40)),
            username: `p${asked % 40}`,
          },
          content: `Nova, question ${asked}?`,
        });
        ids.push(said.id);
        asked += 1;
        if (n % 50 === 49) await quiet();
      }
      await quiet();
      // Every message reached the runtime (the adapter remembers each one it passes on).
      dropped += ids.filter((id) => h.transport.memory.get(id) === undefined).length;
      posted += fake.executions.length;
      fake.requests.length = 0;
      fake.executions.length = 0;
      for (const list of fake.messages.values()) list.length = 0;
    };
    /** Waits until the bot has been quiet for a while and the runtime is idle. */
    const quiet = () => {
      let last = -1;
      return vi.waitFor(
        async () => {
          const now = fake.executions.length;
          if (now !== last) {
            last = now;
            throw new Error('still answering');
          }
          await h.runtime.whenIdle();
        },
        { timeout: 30_000, interval: 150 },
      );
    };
    await send(MESSAGES / 4);
    const start = heap();
    await send(MESSAGES / 4);
    const half = heap();
    await send(MESSAGES / 2);
    const end = heap();
    const perMessage = (bytes: number, messages: number) => Math.round(bytes / messages);
    const first = perMessage(half - start, MESSAGES / 4);
    const second = perMessage(end - half, MESSAGES / 2);

    expect(dropped).toBe(0);
    // Nothing lost or doubled: every answer was sent, once, each to its own message. (The floor
    // may let a message pass when an avatar has spoken a lot in a channel: most are answered.)
    expect(outcomes.every((o) => o.sent)).toBe(true);
    expect(posted).toBe(outcomes.reduce((n, o) => n + o.parts.length, 0));
    expect(new Set(outcomes.map((o) => o.origin.triggerMessageId)).size).toBe(outcomes.length);
    expect(outcomes.length).toBeGreaterThan(MESSAGES * 0.9);
    expect(await h.store.outbox.unsettled()).toEqual([]);
    // discord.js keeps at most 20 messages per channel; the adapter's maps stay within their caps.
    const client = (h.transport as unknown as { client: Client }).client;
    for (const id of channelIds) {
      const channel = client.channels.cache.get(id);
      expect(channel && 'messages' in channel ? channel.messages.cache.size : 0).toBeLessThanOrEqual(20);
    }
    expect(h.transport.memory.size).toBeLessThanOrEqual(2 * 5_000);
    // What grows over 2,000 messages is the store's and adapter's capped structures filling (the
    // last 200 lines per channel, the last 10,000 settled keys and remembered messages), a few KB
    // a message; a leak per channel or per message would make the second span cost more.
    expect(second).toBeLessThan(Math.max(first * 1.5, 2_000));
    expect(second).toBeLessThan(6_000);
  }, 240_000);
});
