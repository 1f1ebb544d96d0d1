import { describe, expect, it } from 'vitest';
import { dayUsageLines, dayUsageOf } from '../../../src/actors/usage/dayUsage.js';
import { defaultCoordinationConfig } from '../../../src/config/coordinationConfig.js';
import { mockModel } from '../../../src/testing/index.js';
import {
  ada,
  type DiscordHarness,
  defaultGuild,
  GENERAL,
  RANDOM,
  startDiscordHarness,
  stopAfterEach,
} from '../../support/discordHarness.js';
import { startFakeDiscord } from '../../support/fakeDiscord.js';

const { running, closers } = stopAfterEach();

const model = mockModel('Hello all.');
const bob = { id: '300000000000000002', username: 'bob' };

async function harness(options: Parameters<typeof startDiscordHarness>[0] = {}): Promise<DiscordHarness> {
  const h = await startDiscordHarness({ runtime: { model }, ...options });
  running.push(h);
  return h;
}

/** Records one unpriced call of 12,000 tokens for the avatar in the runtime's ledger. */
function spendTwelveThousandTokens(h: DiscordHarness, avatarId: string): void {
  h.runtime.usage?.record({
    at: Date.now(),
    model: 'test:priced',
    spender: { kind: 'avatar', id: avatarId },
    scope: `discord:${GENERAL}`,
    purpose: 'turn',
    inputTokens: 11_000,
    outputTokens: 1_000,
    characters: 40,
  });
}

describe('slash commands (break attempts)', () => {
  it('/summon of an unknown avatar says so and lists the avatars; nothing is summoned', async () => {
    const h = await harness();
    const answers = await h.fake
      .interact({ channelId: RANDOM, user: ada, command: 'summon', options: { avatar: 'Zorg' } })
      .answered(2);
    expect(answers[1]?.content).toBe('No avatar called “Zorg”. Avatars: 🌟 Nova, 🦖 Rex.');
    expect(answers[1]?.ephemeral).toBe(true);
    expect(h.fake.executions).toHaveLength(0);
  });

  it.each(['REX', '@rEx', 'ｒｅｘ', ' rex '])('/summon %j finds Rex', async (typed) => {
    const h = await harness();
    const answers = await h.fake
      .interact({ channelId: RANDOM, user: ada, command: 'summon', options: { avatar: typed } })
      .answered(2);
    expect(answers[1]?.content).toMatch(/Rex is here/u);
  });

  it('an unknown avatar does not use up one of the person’s daily summons', async () => {
    const h = await harness({ bot: { summon: { perDay: 1 } } });
    await h.fake
      .interact({ channelId: RANDOM, user: ada, command: 'summon', options: { avatar: 'Zorg' } })
      .answered(2);
    const answers = await h.fake
      .interact({ channelId: RANDOM, user: ada, command: 'summon', options: { avatar: 'rex' } })
      .answered(2);
    expect(answers[1]?.content).toMatch(/Rex is here/u);
  });

  it('two /summon racing past a limit of one: exactly one goes through, the other is told the limit', async () => {
    const h = await harness({ bot: { summon: { perDay: 1 } } });
    const a = h.fake.interact({
      channelId: RANDOM,
      user: ada,
      command: 'summon',
      options: { avatar: 'rex' },
    });
    const b = h.fake.interact({
      channelId: RANDOM,
      user: ada,
      command: 'summon',
      options: { avatar: 'nova' },
    });
    const [ra, rb] = await Promise.all([a.answered(2), b.answered(2)]);
    const texts = [ra[1]?.content ?? '', rb[1]?.content ?? ''];
    expect(texts.filter((t) => /is here/u.test(t))).toHaveLength(1);
    expect(texts.filter((t) => /used your 1 summons? for today/u.test(t))).toHaveLength(1);
  });

  it('/dismiss of an avatar that is not here says so and changes nothing', async () => {
    const h = await harness();
    const [answer] = await h.fake
      .interact({ channelId: RANDOM, user: ada, command: 'dismiss', options: { avatar: 'nova' } })
      .answered(1);
    expect(answer?.content).toBe('🌟 Nova is not in this channel.');
    expect(answer?.ephemeral).toBe(true);
  });

  it('/troupe config is refused to a member without Manage Server, and shown to an admin without secrets', async () => {
    const h = await harness({
      bot: { describeConfig: () => ({ store: 'memory', model: 'test:fixed' }) },
    });
    const [refused] = await h.fake
      .interact({ channelId: GENERAL, user: bob, command: 'troupe', subcommand: 'config' })
      .answered(1);
    expect(refused?.content).toBe('/troupe config is for server admins (Manage Server).');
    const [shown] = await h.fake
      .interact({ channelId: GENERAL, user: ada, command: 'troupe', subcommand: 'config', permissions: '8' })
      .answered(1);
    expect(shown?.ephemeral).toBe(true);
    expect(shown?.content).toContain('store  memory');
    expect(shown?.content).not.toContain(h.fake.token);
  });

  it('/troupe usage is refused without Manage Server, and shows an admin each avatar’s day with its caps', async () => {
    const config = {
      ...defaultCoordinationConfig,
      avatarMaxTokensPerDay: 10_000,
      maxTokensPerDay: 1_000_000,
    };
    let h: DiscordHarness | undefined;
    const describeUsage = () => {
      const runtime = h?.runtime;
      return runtime?.usage
        ? dayUsageLines(dayUsageOf(runtime.usage, config, runtime.avatars, Date.now()))
        : [];
    };
    h = await harness({ runtime: { model, config }, bot: { describeUsage } });
    spendTwelveThousandTokens(h, 'nova');
    const [refused] = await h.fake
      .interact({ channelId: GENERAL, user: bob, command: 'troupe', subcommand: 'usage' })
      .answered(1);
    expect(refused?.content).toBe('/troupe usage is for server admins (Manage Server).');
    expect(refused?.ephemeral).toBe(true);
    const [shown] = await h.fake
      .interact({ channelId: GENERAL, user: ada, command: 'troupe', subcommand: 'usage', permissions: '32' })
      .answered(1);
    expect(shown?.ephemeral).toBe(true);
    const lines = shown?.content?.split('\n') ?? [];
    expect(lines[0]).toMatch(
      /^Usage today \(UTC \d{4}-\d\d-\d\d; costs estimated from TROUPE_MODEL_PRICES\):$/u,
    );
    expect(lines[1]).toBe(
      'Nova: 1 call, 12,000 tokens, — (1 call unpriced) today; cap 12,000 of 10,000 tokens today (120.0%) — reached — capped: cap-avatar-tokens (12,000 of 10,000 tokens today)',
    );
    expect(lines[2]).toBe('Rex: 0 calls, 0 tokens, $0 today; cap 0 of 10,000 tokens today (0.0%)');
    expect(lines[3]).toBe(
      'All calls: 1 call, 12,000 tokens, — (1 call unpriced) today; cap 12,000 of 1,000,000 tokens today (1.2%)',
    );
  });

  it('/avatars says which avatar a daily cap keeps quiet, and why', async () => {
    const config = { ...defaultCoordinationConfig, avatarMaxTokensPerDay: 10_000 };
    let h: DiscordHarness | undefined;
    const cappedBy = (avatarId: string) => {
      const runtime = h?.runtime;
      if (!runtime?.usage) return undefined;
      const capped = dayUsageOf(runtime.usage, config, runtime.avatars, Date.now()).avatars.find(
        (a) => a.id === avatarId,
      )?.capped;
      return capped ? `${capped.reason} (${capped.detail})` : undefined;
    };
    h = await harness({ runtime: { model, config }, bot: { cappedBy } });
    spendTwelveThousandTokens(h, 'nova');
    const [shown] = await h.fake.interact({ channelId: GENERAL, user: ada, command: 'avatars' }).answered(1);
    const lines = shown?.content?.split('\n') ?? [];
    expect(lines.find((l) => l.includes('Nova'))).toContain(
      'capped: cap-avatar-tokens (12,000 of 10,000 tokens today)',
    );
    expect(lines.find((l) => l.includes('Rex'))).not.toContain('capped');
  });

  it('/troupe usage with more avatars than a message holds: whole lines, then how many are left out', async () => {
    const many = Array.from({ length: 40 }, (_, i) => ({
      id: `a${i}`,
      name: `Avatar number ${i} of the big troupe`,
    }));
    const config = { ...defaultCoordinationConfig, avatarMaxTokensPerDay: 10_000 };
    let h: DiscordHarness | undefined;
    const describeUsage = () => {
      const runtime = h?.runtime;
      return runtime?.usage
        ? dayUsageLines(dayUsageOf(runtime.usage, config, runtime.avatars, Date.now()))
        : [];
    };
    h = await harness({ avatars: many, runtime: { model, config }, bot: { describeUsage } });
    const [shown] = await h.fake
      .interact({ channelId: GENERAL, user: ada, command: 'troupe', subcommand: 'usage', permissions: '8' })
      .answered(1);
    const content = shown?.content ?? '';
    expect(content.length).toBeLessThanOrEqual(2_000);
    const lines = content.split('\n');
    expect(lines.at(-1)).toMatch(/^… \d+ more lines: `troupe usage` shows them all\.$/u);
    const left = Number(/… (\d+) more/u.exec(lines.at(-1) ?? '')?.[1]);
    // Heading, 40 avatars and the total: every line is either shown whole or counted.
    expect(lines.length - 1 + left).toBe(42);
    expect(lines.slice(1, -1).every((l) => /^Avatar number \d+ of the big troupe: 0 calls/u.test(l))).toBe(
      true,
    );
  });

  it('/avatars in a channel where the bot lacks Manage Webhooks says what is missing', async () => {
    const fake = await startFakeDiscord({ guilds: [defaultGuild], noManageWebhooks: [GENERAL] });
    closers.push(() => fake.close());
    await harness({ fake });
    const [answer] = await fake.interact({ channelId: GENERAL, user: ada, command: 'avatars' }).answered(1);
    expect(answer?.content).toMatch(/lacks Manage Webhooks here/u);
  });
});
