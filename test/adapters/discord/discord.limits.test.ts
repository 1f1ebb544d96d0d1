import type { Client, REST } from 'discord.js';
import { afterEach, describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../../src/actors/clock.js';
import { createDiscordClient, DiscordTransport } from '../../../src/adapters/discord/index.js';
import { createMemoryStore } from '../../../src/adapters/store/memory/memoryStore.js';
import type { AgentModel } from '../../../src/ports/agentModel.js';
import { type DiscordHarness, RANDOM, startDiscordHarness, waitUntil } from '../../support/discordHarness.js';
import { embedSize } from '../../support/discordLimits.js';
import { assistantOn } from '../../support/emailHarness.js';
import { capturingLogger } from '../../support/erpSpy.js';
import type { FakeDiscord, FakeMessage } from '../../support/fakeDiscord.js';

const NOW = '2026-11-25T09:00:00Z';
const MANAGE_SERVER = String(1 << 5);
const sam = { id: '300000000000000005', username: 'sam', global_name: 'Sam' };
const bob = { id: '300000000000000002', username: 'bob' };
const words = (word: string, n: number) => Array.from({ length: n }, (_, i) => `${word}${i}`).join(' ');

let harness: DiscordHarness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

// A draft as long as the tool allows in each part: 500-character recipients and subject, a long text.
const longDraft: AgentModel = {
  id: 'test:long-draft',
  async nextToolCall() {
    return {
      toolCallId: 'x',
      toolName: 'send_email_tool',
      input: {
        to: Array.from({ length: 11 }, (_, i) => `"Person ${i}" <person.number.${i}@long.example>`)
          .join(', ')
          .slice(0, 500)
          .replace(/,[^,]*$/u, ''),
        subject: `Re: ${words('subject', 150)}`.slice(0, 500),
        content: words('draft', 600),
      },
    };
  },
};
// An email with a long sender, subject and body, and a long id.
const LONG_ID = `long-${'i'.repeat(190)}`;
const longEmail = {
  id: LONG_ID,
  threadId: 't-long',
  from: `${words('Name', 120)} <${'a'.repeat(60)}@b.example>`,
  to: 'sam@acme.dev',
  subject: `Can you ${words('subj', 250)}`,
  body: `Can you send me the report by Friday? ${words('word', 900)}`,
  date: '2026-11-25T08:05:00Z',
};

async function startInbox() {
  const store = createMemoryStore();
  const { assistant, mailbox } = assistantOn(store, new SimulatedClock(Date.parse(NOW)), undefined, {
    agentModel: longDraft,
  });
  const { logger, lines } = capturingLogger();
  harness = await startDiscordHarness({
    store,
    bot: {
      logger,
      inbox: { assistant, target: { kind: 'channel', channelId: RANDOM }, pollMs: 600_000 },
    },
  });
  const inbox = harness.bot.inbox;
  if (!inbox) throw new Error('no inbox');
  await inbox.whenIdle();
  return { store, assistant, mailbox, fake: harness.fake, inbox, lines };
}

const interruptId = `${LONG_ID}#1`;
function postsFor(fake: FakeDiscord): FakeMessage[] {
  return (fake.messages.get(RANDOM) ?? []).filter((m) =>
    (m.embeds as { footer?: { text?: string } }[] | undefined)?.some((e) =>
      e.footer?.text?.startsWith(`Interrupt ${LONG_ID.slice(0, 100)}`),
    ),
  );
}
function embedText(message: FakeMessage | undefined): string {
  const embeds = (message?.embeds ?? []) as {
    title?: string;
    description?: string;
    fields?: { name: string; value: string }[];
  }[];
  return embeds
    .map((e) => [e.title, e.description, ...(e.fields ?? []).map((f) => `${f.name}: ${f.value}`)].join('\n'))
    .join('\n');
}
function customId(message: FakeMessage | undefined, label: string): string {
  const rows = (message?.components ?? []) as { components: { label: string; custom_id: string }[] }[];
  const id = rows.flatMap((r) => r.components).find((c) => c.label === label)?.custom_id;
  if (!id) throw new Error(`no ${label} button`);
  return id;
}
const postRequests = (fake: FakeDiscord) =>
  fake.requests.filter((r) => r.method === 'POST' && r.path === `/channels/${RANDOM}/messages`).length;

describe("the email inbox on Discord keeps to Discord's limits", () => {
  it('a long interrupt is posted clipped to 6,000 characters with the command that shows it whole, and answering it updates its message', async () => {
    const { assistant, mailbox, fake, inbox } = await startInbox();
    await assistant.receive(longEmail);
    await inbox.poll();
    const [post] = postsFor(fake);
    expect(fake.refusals).toEqual([]);
    expect(post).toBeDefined();
    expect(embedSize(firstEmbed(post))).toBeLessThanOrEqual(6_000);
    expect(embedText(post)).toContain(`troupe inbox show ${interruptId.slice(0, 150)}`);
    expect(embedText(post)).toContain('To: "Person 0" <person.number.0@long.example>');

    const press = fake.press({
      messageId: post?.id as string,
      customId: customId(post, 'Accept'),
      user: sam,
      permissions: MANAGE_SERVER,
    });
    const answers = await press.answered(2);
    expect(answers.map((a) => a.kind)).toEqual(['callback', 'edit']);
    expect(fake.refusals).toEqual([]);
    expect(await mailbox.sent()).toHaveLength(1);
    const answered = postsFor(fake)[0];
    expect(embedSize(firstEmbed(answered))).toBeLessThanOrEqual(6_000);
    expect(embedText(answered)).toContain(`✅ Accepted by <@${sam.id}>.`);
    expect(answered?.components).toEqual([]);
  });

  it('a long interrupt answered elsewhere gets its message updated once, not refused at every poll', async () => {
    const { assistant, fake, inbox } = await startInbox();
    await assistant.receive(longEmail);
    await inbox.poll();
    await assistant.answer(interruptId, { type: 'accept' });
    await inbox.poll();
    await inbox.poll();
    expect(fake.refusals).toEqual([]);
    expect(embedText(postsFor(fake)[0])).toContain('✅ Accepted elsewhere.');
    expect(fake.edits).toHaveLength(1);
  });

  it('a message Discord refuses for good (50035) is logged with its code and posted in a reduced form, with its buttons', async () => {
    const { assistant, fake, inbox, lines } = await startInbox();
    fake.failNext(/^POST \/channels\/\d+\/messages$/u, { status: 400, code: 50035 });
    await assistant.receive(longEmail);
    await inbox.poll();
    const posts = postsFor(fake);
    expect(posts).toHaveLength(1);
    expect(embedText(posts[0])).toContain(
      `Too long to show on Discord; read it whole with \`troupe inbox show ${interruptId.slice(0, 150)}`,
    );
    expect(customId(posts[0], 'Accept')).toMatch(/^inbox:accept:/u);
    expect(lines).toContainEqual(expect.objectContaining({ level: 50, interruptId, discordCode: 50035 }));
    expect(postRequests(fake)).toBe(2);
  });

  it('when even the reduced form is refused, the refusal is recorded and logged, and no poll posts it again', async () => {
    const { assistant, fake, inbox, lines, store } = await startInbox();
    fake.failNext(/^POST \/channels\/\d+\/messages$/u, { status: 400, code: 50035 }, 2);
    await assistant.receive(longEmail);
    await inbox.poll();
    await inbox.poll();
    await inbox.poll();
    expect(postRequests(fake)).toBe(2);
    expect(postsFor(fake)).toEqual([]);
    const recorded = await store.documents.get<{ state: string; refusal?: { code: number } }>(
      'discord-inbox',
      interruptId,
    );
    expect(recorded?.value).toMatchObject({ state: 'refused', refusal: { code: 50035 } });
    expect(lines.filter((l) => l.level === 50 && l.discordCode === 50035)).toHaveLength(2);
  });
});

describe("slash command answers keep to Discord's 2,000 characters", () => {
  it('a summon refusal naming many long roles is clipped, not refused', async () => {
    const roles = Array.from({ length: 40 }, (_, i) => `${words('role', 10)}-${i}`);
    harness = await startDiscordHarness({ bot: { summon: { roles } } });
    const refused = harness.fake.interact({
      channelId: RANDOM,
      user: bob,
      command: 'summon',
      options: { avatar: 'rex' },
    });
    const [, reply] = await refused.answered(2);
    expect(harness.fake.refusals).toEqual([]);
    expect(reply?.content).toMatch(/^Summoning here needs one of these roles: @role0/u);
    expect([...(reply?.content ?? '')].length).toBeLessThanOrEqual(2_000);
  });
});

function firstEmbed(message: FakeMessage | undefined): unknown {
  return (message?.embeds as unknown[] | undefined)?.[0];
}

describe("Discord's global rate as the bot was granted it", () => {
  it('the rate given when the client is made reaches every REST client of the adapter (the webhook one too)', () => {
    const client = createDiscordClient({ apiUrl: 'http://127.0.0.1:9/api', globalRequestsPerSecond: 500 });
    const transport = new DiscordTransport({ client });
    // Reached into: the webhook client is the transport's own (its limiter is not the client's).
    const webhookRest = (transport as unknown as { webhookRest: REST }).webhookRest;
    expect(client.rest.options.globalRequestsPerSecond).toBe(500);
    expect(webhookRest.options.globalRequestsPerSecond).toBe(500);
    expect(webhookRest).not.toBe(client.rest);
    void client.destroy();
  });
});

describe('what discord.js keeps in memory', () => {
  it('two messages a channel (a reply and the message it replies to), swept after an hour', async () => {
    harness = await startDiscordHarness();
    const { fake, transport } = harness;
    // Reached into: the transport's client is the one the bot logged in with.
    const client = (transport as unknown as { client: Client }).client;
    for (let i = 0; i < 15; i += 1)
      fake.postMessage({
        channelId: RANDOM,
        author: { id: `3000000000000001${String(i).padStart(2, '0')}`, username: `person${i}` },
        content: `hello ${i}`,
      });
    const last = fake.messages.get(RANDOM)?.at(-1)?.id ?? '';
    await waitUntil(() => transport.memory.get(last) !== undefined);
    const channel = client.channels.cache.get(RANDOM);
    expect(channel && 'messages' in channel ? channel.messages.cache.size : undefined).toBe(2);
    expect(client.options.sweepers?.messages).toMatchObject({ lifetime: 3_600 });
  });
});
