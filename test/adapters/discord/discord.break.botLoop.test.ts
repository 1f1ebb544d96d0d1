import { afterEach, describe, expect, it, vi } from 'vitest';
import { mockModel } from '../../../src/testing/index.js';
import {
  ada,
  type DiscordHarness,
  GENERAL,
  otherBot,
  startDiscordHarness,
} from '../../support/discordHarness.js';

let harness: DiscordHarness | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

const model = mockModel('Interesting.');

/** Another bot that answers every avatar message at once, as a second bot of the same kind would. */
function chattyBot(h: DiscordHarness, cap: number): () => void {
  let answered = h.fake.executions.length;
  let sent = 0;
  const timer = setInterval(() => {
    if (h.fake.executions.length > answered && sent < cap) {
      answered = h.fake.executions.length;
      sent += 1;
      h.fake.postMessage({ channelId: GENERAL, author: otherBot, content: 'Nova, and what about this?' });
    }
  }, 5);
  return () => clearInterval(timer);
}

/** Waits until no avatar message has gone out for `quietMs`. */
async function settled(h: DiscordHarness, quietMs = 400): Promise<void> {
  let last = -1;
  await vi.waitFor(
    async () => {
      const now = h.fake.executions.length;
      if (now !== last) {
        last = now;
        throw new Error('still talking');
      }
      await h.runtime.whenIdle();
    },
    { timeout: 20_000, interval: quietMs },
  );
}

describe('Discord with other bots allowed (break attempt)', () => {
  it('an allowed bot that answers every avatar message does not make an endless loop: a few answers, then a person must speak', async () => {
    harness = await startDiscordHarness({ runtime: { model }, bot: { allowBots: [otherBot.id] } });
    const h = harness;
    const stop = chattyBot(h, 50);
    try {
      h.fake.postMessage({ channelId: GENERAL, author: otherBot, content: 'Nova, hello' });
      await settled(h);
      expect(h.fake.executions).toHaveLength(3);
      // A person speaks: the avatars listen to the bot again, a few times.
      h.fake.postMessage({ channelId: GENERAL, author: ada, content: 'Nova, what do you make of gitbot?' });
      await settled(h);
      expect(h.fake.executions).toHaveLength(3 + 1 + 3);
    } finally {
      stop();
    }
  });
});
