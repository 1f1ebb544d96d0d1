import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../../src/adapters/store/memory/memoryStore.js';
import type { RoutingOutcome } from '../../../src/ports/routingOutcome.js';
import type { TroupeStore } from '../../../src/ports/store.js';
import { isTroupeError } from '../../../src/ports/troupeError.js';
import { mockModel } from '../../../src/testing/index.js';
import {
  ada,
  type DiscordHarness,
  defaultGuild,
  GENERAL,
  RANDOM,
  startDiscordHarness,
  stopAfterEach,
  THREAD,
  waitUntil,
} from '../../support/discordHarness.js';
import { startFakeDiscord } from '../../support/fakeDiscord.js';

const { running, closers } = stopAfterEach();

const until = (check: () => boolean | undefined, timeout = 5_000) => waitUntil(check, timeout);

async function harness(options: Parameters<typeof startDiscordHarness>[0] = {}): Promise<DiscordHarness> {
  const h = await startDiscordHarness(options);
  running.push(h);
  return h;
}

describe('Discord when the platform fails', () => {
  it('a 429 with retry_after delays the answer and loses nothing: every part arrives, in order', async () => {
    const long = Array.from({ length: 60 }, (_, i) => `Line ${i + 1} of a long answer about fossils.`).join(
      '\n',
    );
    const h = await harness({ runtime: { model: mockModel(long), maxReplyChars: 6_000 } });
    const { fake, runtime } = h;
    // The first two webhook executions are rate-limited; discord.js's queue waits and retries.
    fake.failNext(/^POST \/webhooks\/\d+\/[\w-]+$/u, { status: 429, retryAfter: 0.5 }, 2);
    const outcomes: RoutingOutcome[] = [];
    runtime.outcomes$.subscribe((o) => outcomes.push(o));
    fake.postMessage({ channelId: GENERAL, author: ada, content: 'Nova, everything please' });
    await until(() => outcomes.length >= 1);
    const executions = fake.requests.filter((r) => r.method === 'POST' && /^\/webhooks\//u.test(r.path));
    expect(executions.length).toBe(fake.executions.length + 2);
    expect(outcomes[0]).toMatchObject({ sent: true });
    expect(outcomes[0]?.parts.map((p) => p.messageId)).toEqual(fake.executions.map((e) => e.message.id));
    const text = fake.executions
      .map((e, i) => (i === 0 ? (e.content ?? '').split('\n').slice(1).join('\n') : (e.content ?? '')))
      .join('\n');
    expect(text).toBe(long);
  });

  it('a channel’s webhook is created once even when its first sends race (the channel and its thread at once)', async () => {
    const h = await harness({ runtime: { model: mockModel(({ avatar }) => `${avatar.id} speaks`) } });
    const { fake, runtime } = h;
    fake.postMessage({ channelId: GENERAL, author: ada, content: 'Rex, first' });
    fake.postMessage({ channelId: THREAD, author: ada, content: 'Nova, first in the thread' });
    await until(() => fake.executions.length >= 2);
    await runtime.whenIdle();
    const lookups = fake.requests.filter((r) => r.path === `/channels/${GENERAL}/webhooks`);
    expect(lookups.map((r) => r.method)).toEqual(['GET', 'POST']);
    expect(fake.webhooks.size).toBe(1);
  });

  it('a webhook deleted behind the bot’s back is recreated once, even with two sends racing for it', async () => {
    const h = await harness({ runtime: { model: mockModel(({ avatar }) => `${avatar.id} speaks`) } });
    const { fake, runtime } = h;
    fake.postMessage({ channelId: GENERAL, author: ada, content: 'Nova, hi' });
    await until(() => fake.executions.length >= 1);
    await runtime.whenIdle();
    const [first] = [...fake.webhooks.keys()];
    fake.deleteWebhook(first as string);
    // The channel and its thread share the parent's webhook; their sends go out side by side.
    fake.postMessage({ channelId: GENERAL, author: ada, content: 'Rex, hello again' });
    fake.postMessage({ channelId: THREAD, author: ada, content: 'Nova, in the thread' });
    await until(() => fake.executions.length >= 3);
    await runtime.whenIdle();
    const creations = fake.requests.filter(
      (r) => r.method === 'POST' && r.path === `/channels/${GENERAL}/webhooks`,
    );
    expect(creations).toHaveLength(2); // the first one, and one replacement
    expect(fake.webhooks.size).toBe(1);
    expect(
      fake.executions
        .slice(1)
        .map((e) => e.username)
        .sort(),
    ).toEqual(['Nova', 'Rex']);
  });

  it('a crash between the webhook send and the outbox settle does not double-post on restart', async () => {
    const fake = await startFakeDiscord({ guilds: [defaultGuild] });
    closers.push(() => fake.close());
    const store = createMemoryStore();
    // The first process posts, then dies before it can note or settle the send.
    const dying = crashingOutbox(store, () => fake.executions.length >= 1);
    const model = mockModel('Exactly once, please.');
    const first = await startDiscordHarness({
      fake,
      store: dying,
      runtime: { model, persistence: { durable: true } },
    });
    fake.postMessage({ channelId: GENERAL, author: ada, content: 'Nova, say it once' });
    await until(() => fake.executions.length >= 1);
    first.bot.stopListening();
    await first.runtime.stop({ deadlineMs: 0 });
    await first.bot.close();
    const [entry] = await store.outbox.unsettled();
    expect(entry?.sentParts).toEqual([]);

    // The next start resends the unsettled entry: the part is found in the channel, not posted again.
    const second = await harness({ fake, store, runtime: { model, persistence: { durable: true } } });
    await until(() => second.transport.reconciled === 1);
    await second.runtime.whenIdle();
    expect(fake.executions).toHaveLength(1);
    expect(await store.outbox.unsettled()).toEqual([]);
    expect((await store.outbox.get(entry?.key ?? ''))?.settled?.sent).toBe(true);
  });
});

describe('Discord errors an operator can act on', () => {
  it('a bad token fails login with TROUPE_DISCORD_TOKEN_INVALID, not a retry loop', async () => {
    const fake = await startFakeDiscord({ guilds: [defaultGuild] });
    closers.push(() => fake.close());
    const error = await startDiscordHarness({ fake, bot: { token: 'not-the-token' } }).catch(
      (e: unknown) => e,
    );
    expect(isTroupeError(error) && error.code).toBe('TROUPE_DISCORD_TOKEN_INVALID');
    expect((error as Error).message).toMatch(/Reset Token.*DISCORD_TOKEN/u);
  });

  it('the Message Content intent not enabled fails login with TROUPE_DISCORD_INTENT_MISSING', async () => {
    const fake = await startFakeDiscord({ guilds: [defaultGuild], messageContentIntent: false });
    closers.push(() => fake.close());
    const error = await startDiscordHarness({ fake }).catch((e: unknown) => e);
    expect(isTroupeError(error) && error.code).toBe('TROUPE_DISCORD_INTENT_MISSING');
    expect((error as Error).message).toMatch(/Privileged Gateway Intents/u);
  });

  it('a channel without Manage Webhooks: the send fails as TROUPE_TRANSPORT_FORBIDDEN naming the permission, reported once, and /avatars and /summon say so', async () => {
    const fake = await startFakeDiscord({ guilds: [defaultGuild], noManageWebhooks: [RANDOM] });
    closers.push(() => fake.close());
    const problems: string[] = [];
    const h = await harness({
      fake,
      avatars: [{ id: 'rex', name: 'Rex', residentIn: [`discord:${RANDOM}`] }],
      runtime: { model: mockModel('hello'), retry: { maxAttempts: 1 } },
    });
    h.transport.problems(); // none yet
    const outcomes: RoutingOutcome[] = [];
    h.runtime.outcomes$.subscribe((o) => outcomes.push(o));
    fake.postMessage({ channelId: RANDOM, author: ada, content: 'Rex?' });
    await until(() => outcomes.length >= 1);
    expect(outcomes[0]?.error?.code).toBe('TROUPE_TRANSPORT_FORBIDDEN');
    expect(outcomes[0]?.error?.message).toMatch(/lacks Manage Webhooks in #random/u);
    fake.postMessage({ channelId: RANDOM, author: ada, content: 'Rex, again?' });
    await until(() => outcomes.length >= 2);
    for (const p of h.transport.problems()) problems.push(p.channelId);
    expect(problems).toEqual([RANDOM]);

    const avatars = fake.interact({ channelId: RANDOM, user: ada, command: 'avatars' });
    const [shown] = await avatars.answered(1);
    expect(shown?.content).toMatch(/lacks Manage Webhooks here/u);
    expect(shown?.ephemeral).toBe(true);

    const summon = fake.interact({
      channelId: RANDOM,
      user: ada,
      command: 'summon',
      options: { avatar: 'rex' },
    });
    const answers = await summon.answered(2);
    expect(answers[1]?.content).toMatch(
      /Rex is here but could not speak in this channel: .*Manage Webhooks/u,
    );
    expect(fake.executions).toHaveLength(0);
  });
});

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
