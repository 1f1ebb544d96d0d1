import { afterEach, describe, expect, it } from 'vitest';
import type { RoutingOutcome } from '../../../src/ports/routingOutcome.js';
import { mockModel } from '../../../src/testing/index.js';
import {
  ada,
  type DiscordHarness,
  GENERAL,
  GUILD,
  startDiscordHarness,
  waitUntil,
} from '../../support/discordHarness.js';

let harness: DiscordHarness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

const until = (check: () => boolean | undefined, timeout = 8_000) => waitUntil(check, timeout);

const WEBHOOK_EXECUTE = /^POST \/webhooks\/\d+\/[\w-]+$/u;

describe('Discord when requests fail or hang', () => {
  it('a webhook request that never answers times out, and the retry posts the answer once', async () => {
    harness = await startDiscordHarness({
      runtime: { model: mockModel('Here I am.'), retry: { baseDelayMs: 1, maxDelayMs: 1 } },
      sendTimeoutMs: 300,
    });
    const { fake, runtime } = harness;
    fake.failNext(WEBHOOK_EXECUTE, { status: 0, hang: true });
    const outcomes: RoutingOutcome[] = [];
    runtime.outcomes$.subscribe((o) => outcomes.push(o));
    fake.postMessage({ channelId: GENERAL, author: ada, content: 'Nova, are you there?' });
    await until(() => outcomes.length >= 1);
    expect(outcomes[0]).toMatchObject({ sent: true });
    expect(outcomes[0]?.parts[0]?.attempts).toBe(2);
    expect(fake.executions).toHaveLength(1);
    // The retry first looked for the part in the channel (the hung request might have posted it).
    expect(fake.requests.some((r) => r.method === 'GET' && r.path === `/channels/${GENERAL}/messages`)).toBe(
      true,
    );
  });

  it('500s from Discord are retried and the answer arrives once', async () => {
    harness = await startDiscordHarness({
      runtime: { model: mockModel('Still here.'), retry: { baseDelayMs: 1, maxDelayMs: 1 } },
    });
    const { fake, runtime } = harness;
    fake.failNext(WEBHOOK_EXECUTE, { status: 500 }, 2);
    const outcomes: RoutingOutcome[] = [];
    runtime.outcomes$.subscribe((o) => outcomes.push(o));
    fake.postMessage({ channelId: GENERAL, author: ada, content: 'Rex?' });
    await until(() => outcomes.length >= 1, 20_000);
    expect(outcomes[0]).toMatchObject({ sent: true });
    expect(fake.executions).toHaveLength(1);
  }, 30_000);

  it('after the gateway drops the connection the bot reconnects and keeps answering', async () => {
    harness = await startDiscordHarness({ runtime: { model: mockModel('Back.') } });
    const { fake, runtime } = harness;
    fake.postMessage({ channelId: GENERAL, author: ada, content: 'Nova, one' });
    await until(() => fake.executions.length >= 1);
    await runtime.whenIdle();
    fake.closeGateway(4000);
    await until(() => fake.identifies.length >= 2);
    fake.postMessage({ channelId: GENERAL, author: ada, content: 'Rex, two' });
    await until(() => fake.executions.length >= 2);
    expect(fake.executions.map((e) => e.username)).toEqual(['Nova', 'Rex']);
  });

  it('answers in a thread the bot has not seen yet (created after it connected), through the parent’s webhook', async () => {
    harness = await startDiscordHarness({
      avatars: [{ id: 'nova', name: 'Nova', residentIn: ['discord:200000000000000009'] }],
      runtime: { model: mockModel('Found you.') },
    });
    const { fake, runtime } = harness;
    fake.addChannel(GUILD, { id: '200000000000000009', name: 'new thread', type: 11, parent_id: GENERAL });
    fake.postMessage({
      channelId: '200000000000000009',
      author: ada,
      content: 'Nova, in a brand new thread',
    });
    await until(() => fake.executions.length >= 1);
    await runtime.whenIdle();
    expect(fake.executions[0]).toMatchObject({ threadId: '200000000000000009', username: 'Nova' });
  });

  it('a hostile message (100 mentions, 4,000 characters, invisible and right-to-left characters) is answered, pinging nobody', async () => {
    harness = await startDiscordHarness({
      runtime: { model: mockModel('@everyone <@&1> <@300000000000000001> hi') },
    });
    const { fake, runtime } = harness;
    const people = Array.from({ length: 100 }, (_, i) => ({
      id: String(310000000000000000n + BigInt(i)),
      username: `p${i}`,
    }));
    const text = `Nova ${people.map((p) => `<@${p.id}>`).join(' ')} \u202e\u200b${'x'.repeat(4000)}`.slice(
      0,
      4000,
    );
    fake.postMessage({ channelId: GENERAL, author: ada, content: text, mentions: people });
    await until(() => fake.executions.length >= 1);
    await runtime.whenIdle();
    expect(
      fake.executions.every(
        (e) => JSON.stringify(e.allowedMentions) === JSON.stringify({ parse: [], users: [], roles: [] }),
      ),
    ).toBe(true);
    expect(fake.executions[0]?.content?.length).toBeLessThanOrEqual(2000);
  });
});
