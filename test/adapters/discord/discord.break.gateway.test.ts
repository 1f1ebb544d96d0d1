import { afterEach, describe, expect, it } from 'vitest';
import type { TroupeError } from '../../../src/ports/troupeError.js';
import { mockModel } from '../../../src/testing/index.js';
import {
  ada,
  type DiscordHarness,
  GENERAL,
  startDiscordHarness,
  waitUntil,
} from '../../support/discordHarness.js';

const running: DiscordHarness[] = [];
afterEach(async () => {
  for (const h of running.splice(0)) await h.stop();
});

const until = (check: () => boolean | undefined, timeout = 8_000) => waitUntil(check, timeout);

const model = mockModel('Here.');

describe('Discord gateway closes after login (break attempts)', () => {
  it.each([
    [4004, 'TROUPE_DISCORD_TOKEN_INVALID', /Reset Token/u],
    [4014, 'TROUPE_DISCORD_INTENT_MISSING', /Privileged Gateway Intents/u],
  ])(
    'close %i while running is reported as %s (the bot would otherwise go deaf silently)',
    async (code, troupeCode, help) => {
      const lost: TroupeError[] = [];
      const h = await startDiscordHarness({
        runtime: { model },
        bot: { onGatewayLost: (e) => lost.push(e) },
      });
      running.push(h);
      h.fake.closeGateway(code);
      await until(() => lost.length >= 1);
      expect(lost[0]?.code).toBe(troupeCode);
      expect(lost[0]?.message).toMatch(/while the bot was running/u);
      expect(lost[0]?.message).toMatch(help);
    },
  );

  it('a resumable close: the bot comes back and answers, and nothing is reported as lost', async () => {
    const lost: TroupeError[] = [];
    const h = await startDiscordHarness({ runtime: { model }, bot: { onGatewayLost: (e) => lost.push(e) } });
    running.push(h);
    const { fake } = h;
    fake.closeGateway(1001);
    await until(() => fake.identifies.length >= 2);
    fake.postMessage({ channelId: GENERAL, author: ada, content: 'Nova?' });
    await until(() => fake.executions.length >= 1);
    expect(fake.executions).toHaveLength(1);
    expect(lost).toEqual([]);
  });

  it('a clean stop is not reported as a lost gateway', async () => {
    const lost: TroupeError[] = [];
    const h = await startDiscordHarness({ runtime: { model }, bot: { onGatewayLost: (e) => lost.push(e) } });
    await h.stop();
    expect(lost).toEqual([]);
  });
});
