import { afterEach, describe, expect, it } from 'vitest';
import {
  createDiscordClient,
  DiscordTransport,
  startDiscordBot,
} from '../../../src/adapters/discord/index.js';
import { createMemoryStore } from '../../../src/adapters/store/memory/memoryStore.js';
import { createRuntime } from '../../../src/createRuntime.js';
import { silentLogger } from '../../../src/logging/logger.js';
import type { RoutingOutcome } from '../../../src/ports/routingOutcome.js';
import { mockModel } from '../../../src/testing/index.js';
import {
  ada,
  defaultAvatars,
  defaultGuild,
  GENERAL,
  GUILD,
  waitUntil,
} from '../../support/discordHarness.js';
import { startFakeDiscord } from '../../support/fakeDiscord.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const until = (check: () => boolean | undefined, timeout = 10_000) => waitUntil(check, timeout);

const model = mockModel('Only once.');

describe('a slow Discord (break attempt)', () => {
  it('a webhook post Discord carries out but answers too late for the REST client is not posted again', async () => {
    const fake = await startFakeDiscord({ guilds: [defaultGuild] });
    closers.push(() => fake.close());
    const client = createDiscordClient({ apiUrl: fake.restApi });
    // discord.js gives up on a request after its REST timeout (15 s by default) and sends it again,
    // while a send may take 60 s: the same proportions, scaled down.
    client.rest.options.timeout = 200;
    const logger = silentLogger();
    const transport = new DiscordTransport({ client, logger, sendTimeoutMs: 2_000 });
    const store = createMemoryStore();
    const runtime = createRuntime({ avatars: defaultAvatars, transports: [transport], store, logger, model });
    const bot = await startDiscordBot({
      token: fake.token,
      client,
      transport,
      runtime,
      avatars: runtime.avatars,
      store,
      commandGuildIds: [GUILD],
      logger,
    });
    closers.push(async () => {
      bot.stopListening();
      await runtime.stop({ deadlineMs: 1_000 });
      await bot.close();
    });
    const outcomes: RoutingOutcome[] = [];
    runtime.outcomes$.subscribe((o) => outcomes.push(o));
    fake.failNext(/^POST \/webhooks\/\d+\/[\w-]+$/u, { status: 200, actThenHang: true });
    fake.postMessage({ channelId: GENERAL, author: ada, content: 'Nova, once please' });
    await until(() => outcomes.length >= 1);
    await runtime.whenIdle();
    expect(outcomes[0]).toMatchObject({ sent: true });
    expect(fake.executions).toHaveLength(1);
  });
});

describe('a slow and rate-limiting Discord (break attempt)', () => {
  it('when the look for an earlier post is itself rate-limited for long, the part waits rather than being posted blind a second time', async () => {
    const { startDiscordHarness } = await import('../../support/discordHarness.js');
    const h = await startDiscordHarness({
      runtime: { model, retry: { maxAttempts: 5, baseDelayMs: 1, maxDelayMs: 5_000 } },
      sendTimeoutMs: 500,
    });
    closers.push(() => h.stop());
    const outcomes: RoutingOutcome[] = [];
    h.runtime.outcomes$.subscribe((o) => outcomes.push(o));
    // The post goes out but its answer never comes; then the channel's history is rate-limited.
    h.fake.failNext(/^POST \/webhooks\/\d+\/[\w-]+$/u, { status: 200, actThenHang: true });
    h.fake.failNext(/^GET \/channels\/\d+\/messages$/u, { status: 429, retryAfter: 1.2 });
    h.fake.postMessage({ channelId: GENERAL, author: ada, content: 'Nova, once please' });
    await until(() => outcomes.length >= 1, 15_000);
    await h.runtime.whenIdle();
    expect(outcomes[0]).toMatchObject({ sent: true });
    expect(h.fake.executions).toHaveLength(1);
  }, 30_000);
});

describe('a Discord that fails after posting (break attempt)', () => {
  it('a webhook post answered with a 502 after Discord posted it is not posted again', async () => {
    const { startDiscordHarness } = await import('../../support/discordHarness.js');
    const h = await startDiscordHarness({
      runtime: { model, retry: { maxAttempts: 4, baseDelayMs: 1, maxDelayMs: 50 } },
    });
    closers.push(() => h.stop());
    const outcomes: RoutingOutcome[] = [];
    h.runtime.outcomes$.subscribe((o) => outcomes.push(o));
    h.fake.failNext(/^POST \/webhooks\/\d+\/[\w-]+$/u, { status: 502, actThenFail: true });
    h.fake.postMessage({ channelId: GENERAL, author: ada, content: 'Nova, once please' });
    await until(() => outcomes.length >= 1, 15_000);
    await h.runtime.whenIdle();
    expect(outcomes[0]).toMatchObject({ sent: true });
    expect(h.fake.executions).toHaveLength(1);
  }, 30_000);
});
