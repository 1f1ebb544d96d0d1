/**
 * The fake Discord (test/support/fakeDiscord.ts) in a process of its own, for bench:discord, so
 * its HTTP and gateway work is not counted as the bot's. Driven over IPC:
 *   { type: 'round', text: string[] }  -> posts one message per channel, answers { type: 'posted' }
 *   { type: 'stats' }                  -> answers { type: 'stats', executions, requests }
 * Announces { type: 'ready', restApi, token, channels } once listening.
 */
import { startFakeDiscord } from '../../test/support/fakeDiscord.js';

const channelCount = Number(process.env.BENCH_CHANNELS ?? 100);
const guildId = '100000000000000001';
const channels = Array.from({ length: channelCount }, (_, i) => ({
  id: String(200000000000000000n + BigInt(i + 1)),
  name: `room-${i + 1}`,
  type: 0 as const,
}));
const fake = await startFakeDiscord({ guilds: [{ id: guildId, name: 'Bench', channels }] });
const person = { id: '300000000000000001', username: 'ada', global_name: 'Ada' };

process.on('message', (raw) => {
  const message = raw as { type: string; text?: string[] };
  if (message.type === 'round') {
    channels.forEach((c, i) => {
      fake.postMessage({ channelId: c.id, author: person, content: message.text?.[i] ?? 'hello' });
    });
    process.send?.({ type: 'posted' });
  } else if (message.type === 'stats') {
    process.send?.({ type: 'stats', executions: fake.executions.length, requests: fake.requests.length });
  } else if (message.type === 'close') {
    void fake.close().then(() => process.exit(0));
  }
});
process.send?.({
  type: 'ready',
  restApi: fake.restApi,
  token: fake.token,
  channels: channels.map((c) => c.id),
});
