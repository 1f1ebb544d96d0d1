/**
 * Troupe on Discord for tests: the fake Discord (test/support/fakeDiscord.ts), the real discord.js
 * client logged in against it, the Discord transport, a runtime and the bot, wired as
 * `troupe discord` wires them. Stop it with `stop()`.
 */
import { afterEach, vi } from 'vitest';
import type { AvatarDefinitionInput } from '../../src/actors/avatarDefinition.js';
import type { Runtime, RuntimeOptions } from '../../src/actors/runtimeOptions.js';
import {
  createDiscordClient,
  type DiscordBot,
  type DiscordBotOptions,
  DiscordTransport,
  startDiscordBot,
} from '../../src/adapters/discord/index.js';
import { createMemoryStore } from '../../src/adapters/store/memory/memoryStore.js';
import { createRuntime } from '../../src/createRuntime.js';
import { silentLogger } from '../../src/logging/logger.js';
import type { TroupeStore } from '../../src/ports/store.js';
import { type FakeDiscord, type FakeGuild, startFakeDiscord } from './fakeDiscord.js';

export const GUILD = '100000000000000001';
export const GENERAL = '200000000000000001';
export const RANDOM = '200000000000000002';
export const THREAD = '200000000000000003';
export const FORUM = '200000000000000004';
export const FORUM_POST = '200000000000000005';
export const ada = { id: '300000000000000001', username: 'ada', global_name: 'Ada' };
export const otherBot = { id: '300000000000000009', username: 'gitbot', bot: true };

export const defaultGuild: FakeGuild = {
  id: GUILD,
  name: 'Test Server',
  channels: [
    { id: GENERAL, name: 'general', type: 0 },
    { id: RANDOM, name: 'random', type: 0 },
    { id: THREAD, name: 'a thread', type: 11, parent_id: GENERAL },
    { id: FORUM, name: 'ideas', type: 15 },
    { id: FORUM_POST, name: 'a post', type: 11, parent_id: FORUM },
  ],
  roles: [
    { id: '400000000000000001', name: 'Nova' },
    { id: '400000000000000002', name: 'Summoners' },
  ],
};

export const defaultAvatars: AvatarDefinitionInput[] = [
  {
    id: 'nova',
    name: 'Nova',
    emoji: '🌟',
    pictureUrl: 'https://example.com/nova.png',
    topics: ['stars'],
    residentIn: [`discord:${GENERAL}`, `discord:${THREAD}`],
  },
  { id: 'rex', name: 'Rex', emoji: '🦖', topics: ['fossils'], residentIn: [`discord:${GENERAL}`] },
];

/** A running bot on a fake Discord. */
export interface DiscordHarness {
  fake: FakeDiscord;
  runtime: Runtime;
  transport: DiscordTransport;
  bot: DiscordBot;
  store: TroupeStore;
  /** Stops the bot and the runtime (the fake stays up unless `fake` was made here). */
  stop(): Promise<void>;
}

/** Starts a bot (and a fake Discord, unless one is given). */
export async function startDiscordHarness(
  options: {
    fake?: FakeDiscord;
    avatars?: AvatarDefinitionInput[];
    runtime?: Partial<RuntimeOptions>;
    store?: TroupeStore;
    bot?: Partial<DiscordBotOptions>;
    /** Longest a send may take (default 5 s). */
    sendTimeoutMs?: number;
  } = {},
): Promise<DiscordHarness> {
  const ownFake = options.fake === undefined;
  const fake = options.fake ?? (await startFakeDiscord({ guilds: [defaultGuild] }));
  const client = createDiscordClient({ apiUrl: fake.restApi, directMessages: true });
  const logger = silentLogger();
  const transport = new DiscordTransport({ client, logger, sendTimeoutMs: options.sendTimeoutMs ?? 5_000 });
  const store = options.store ?? createMemoryStore();
  const avatars = options.avatars ?? defaultAvatars;
  const runtime = createRuntime({
    avatars,
    transports: [transport],
    store,
    logger,
    ...options.runtime,
  });
  let bot: DiscordBot;
  try {
    bot = await startDiscordBot({
      token: fake.token,
      client,
      transport,
      runtime,
      avatars: runtime.avatars,
      store,
      commandGuildIds: [GUILD],
      directMessages: true,
      logger,
      loginTimeoutMs: 5_000,
      ...options.bot,
    });
  } catch (error) {
    await runtime.stop({ deadlineMs: 0 });
    if (ownFake) await fake.close();
    throw error;
  }
  return {
    fake,
    runtime,
    transport,
    bot,
    store,
    async stop() {
      bot.stopListening();
      await runtime.stop({ deadlineMs: 2_000 });
      await bot.close();
      if (ownFake) await fake.close();
    },
  };
}

/**
 * Waits until `check` holds, polling every 5 ms: discord.js and the fake talk over HTTP and
 * WebSocket, on real timers. `timeout` (default 60 s of real time) only guards a hang: on a loaded
 * machine everything is slower.
 */
export function waitUntil(check: () => boolean | undefined, timeout = 60_000): Promise<void> {
  return vi.waitFor(
    () => {
      if (!check()) throw new Error('not yet');
    },
    { timeout, interval: 5 },
  );
}

/**
 * The harnesses and closers a test file starts, stopped after each test (harnesses first, then
 * the rest, such as fake servers). Call once at the top of the file.
 */
export function stopAfterEach(): { running: DiscordHarness[]; closers: (() => Promise<void>)[] } {
  const running: DiscordHarness[] = [];
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const h of running.splice(0)) await h.stop();
    for (const close of closers.splice(0)) await close();
  });
  return { running, closers };
}
