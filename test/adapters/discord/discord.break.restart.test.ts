import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../../src/adapters/store/memory/memoryStore.js';
import type { TroupeStore } from '../../../src/ports/store.js';
import { mockModel } from '../../../src/testing/index.js';
import {
  ada,
  type DiscordHarness,
  defaultGuild,
  GENERAL,
  startDiscordHarness,
  stopAfterEach,
  waitUntil,
} from '../../support/discordHarness.js';
import { type FakeDiscord, startFakeDiscord } from '../../support/fakeDiscord.js';

const { running, closers } = stopAfterEach();

const until = (check: () => boolean | undefined, timeout = 5_000) => waitUntil(check, timeout);

const model = mockModel('Exactly once, please.');

/** A store whose outbox stops answering (as a dead process would) once `crashed()` is true. */
function crashingOutbox(store: TroupeStore, crashed: () => boolean): TroupeStore {
  const outbox = store.outbox;
  const never = new Promise<never>(() => undefined);
  return {
    ...store,
    kind: store.kind,
    documents: store.documents,
    memory: store.memory,
    events: store.events,
    processed: store.processed,
    history: store.history,
    close: () => store.close(),
    outbox: {
      record: (response, at) => outbox.record(response, at),
      unsettled: (limit) => outbox.unsettled(limit),
      get: (key) => outbox.get(key),
      markPartSent: (key, part) => (crashed() ? never : outbox.markPartSent(key, part)),
      settle: (key, settlement, lastPart) => (crashed() ? never : outbox.settle(key, settlement, lastPart)),
    },
  };
}

/** Runs a bot that dies right after its first webhook post, then a fresh one on the same store. */
async function crashAndRestart(fake: FakeDiscord, ask: () => void): Promise<DiscordHarness> {
  const store = createMemoryStore();
  const dying = crashingOutbox(store, () => fake.executions.length >= 1);
  const first = await startDiscordHarness({
    fake,
    store: dying,
    runtime: { model, persistence: { durable: true } },
  });
  ask();
  await until(() => fake.executions.length >= 1);
  first.bot.stopListening();
  await first.runtime.stop({ deadlineMs: 0 });
  await first.bot.close();
  expect(await store.outbox.unsettled()).toHaveLength(1);
  const second = await startDiscordHarness({
    fake,
    store,
    runtime: { model, persistence: { durable: true } },
  });
  running.push(second);
  await until(() => second.transport.reconciled === 1 || fake.executions.length > 1);
  await second.runtime.whenIdle();
  expect(await store.outbox.unsettled()).toEqual([]);
  return second;
}

describe('Discord restart between the webhook post and the outbox settle (break attempts)', () => {
  it('does not post the answer twice when the message it answered mentions a person (the quote is rebuilt from Discord after the restart)', async () => {
    const fake = await startFakeDiscord({ guilds: [defaultGuild] });
    closers.push(() => fake.close());
    const grace = { id: '300000000000000002', username: 'grace', global_name: 'Grace' };
    await crashAndRestart(fake, () =>
      fake.postMessage({
        channelId: GENERAL,
        author: ada,
        content: `Nova, ask <@${grace.id}> about it`,
        mentions: [grace],
      }),
    );
    expect(fake.executions).toHaveLength(1);
  });

  it('does not post the answer twice when the message it answered carried an attachment', async () => {
    const fake = await startFakeDiscord({ guilds: [defaultGuild] });
    closers.push(() => fake.close());
    await crashAndRestart(fake, () =>
      fake.postMessage({
        channelId: GENERAL,
        author: ada,
        content: 'Nova, look at this',
        attachments: [{ filename: 'fossil.png', size: 2048, content_type: 'image/png' }],
      }),
    );
    expect(fake.executions).toHaveLength(1);
  });

  it('does not post the answer twice when the message it answered was deleted before the restart', async () => {
    const fake = await startFakeDiscord({ guilds: [defaultGuild] });
    closers.push(() => fake.close());
    let asked = '';
    const store = createMemoryStore();
    const dying = crashingOutbox(store, () => fake.executions.length >= 1);
    const first = await startDiscordHarness({
      fake,
      store: dying,
      runtime: { model, persistence: { durable: true } },
    });
    asked = fake.postMessage({ channelId: GENERAL, author: ada, content: 'Nova, one thing' }).id;
    await until(() => fake.executions.length >= 1);
    first.bot.stopListening();
    await first.runtime.stop({ deadlineMs: 0 });
    await first.bot.close();
    // The person deletes their message while the bot is down.
    const list = fake.messages.get(GENERAL) ?? [];
    list.splice(
      list.findIndex((m) => m.id === asked),
      1,
    );
    const second = await startDiscordHarness({
      fake,
      store,
      runtime: { model, persistence: { durable: true } },
    });
    running.push(second);
    await until(() => second.transport.reconciled === 1 || fake.executions.length > 1);
    await second.runtime.whenIdle();
    expect(fake.executions).toHaveLength(1);
  });
});
