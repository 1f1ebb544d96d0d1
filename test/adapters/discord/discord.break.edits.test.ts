import { afterEach, describe, expect, it } from 'vitest';
import { mockModel } from '../../../src/testing/index.js';
import {
  ada,
  type DiscordHarness,
  GENERAL,
  GUILD,
  RANDOM,
  startDiscordHarness,
  waitUntil,
} from '../../support/discordHarness.js';

let harness: DiscordHarness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

const until = (check: () => boolean | undefined, timeout = 5_000) => waitUntil(check, timeout);

const model = mockModel('Yes?');

describe('Discord edits (break attempts)', () => {
  it('the answer to an edit that names an avatar quotes the edited message and links to it', async () => {
    harness = await startDiscordHarness({ runtime: { model } });
    const { fake, runtime } = harness;
    const typo = fake.postMessage({ channelId: GENERAL, author: ada, content: 'Hello, are you there?' });
    await until(() => harness?.transport.memory.get(typo.id) !== undefined);
    await runtime.whenIdle();
    const before = fake.executions.length;
    fake.dispatch(
      'MESSAGE_UPDATE',
      { ...typo, content: 'Rex, are you there?', edited_timestamp: new Date().toISOString() },
      GUILD,
    );
    await until(() => fake.executions.length >= before + 1);
    await runtime.whenIdle();
    expect(fake.executions.slice(before).map((e) => e.username)).toEqual(['Rex']);
    const quote = fake.executions[before]?.content?.split('\n')[0];
    expect(quote).toBe(
      `> ↪ <@${ada.id}>: Rex, are you there? [↗](https://discord.com/channels/${GUILD}/${GENERAL}/${typo.id})`,
    );
  });
});

describe('Discord edits in a direct message (break attempts)', () => {
  it('the answer to an edit in a DM replies to the edited message (Discord refuses a reference that is not a message id)', async () => {
    const DM = '500000000000000001';
    harness = await startDiscordHarness({
      avatars: [
        { id: 'nova', name: 'Nova', residentIn: [`discord:${DM}`] },
        { id: 'rex', name: 'Rex' },
      ],
      runtime: { model },
    });
    const { fake, runtime } = harness;
    const said = fake.postMessage({ channelId: DM, author: ada, content: 'Nova, hi' });
    await until(() => (fake.messages.get(DM) ?? []).length >= 2);
    await runtime.whenIdle();
    const outcomes: { sent: boolean }[] = [];
    runtime.outcomes$.subscribe((o) => outcomes.push(o));
    fake.dispatch('MESSAGE_UPDATE', {
      ...said,
      content: 'Nova and Rex, hi',
      edited_timestamp: new Date().toISOString(),
    });
    await until(() => outcomes.length >= 1);
    await runtime.whenIdle();
    expect(outcomes.every((o) => o.sent)).toBe(true);
    const references = fake.requests
      .filter((r) => r.method === 'POST' && r.path === `/channels/${DM}/messages`)
      .map((r) => (r.body as { message_reference?: { message_id: string } }).message_reference?.message_id);
    expect(references.slice(1).every((id) => id === said.id)).toBe(true);
  });
});

describe('Discord edits of messages discord.js no longer caches (break attempts)', () => {
  it('an answer going out after a person edited a secret out of an older message quotes the edited text', async () => {
    harness = await startDiscordHarness({ runtime: { model } });
    const { fake, transport } = harness;
    const said = fake.postMessage({ channelId: RANDOM, author: ada, content: 'my password is hunter2' });
    // 15 more messages push it out of discord.js's message cache (2 a channel); the adapter
    // still remembers it (the last 20 of a channel), to quote it.
    for (let i = 0; i < 15; i += 1)
      fake.postMessage({ channelId: RANDOM, author: ada, content: `chatter ${i}` });
    await until(() => transport.memory.get(fake.messages.get(RANDOM)?.at(-1)?.id ?? '') !== undefined);
    fake.dispatch(
      'MESSAGE_UPDATE',
      { ...said, content: 'my password is (removed)', edited_timestamp: new Date().toISOString() },
      GUILD,
    );
    await until(() => transport.memory.get(said.id)?.text === 'my password is (removed)');
    await transport.send({
      idempotencyKey: 'late#0',
      channelId: RANDOM,
      text: 'Noted.',
      replyTo: { messageId: said.id },
    });
    expect(fake.executions.at(-1)?.content).not.toContain('hunter2');
  });
});
