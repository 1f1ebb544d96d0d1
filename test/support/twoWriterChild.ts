/**
 * One of two processes sharing a store (test/actors/runtime.twoProcesses.test.ts): the SQLite file in
 * `<dir>`, or the MongoDB database at `<mongodb-uri>` when one is given. It runs a Troupe runtime
 * with the system clock, the offline model and a one-second channel lease, sends `count` messages
 * naming Nova in one channel (each from its own person, taking turns with the other process: `a-i`,
 * then `b-i`, each sent once the one before is answered, by this process or the other, whichever
 * holds the channel), and writes one JSON line per message
 * asked, reply sent and error to `<dir>/<name>.jsonl`. It stops once the other process has had its
 * messages answered too (or was killed: the test then leaves `<dir>/<other>.killed`).
 *
 * Usage: node --import tsx twoWriterChild.ts <dir> <name> <count> [<mongodb-uri>]
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { openMongoStore } from '../../src/adapters/store/mongo/mongoStore.js';
import { openSqliteStore } from '../../src/adapters/store/sqlite/sqliteStore.js';
import { createRuntime } from '../../src/createRuntime.js';
import { silentLogger } from '../../src/logging/logger.js';
import type { TransportMessage } from '../../src/ports/transport.js';
import { RecordingTransport } from '../../src/testing/index.js';

const [dir = '.', name = 'a', countText = '40', mongoUri] = process.argv.slice(2);
const out = join(dir, `${name}.jsonl`);
const line = (value: unknown) => appendFileSync(out, `${JSON.stringify(value)}\n`);

/**
 * Records every reply it takes for the first time (a resent key it already took is not a new reply).
 * Like a platform that honours idempotency keys, it drops a key the other process already sent: a
 * process killed between a send and storing its settlement leaves the reply unsettled, and the
 * process that takes the channel over resends it under the same key (logged as `resent`).
 */
class LoggingTransport extends RecordingTransport {
  override async send(message: TransportMessage) {
    const key = message.idempotencyKey;
    if (linesOf(other).some((l) => l.type === 'sent' && l.key === key)) {
      line({ type: 'resent', key, replyTo: message.replyTo?.messageId });
      return { messageId: `resent-${key}`, duplicate: true };
    }
    const receipt = await super.send(message);
    if (!receipt.duplicate)
      line({
        type: 'sent',
        key: message.idempotencyKey,
        text: message.text,
        replyTo: message.replyTo?.messageId,
      });
    return receipt;
  }
}
const transport = new LoggingTransport();
const store = mongoUri
  ? await openMongoStore({
      uri: mongoUri,
      database: `troupe_two_${basename(dir).replace(/\W/g, '_')}`,
      serverSelectionTimeoutMS: 5_000,
    })
  : await openSqliteStore({ path: join(dir, 'troupe.db') });
const runtime = createRuntime({
  avatars: [{ id: 'nova', name: 'Nova', residentIn: ['test:shared'] }],
  transports: [transport],
  store,
  logger: silentLogger(),
  config: { perAvatarCooldownMs: 0 },
  persistence: { leaseTtlMs: 1_000 },
});
const other = name === 'a' ? 'b' : 'a';
const linesOf = (who: string): { type: string; key?: string; replyTo?: string }[] => {
  const file = join(dir, `${who}.jsonl`);
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as { type: string; key?: string; replyTo?: string });
};
/** Waits (polling the two processes' files) until `condition` holds; gives up after a minute. */
async function waitFor(what: string, condition: () => boolean): Promise<void> {
  const giveUpAt = Date.now() + 60_000;
  while (!condition()) {
    if (Date.now() > giveUpAt) {
      line({ type: 'timeout', what });
      process.exit(1);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
const answeredAnywhere = (messageId: string) =>
  [...linesOf(name), ...linesOf(other)].some((l) => l.type === 'sent' && l.replyTo === messageId);
runtime.errors$.subscribe((error) =>
  line({
    type: 'error',
    code: error.code,
    refused: (error.details as { refusedEvents?: number } | undefined)?.refusedEvents,
  }),
);
const otherKilled = () => existsSync(join(dir, `${other}.killed`));
const otherDone = () => otherKilled() || linesOf(other).some((l) => l.type === 'answered-all');
for (let i = 0; i < Number(countText); i++) {
  const messageId = `${name}-${i}`;
  // Taking turns keeps two mentions from meeting on the floor (which answers them together).
  const before = name === 'a' ? (i > 0 ? `b-${i - 1}` : undefined) : `a-${i}`;
  if (before) await waitFor(`the answer to ${before}`, () => otherDone() || answeredAnywhere(before));
  const result = runtime.send({
    type: 'channel.message',
    channel: { kind: 'test', id: 'shared' },
    messageId,
    author: { kind: 'human', id: `${name}-person-${i}`, name: `Person ${name}${i}` },
    text: `Nova, question ${i} from ${name}?`,
  });
  line({
    type: 'asked',
    messageId,
    accepted: result.accepted,
    handedOver: result.accepted && result.handedOver,
  });
  await waitFor(`the answer to ${messageId}`, () => answeredAnywhere(messageId));
}
line({ type: 'answered-all' });
// The channel's holder stays until the other process's messages are answered too.
await waitFor(`${other} to be answered`, otherDone);
await runtime.whenIdle();
await runtime.stop();
await store.close();
line({ type: 'done' });
