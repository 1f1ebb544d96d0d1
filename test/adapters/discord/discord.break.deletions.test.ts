import { afterEach, describe, expect, it } from 'vitest';
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

const until = (check: () => boolean | undefined, timeout = 5_000) => waitUntil(check, timeout);

const model = mockModel('Answered.');

describe('Discord deletions (break attempts)', () => {
  it('does not quote messages a moderator bulk-deleted (purged) before the answer went out', async () => {
    harness = await startDiscordHarness({ runtime: { model } });
    const { fake, runtime, transport } = harness;
    const said = fake.postMessage({ channelId: GENERAL, author: ada, content: 'Nova my secret is 1234' });
    await until(() => fake.executions.length >= 1);
    await runtime.whenIdle();
    fake.dispatch('MESSAGE_DELETE_BULK', { ids: [said.id], channel_id: GENERAL, guild_id: GUILD }, GUILD);
    const list = fake.messages.get(GENERAL) ?? [];
    list.splice(
      list.findIndex((m) => m.id === said.id),
      1,
    );
    await until(() => transport.memory.get(said.id) === undefined);
    // An answer to it going out now (a resend, or a slow model) quotes nothing of it.
    await transport.send({
      idempotencyKey: 'again#0',
      channelId: GENERAL,
      text: 'Answered.',
      replyTo: { messageId: said.id },
    });
    expect(fake.executions.at(-1)?.content).toBe(
      `> ↪ a message [↗](https://discord.com/channels/${GUILD}/${GENERAL}/${said.id})\nAnswered.`,
    );
  });
});
