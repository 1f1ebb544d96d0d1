import { readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../../src/actors/clock.js';
import type { EmailAssistant } from '../../../src/actors/email/emailAssistant.js';
import type { DiscordInboxTarget } from '../../../src/adapters/discord/index.js';
import { createMemoryStore } from '../../../src/adapters/store/memory/memoryStore.js';
import { openSqliteStore } from '../../../src/adapters/store/sqlite/sqliteStore.js';
import { type CliIo, runCli } from '../../../src/cli/program.js';
import type { TroupeStore } from '../../../src/ports/store.js';
import {
  type DiscordHarness,
  defaultGuild,
  RANDOM,
  startDiscordHarness,
  waitUntil,
} from '../../support/discordHarness.js';
import { assistantOn } from '../../support/emailHarness.js';
import { type FakeDiscord, type FakeMessage, startFakeDiscord } from '../../support/fakeDiscord.js';

const NOW = '2026-11-25T09:00:00Z';
const MANAGE_SERVER = String(1 << 5);
const sam = { id: '300000000000000005', username: 'sam', global_name: 'Sam' };
const bob = { id: '300000000000000002', username: 'bob' };
const samples = new Map(
  readFileSync(new URL('../../../examples/email/sample-mailbox.jsonl', import.meta.url), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as { id: string })
    .map((e) => [e.id, e]),
);

let harness: DiscordHarness | undefined;
let fakeToClose: FakeDiscord | undefined;
const stores: TroupeStore[] = [];
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
  await fakeToClose?.close();
  fakeToClose = undefined;
  for (const store of stores.splice(0)) await store.close();
});

const until = (check: () => boolean | undefined, timeout = 4_000) => waitUntil(check, timeout);

/** The email assistant (as the CLI opens it) and the bot with its inbox, on one store. */
async function start(
  options: { store?: TroupeStore; fake?: FakeDiscord; target?: DiscordInboxTarget; roles?: string[] } = {},
) {
  const store = options.store ?? createMemoryStore();
  const { assistant, mailbox, calendar } = assistantOn(store, new SimulatedClock(Date.parse(NOW)));
  harness = await startDiscordHarness({
    store,
    ...(options.fake ? { fake: options.fake } : {}),
    bot: {
      inbox: {
        assistant,
        target: options.target ?? { kind: 'channel', channelId: RANDOM },
        ...(options.roles ? { roles: options.roles } : {}),
        // Polls happen when the test asks (poll()) and once at start; the interval is the same code.
        pollMs: 600_000,
      },
    },
  });
  const inbox = harness.bot.inbox;
  if (!inbox) throw new Error('no inbox');
  return { store, assistant, mailbox, calendar, fake: harness.fake, inbox };
}

async function receive(assistant: EmailAssistant, ...ids: string[]) {
  for (const id of ids) await assistant.receive(samples.get(id));
}

/** The bot's message for an interrupt (its embed's footer names it). */
function postFor(fake: FakeDiscord, interruptId: string, channelId = RANDOM): FakeMessage | undefined {
  return (fake.messages.get(channelId) ?? []).find((m) =>
    (m.embeds as { footer?: { text?: string } }[] | undefined)?.some(
      (e) => e.footer?.text === `Interrupt ${interruptId}`,
    ),
  );
}
function postsFor(fake: FakeDiscord, interruptId: string, channelId = RANDOM): FakeMessage[] {
  return (fake.messages.get(channelId) ?? []).filter((m) =>
    (m.embeds as { footer?: { text?: string } }[] | undefined)?.some(
      (e) => e.footer?.text === `Interrupt ${interruptId}`,
    ),
  );
}
function buttons(message: FakeMessage | undefined): string[] {
  const rows = (message?.components ?? []) as { components: { label: string }[] }[];
  return rows.flatMap((r) => r.components.map((c) => c.label));
}
function customId(message: FakeMessage | undefined, label: string): string {
  const rows = (message?.components ?? []) as { components: { label: string; custom_id: string }[] }[];
  const id = rows.flatMap((r) => r.components).find((c) => c.label === label)?.custom_id;
  if (!id) throw new Error(`no ${label} button`);
  return id;
}

/** Sam, who may answer (Manage Server), presses the button `label` of a posted interrupt. */
function pressAsSam(fake: FakeDiscord, message: FakeMessage | undefined, label: string) {
  return fake.press({
    messageId: message?.id as string,
    customId: customId(message, label),
    user: sam,
    permissions: MANAGE_SERVER,
  });
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

describe('the email inbox on Discord: interrupts posted with buttons for what they allow', () => {
  it('an interrupt from a notify email is posted once, with Respond and Ignore only, and the email in it', async () => {
    const { assistant, fake, inbox } = await start();
    await receive(assistant, 'sample-02');
    await inbox.poll();
    const post = postFor(fake, 'sample-02#1');
    expect(buttons(post)).toEqual(['Respond', 'Ignore']);
    expect(embedText(post)).toContain('Project Atlas status update');
    expect(embedText(post)).toContain('Atlas is on track for the 3rd');
    expect(customId(post, 'Ignore')).toBe('inbox:ignore:sample-02#1');
    await inbox.poll();
    expect(postsFor(fake, 'sample-02#1')).toHaveLength(1);
  });

  it('Respond opens a modal for feedback; the feedback takes the email to the response agent, and the message shows it', async () => {
    const { assistant, fake, inbox } = await start();
    await receive(assistant, 'sample-02');
    await inbox.poll();
    const post = postFor(fake, 'sample-02#1');
    const press = pressAsSam(fake, post, 'Respond');
    const [opened] = await press.answered();
    expect(opened).toMatchObject({ kind: 'callback', type: 9 });
    const field = opened?.modal?.components[0];
    expect(field).toMatchObject({
      type: 18,
      label: 'Feedback',
      component: { custom_id: 'feedback', style: 2 },
    });

    const submit = fake.submitModal({
      messageId: post?.id as string,
      customId: opened?.modal?.custom_id as string,
      values: { feedback: 'Tell Jordan thanks, and ask for the launch date.' },
      user: sam,
      permissions: MANAGE_SERVER,
    });
    const answers = await submit.answered(2);
    expect(answers[0]).toMatchObject({ kind: 'callback', type: 6 });
    const record = await assistant.record('sample-02');
    expect(record?.state.value).toEqual({ responding: 'reviewing' });
    expect(record?.state.context.feedback).toEqual(['Tell Jordan thanks, and ask for the launch date.']);
    const shown = embedText(postFor(fake, 'sample-02#1'));
    expect(shown).toContain(
      `💬 Answered with feedback by <@${sam.id}>: “Tell Jordan thanks, and ask for the launch date.”`,
    );
    expect(shown).toContain('Learned (email_assistant/triage_preferences, version 2)');
    expect(buttons(postFor(fake, 'sample-02#1'))).toEqual([]);
    // The draft it brought is posted for review at once.
    await until(() => postFor(fake, 'sample-02#2') !== undefined);
    expect(buttons(postFor(fake, 'sample-02#2'))).toEqual(['Accept', 'Edit', 'Respond', 'Ignore']);
  });

  it('a reply to review: Accept sends it, and the message says to whom', async () => {
    const { assistant, mailbox, fake, inbox } = await start();
    await receive(assistant, 'sample-03');
    await inbox.poll();
    const post = postFor(fake, 'sample-03#1');
    expect(embedText(post)).toContain('To: marco@acme.dev');
    expect(embedText(post)).toContain('Subject: Re: Quick question about the API limits');
    const press = pressAsSam(fake, post, 'Accept');
    const answers = await press.answered(2);
    expect(answers[0]).toMatchObject({ kind: 'callback', type: 6 });
    expect((await mailbox.sent()).map((s) => [s.to, s.subject])).toEqual([
      ['marco@acme.dev', 'Re: Quick question about the API limits'],
    ]);
    const shown = embedText(postFor(fake, 'sample-03#1'));
    expect(shown).toContain(`✅ Accepted by <@${sam.id}>.`);
    expect(shown).toContain('Sent to marco@acme.dev: “Re: Quick question about the API limits”.');
    expect(buttons(postFor(fake, 'sample-03#1'))).toEqual([]);
  });

  it('Edit opens a modal of typed fields pre-filled with the draft; a changed subject is the subject sent', async () => {
    const { assistant, mailbox, fake, inbox } = await start();
    await receive(assistant, 'sample-03');
    await inbox.poll();
    const post = postFor(fake, 'sample-03#1');
    const press = pressAsSam(fake, post, 'Edit');
    const [opened] = await press.answered();
    const inputs = (opened?.modal?.components ?? []).map((c) => c.component);
    expect(inputs.map((i) => [i?.custom_id, i?.style])).toEqual([
      ['to', 1],
      ['subject', 1],
      ['content', 2],
    ]);
    expect(inputs.map((i) => i?.value?.split('\n')[0])).toEqual([
      'marco@acme.dev',
      'Re: Quick question about the API limits',
      'Hi Marco,',
    ]);
    const submit = fake.submitModal({
      messageId: post?.id as string,
      customId: opened?.modal?.custom_id as string,
      values: {
        to: 'marco@acme.dev',
        subject: 'API rate limits: 100 per minute',
        content: inputs[2]?.value as string,
      },
      user: sam,
      permissions: MANAGE_SERVER,
    });
    await submit.answered(2);
    expect((await mailbox.sent()).map((s) => s.subject)).toEqual(['API rate limits: 100 per minute']);
    const shown = embedText(postFor(fake, 'sample-03#1'));
    expect(shown).toContain(`✏️ Edited by <@${sam.id}>.`);
    expect(shown).toContain('Sent to marco@acme.dev: “API rate limits: 100 per minute”.');
    expect(shown).toContain('Learned (email_assistant/response_preferences, version 2)');
  });

  it('an edit with a bad field is refused in private, naming the field; nothing changes and Edit works again', async () => {
    const { assistant, calendar, fake, inbox } = await start();
    await receive(assistant, 'sample-04');
    await inbox.poll();
    const post = postFor(fake, 'sample-04#1');
    const press = pressAsSam(fake, post, 'Edit');
    const [opened] = await press.answered();
    // Six fields, Discord allows five: the time zone keeps its proposed value.
    expect(
      (opened?.modal?.components ?? []).map((c) => [c.component?.custom_id, c.component?.value]),
    ).toEqual([
      ['attendees', 'ben@customer.example'],
      ['subject', 'Meeting next week?'],
      ['duration_minutes', '30'],
      ['preferred_day', '2026-11-26'],
      ['start_time', '09:00'],
    ]);
    const bad = fake.submitModal({
      messageId: post?.id as string,
      customId: opened?.modal?.custom_id as string,
      values: {
        attendees: 'ben@customer.example',
        subject: 'Integration',
        duration_minutes: 'abc',
        preferred_day: '2026-11-26',
        start_time: '09:00',
      },
      user: sam,
      permissions: MANAGE_SERVER,
    });
    const [refused] = await bad.answered();
    expect(refused).toMatchObject({ kind: 'callback', type: 4, ephemeral: true });
    expect(refused?.content).toContain(
      '**Duration minutes** (`duration_minutes`): is not a number (you wrote “abc”)',
    );
    expect((await assistant.pending()).map((i) => i.id)).toEqual(['sample-04#1']);
    expect(buttons(postFor(fake, 'sample-04#1'))).toEqual(['Accept', 'Edit', 'Respond', 'Ignore']);

    const again = pressAsSam(fake, post, 'Edit');
    const [reopened] = await again.answered();
    const good = fake.submitModal({
      messageId: post?.id as string,
      customId: reopened?.modal?.custom_id as string,
      values: {
        attendees: 'ben@customer.example, ana@customer.example',
        subject: 'Integration',
        duration_minutes: '45',
        preferred_day: '2026-11-26',
        start_time: '10:00',
      },
      user: sam,
      permissions: MANAGE_SERVER,
    });
    await good.answered(2);
    expect(
      (await calendar.events()).map((e) => [e.subject, e.durationMinutes, e.startTime, e.attendees]),
    ).toEqual([['Integration', 45, '10:00', ['ben@customer.example', 'ana@customer.example']]]);
    expect(embedText(postFor(fake, 'sample-04#1'))).toContain(
      'Booked “Integration” on 2026-11-26 at 10:00 (Europe/Berlin, 45 min) with ben@customer.example, ana@customer.example.',
    );
  });

  it('Ignore closes the email at once and the message says what was learned', async () => {
    const { assistant, fake, inbox } = await start();
    await receive(assistant, 'sample-02');
    await inbox.poll();
    const post = postFor(fake, 'sample-02#1');
    const press = pressAsSam(fake, post, 'Ignore');
    await press.answered(2);
    expect((await assistant.record('sample-02'))?.state.value).toBe('done');
    const shown = embedText(postFor(fake, 'sample-02#1'));
    expect(shown).toContain(`🚫 Ignored by <@${sam.id}>: the email is closed.`);
    expect(shown).toContain(
      'Learned (email_assistant/triage_preferences, version 2): Added under Ignore: emails like “Project Atlas status update” from jordan@acme.dev.',
    );
  });
});

describe('the email inbox on Discord: who may answer, and answering once', () => {
  it('someone without the role (or Manage Server) is refused in private and nothing changes', async () => {
    const { assistant, fake, inbox } = await start({ roles: ['Summoners'] });
    await receive(assistant, 'sample-02');
    await inbox.poll();
    const post = postFor(fake, 'sample-02#1');
    const refused = fake.press({
      messageId: post?.id as string,
      customId: customId(post, 'Ignore'),
      user: bob,
      permissions: MANAGE_SERVER,
    });
    const [answer] = await refused.answered();
    expect(answer).toMatchObject({ kind: 'callback', type: 4, ephemeral: true });
    expect(answer?.content).toBe('Answering the email inbox needs one of these roles: @Summoners.');
    expect((await assistant.pending()).map((i) => i.id)).toEqual(['sample-02#1']);

    const allowed = fake.press({
      messageId: post?.id as string,
      customId: customId(post, 'Ignore'),
      user: sam,
      roles: ['400000000000000002'],
    });
    await allowed.answered(2);
    expect(await assistant.pending()).toEqual([]);
  });

  it('in a DM inbox only that person answers; the interrupt is posted in their DMs', async () => {
    const { assistant, fake, inbox } = await start({ target: { kind: 'dm', userId: sam.id } });
    await receive(assistant, 'sample-02');
    await inbox.poll();
    expect(fake.requests.some((r) => r.method === 'POST' && r.path === '/users/@me/channels')).toBe(true);
    const dm = [...fake.messages.keys()].find((c) => postFor(fake, 'sample-02#1', c));
    const post = postFor(fake, 'sample-02#1', dm);
    expect(post?.guild_id).toBeUndefined();
    const other = fake.press({
      messageId: post?.id as string,
      customId: customId(post, 'Ignore'),
      user: bob,
    });
    expect((await other.answered())[0]?.content).toBe('Only the inbox’s owner answers it.');
    const owner = fake.press({
      messageId: post?.id as string,
      customId: customId(post, 'Ignore'),
      user: sam,
    });
    await owner.answered(2);
    expect(await assistant.pending()).toEqual([]);
  });

  it('answered from the terminal (troupe inbox answer, another process): the message loses its buttons, and a press says how it was answered', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'troupe-dinbox-'));
    const store = await openSqliteStore({ path: join(dir, 'troupe.db') });
    stores.push(store);
    const { assistant, fake, inbox } = await start({ store });
    await receive(assistant, 'sample-03');
    await inbox.poll();
    const post = postFor(fake, 'sample-03#1');
    expect(buttons(post)).toEqual(['Accept', 'Edit', 'Respond', 'Ignore']);

    let stdout = '';
    const io: CliIo = {
      stdout: (t) => {
        stdout += t;
      },
      stderr: (t) => {
        stdout += t;
      },
      env: {
        TROUPE_DATA_DIR: dir,
        TROUPE_EMAIL_NOW: NOW,
        TROUPE_EMAIL_TIME_ZONE: 'Europe/Berlin',
        LOG_LEVEL: 'silent',
      },
      isTTY: false,
    };
    expect(await runCli(['inbox', 'answer', 'sample-03#1', 'accept'], io), stdout).toBe(0);

    await inbox.poll();
    const updated = postFor(fake, 'sample-03#1');
    expect(buttons(updated)).toEqual([]);
    expect(embedText(updated)).toContain('✅ Accepted elsewhere.');
    expect(embedText(updated)).toContain(
      'Sent to marco@acme.dev: “Re: Quick question about the API limits”.',
    );

    // A press on a stale copy of the message (a client that had not refreshed) is told, in private.
    const late = fake.press({
      messageId: post?.id as string,
      customId: 'inbox:accept:sample-03#1',
      user: sam,
      permissions: MANAGE_SERVER,
    });
    const [told] = await late.answered();
    expect(told).toMatchObject({ kind: 'callback', type: 4, ephemeral: true });
    expect(told?.content).toMatch(/^Already answered: ✅ Accepted elsewhere\./u);
  });

  it('a press on an interrupt answered on Discord says who answered it, from its closed post', async () => {
    const { assistant, store, fake, inbox } = await start();
    await receive(assistant, 'sample-02');
    await inbox.poll();
    const post = postFor(fake, 'sample-02#1');
    const ignoreId = customId(post, 'Ignore');
    await pressAsSam(fake, post, 'Ignore').answered(2);
    await inbox.whenIdle();
    // Closed: out of the open posts a poll lists, kept (by key) with who answered.
    expect(await store.documents.list('discord-inbox-open')).toEqual([]);
    expect((await store.documents.get('discord-inbox', 'sample-02#1'))?.value).toMatchObject({
      state: 'closed',
      by: sam.id,
    });
    const late = fake.press({
      messageId: post?.id as string,
      customId: ignoreId,
      user: bob,
      permissions: MANAGE_SERVER,
    });
    const [told] = await late.answered();
    expect(told?.content).toMatch(new RegExp(`^Already answered: 🚫 Ignored by <@${sam.id}>`, 'u'));
    expect(postsFor(fake, 'sample-02#1')).toHaveLength(1);
  });

  it('after a restart on the same store, nothing is posted twice', async () => {
    const fake = await startFakeDiscord({ guilds: [defaultGuild] });
    fakeToClose = fake;
    const store = createMemoryStore();
    const first = await start({ store, fake });
    await receive(first.assistant, 'sample-02', 'sample-03');
    await first.inbox.poll();
    expect(postsFor(fake, 'sample-02#1')).toHaveLength(1);
    await harness?.stop();
    harness = undefined;
    const posts = () =>
      fake.requests.filter((r) => r.method === 'POST' && r.path === `/channels/${RANDOM}/messages`);
    const before = posts().length;

    const second = await start({ store, fake });
    await second.inbox.poll();
    await second.inbox.poll();
    // Not even tried: the claims say they were posted (the nonce would only cover a few minutes).
    expect(posts()).toHaveLength(before);
    expect(postsFor(fake, 'sample-02#1')).toHaveLength(1);
    expect(postsFor(fake, 'sample-03#1')).toHaveLength(1);
  });

  it('a claim left by a process that stopped before posting is taken over after a minute; a fresh one is not', async () => {
    const store = createMemoryStore();
    const now = Date.now();
    await store.documents.put('discord-inbox', 'sample-02#1', {
      interruptId: 'sample-02#1',
      state: 'posting',
      claimedAt: now - 120_000,
    });
    await store.documents.put('discord-inbox', 'sample-03#1', {
      interruptId: 'sample-03#1',
      state: 'posting',
      claimedAt: now,
    });
    const { assistant, fake, inbox } = await start({ store });
    await receive(assistant, 'sample-02', 'sample-03');
    await inbox.poll();
    expect(postsFor(fake, 'sample-02#1')).toHaveLength(1);
    expect(postsFor(fake, 'sample-03#1')).toHaveLength(0);
  });

  it('a post Discord refuses is tried again at the next poll', async () => {
    const { assistant, fake, inbox } = await start();
    fake.failNext(new RegExp(`^POST /channels/${RANDOM}/messages$`, 'u'), { status: 403, code: 50013 });
    await receive(assistant, 'sample-02');
    await inbox.poll();
    expect(postsFor(fake, 'sample-02#1')).toHaveLength(0);
    await inbox.poll();
    expect(postsFor(fake, 'sample-02#1')).toHaveLength(1);
  });

  it('an interaction delivered twice is answered once', async () => {
    const { assistant, store, fake, inbox } = await start();
    await receive(assistant, 'sample-02');
    await inbox.poll();
    const post = postFor(fake, 'sample-02#1');
    const press = pressAsSam(fake, post, 'Ignore');
    press.redeliver();
    await press.answered(2);
    await inbox.whenIdle();
    await harness?.bot.whenCommandsIdle();
    expect(press.answers.map((a) => [a.kind, a.type])).toEqual([
      ['callback', 6],
      ['edit', undefined],
    ]);
    // The second delivery did not even try to answer (Discord would refuse a second callback).
    expect(fake.requests.filter((r) => r.path.startsWith(`/interactions/${press.id}/`))).toHaveLength(1);
    expect(
      (await store.memory.history('email_assistant/triage_preferences', 'user_preferences')).length,
    ).toBe(2);
  });
});
