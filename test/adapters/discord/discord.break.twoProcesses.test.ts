import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../../src/adapters/store/memory/memoryStore.js';
import { mockModel } from '../../../src/testing/index.js';
import {
  ada,
  defaultGuild,
  GENERAL,
  RANDOM,
  startDiscordHarness,
  stopAfterEach,
  waitUntil,
} from '../../support/discordHarness.js';
import { startFakeDiscord } from '../../support/fakeDiscord.js';

const { running, closers } = stopAfterEach();

const until = (check: () => boolean | undefined, timeout = 5_000) => waitUntil(check, timeout);

const model = mockModel(({ avatar }) => `${avatar.name} answers.`);

describe('two bot processes on one store (break attempts)', () => {
  it('the same MESSAGE_CREATE delivered to both is answered once; a slash command delivered to both is answered once', async () => {
    const fake = await startFakeDiscord({ guilds: [defaultGuild] });
    closers.push(() => fake.close());
    // A memory store acting as one shared durable store (MongoDB, SQLite) for both processes.
    const store = createMemoryStore();
    for (let i = 0; i < 2; i += 1) {
      const h = await startDiscordHarness({
        fake,
        store,
        runtime: { model, persistence: { durable: true } },
      });
      running.push(h);
    }
    for (const [i, content] of ['Nova, one', 'Rex, two', 'Nova, three'].entries()) {
      fake.postMessage({ channelId: GENERAL, author: ada, content });
      await until(() => fake.executions.length >= i + 1);
    }
    for (const h of running) await h.runtime.whenIdle();
    await new Promise((r) => setTimeout(r, 200));
    expect(fake.executions).toHaveLength(3);

    const summon = fake.interact({
      channelId: RANDOM,
      user: ada,
      command: 'summon',
      options: { avatar: 'rex' },
    });
    await summon.answered(2);
    for (const h of running) await h.bot.whenCommandsIdle();
    for (const h of running) await h.runtime.whenIdle();
    expect(summon.answers.filter((a) => a.kind === 'callback')).toHaveLength(1);
    expect(fake.executions.filter((e) => e.message.channel_id === RANDOM)).toHaveLength(1);
  });
});
