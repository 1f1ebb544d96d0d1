import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../../src/adapters/store/memory/memoryStore.js';
import type { RoutingOutcome } from '../../../src/ports/routingOutcome.js';
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
import { startFakeDiscord } from '../../support/fakeDiscord.js';

const { running, closers } = stopAfterEach();

const until = (check: () => boolean | undefined, timeout = 8_000) => waitUntil(check, timeout);

const WEBHOOK_EXECUTE = /^POST \/webhooks\/\d+\/[\w-]+$/u;
const LONG = Array.from({ length: 80 }, (_, i) => `Line ${i + 1} of a long answer about fossils.`).join('\n');

async function harness(options: Parameters<typeof startDiscordHarness>[0] = {}): Promise<DiscordHarness> {
  const h = await startDiscordHarness(options);
  running.push(h);
  return h;
}

/** The answer's text as people read it: every part, the first without its quote line. */
function answerText(h: DiscordHarness): string {
  return h.fake.executions
    .map((e, i) => (i === 0 ? (e.content ?? '').split('\n').slice(1).join('\n') : (e.content ?? '')))
    .join('\n');
}

describe('Discord when the platform fails (break attempts)', () => {
  it('a webhook deleted between two parts of one answer: the rest arrives through a new webhook, nothing twice', async () => {
    const h = await harness({ runtime: { model: mockModel(LONG), maxReplyChars: 6_000 } });
    const { fake, runtime } = h;
    const outcomes: RoutingOutcome[] = [];
    runtime.outcomes$.subscribe((o) => outcomes.push(o));
    // An admin deletes the webhook the moment the first part is posted.
    void fake.executed(1).then((done) => fake.deleteWebhook(done[0]?.webhookId as string));
    fake.postMessage({ channelId: GENERAL, author: ada, content: 'Nova, everything please' });
    await until(() => outcomes.length >= 1);
    expect(outcomes[0]).toMatchObject({ sent: true });
    expect(new Set(fake.executions.map((e) => e.webhookId)).size).toBe(2);
    expect(answerText(h)).toBe(LONG);
  });

  it('a global 429 delays the answer and loses nothing', async () => {
    const h = await harness({ runtime: { model: mockModel('After the wait.') } });
    const { fake, runtime } = h;
    fake.failNext(WEBHOOK_EXECUTE, { status: 429, retryAfter: 0.3, global: true });
    const outcomes: RoutingOutcome[] = [];
    runtime.outcomes$.subscribe((o) => outcomes.push(o));
    fake.postMessage({ channelId: GENERAL, author: ada, content: 'Nova?' });
    await until(() => outcomes.length >= 1);
    expect(outcomes[0]).toMatchObject({ sent: true });
    expect(fake.executions).toHaveLength(1);
  });

  it('a 429 whose retry_after is longer than the send timeout: the answer still arrives, once', async () => {
    const h = await harness({
      runtime: {
        model: mockModel('Patience.'),
        retry: { maxAttempts: 4, baseDelayMs: 1, maxDelayMs: 5_000 },
      },
      sendTimeoutMs: 500,
    });
    const { fake, runtime } = h;
    fake.failNext(WEBHOOK_EXECUTE, { status: 429, retryAfter: 1.2 });
    const outcomes: RoutingOutcome[] = [];
    runtime.outcomes$.subscribe((o) => outcomes.push(o));
    fake.postMessage({ channelId: GENERAL, author: ada, content: 'Nova?' });
    await until(() => outcomes.length >= 1, 15_000);
    expect(outcomes[0]).toMatchObject({ sent: true });
    // Real time on purpose: discord.js's REST queue waits out the 1.2 s retry_after on real timers;
    // a blind resend would have reached the fake within this window.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(fake.executions).toHaveLength(1);
  }, 30_000);

  it('a REST call that hangs when the bot stops: the outbox keeps the entry and the next start posts it once', async () => {
    const fake = await startFakeDiscord({ guilds: [defaultGuild] });
    closers.push(() => fake.close());
    const store = createMemoryStore();
    const model = mockModel('Once.');
    const first = await startDiscordHarness({
      fake,
      store,
      runtime: { model, persistence: { durable: true } },
    });
    fake.failNext(WEBHOOK_EXECUTE, { status: 0, hang: true });
    fake.postMessage({ channelId: GENERAL, author: ada, content: 'Nova, hello' });
    await until(() => fake.requests.some((r) => r.method === 'POST' && /^\/webhooks\//u.test(r.path)));
    first.bot.stopListening();
    await first.runtime.stop({ deadlineMs: 0 });
    await first.bot.close();
    expect(await store.outbox.unsettled()).toHaveLength(1);
    const second = await harness({ fake, store, runtime: { model, persistence: { durable: true } } });
    await until(() => fake.executions.length >= 1);
    await second.runtime.whenIdle();
    expect(await store.outbox.unsettled()).toEqual([]);
    expect(fake.executions).toHaveLength(1);
  });
});

describe('Discord channels the bot has not seen (break attempts)', () => {
  it('a thread whose parent channel is not cached either (both made after login) is answered through the parent’s webhook', async () => {
    const PARENT = '200000000000000071';
    const THREAD_ID = '200000000000000072';
    const h = await harness({
      avatars: [{ id: 'nova', name: 'Nova', residentIn: [`discord:${THREAD_ID}`] }],
      runtime: { model: mockModel('Found it.') },
    });
    const { fake, runtime } = h;
    fake.addChannel(defaultGuild.id, { id: PARENT, name: 'new-channel', type: 0 });
    fake.addChannel(defaultGuild.id, { id: THREAD_ID, name: 'new thread', type: 11, parent_id: PARENT });
    fake.postMessage({ channelId: THREAD_ID, author: ada, content: 'Nova, in here' });
    await until(() => fake.executions.length >= 1);
    await runtime.whenIdle();
    expect(fake.executions[0]).toMatchObject({ threadId: THREAD_ID, username: 'Nova' });
    expect(fake.webhooks.size).toBe(1);
    expect([...fake.webhooks.values()][0]?.channel_id).toBe(PARENT);
  });
});

describe('Discord long rate limits on the other requests of a send (break attempts)', () => {
  it('a 429 longer than a send may take on the first webhook lookup of a channel: the answer still arrives, once', async () => {
    const h = await harness({
      runtime: {
        model: mockModel('Patience.'),
        retry: { maxAttempts: 4, baseDelayMs: 1, maxDelayMs: 5_000 },
      },
      sendTimeoutMs: 500,
    });
    const { fake, runtime } = h;
    fake.failNext(/^GET \/channels\/\d+\/webhooks$/u, { status: 429, retryAfter: 1.2 });
    const outcomes: RoutingOutcome[] = [];
    runtime.outcomes$.subscribe((o) => outcomes.push(o));
    fake.postMessage({ channelId: GENERAL, author: ada, content: 'Nova?' });
    await until(() => outcomes.length >= 1, 15_000);
    expect(outcomes[0]).toMatchObject({ sent: true });
    expect(fake.executions).toHaveLength(1);
  }, 30_000);
});
