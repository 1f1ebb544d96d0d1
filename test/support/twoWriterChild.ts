/**
 * One of two processes sharing a store (test/actors/runtime.twoProcesses.test.ts): the SQLite file in
 * `<dir>`, or the MongoDB database at `<mongodb-uri>` when one is given. It runs a Troupe runtime
 * with the system clock and the offline model, sends `count` messages naming Nova in one channel
 * (each from its own person, waiting for the answer before the next), and writes one JSON line per
 * reply sent and per error to `<dir>/<name>.jsonl`.
 *
 * Usage: node --import tsx twoWriterChild.ts <dir> <name> <count> [<mongodb-uri>]
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { openMongoStore } from '../../src/adapters/store/mongo/mongoStore.js';
import { openSqliteStore } from '../../src/adapters/store/sqlite/sqliteStore.js';
import { createRuntime } from '../../src/createRuntime.js';
import { silentLogger } from '../../src/logging/logger.js';
import type { TransportMessage } from '../../src/ports/transport.js';
import { RecordingTransport } from '../../src/testing/index.js';

const [dir = '.', name = 'a', countText = '40', mongoUri] = process.argv.slice(2);
const out = join(dir, `${name}.jsonl`);
const line = (value: unknown) => appendFileSync(out, `${JSON.stringify(value)}\n`);

/** Records every reply it takes for the first time (a resent key it already took is not a new reply). */
class LoggingTransport extends RecordingTransport {
  override async send(message: TransportMessage) {
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
  ? await openMongoStore({ uri: mongoUri, database: 'troupe_two', serverSelectionTimeoutMS: 5_000 })
  : await openSqliteStore({ path: join(dir, 'troupe.db') });
const runtime = createRuntime({
  avatars: [{ id: 'nova', name: 'Nova', residentIn: ['test:shared'] }],
  transports: [transport],
  store,
  logger: silentLogger(),
  config: { perAvatarCooldownMs: 0 },
});
runtime.errors$.subscribe((error) =>
  line({
    type: 'error',
    code: error.code,
    refused: (error.details as { refusedEvents?: number } | undefined)?.refusedEvents,
  }),
);
for (let i = 0; i < Number(countText); i++) {
  const messageId = `${name}-${i}`;
  const result = runtime.send({
    type: 'channel.message',
    channel: { kind: 'test', id: 'shared' },
    messageId,
    author: { kind: 'human', id: `${name}-person-${i}`, name: `Person ${name}${i}` },
    text: `Nova, question ${i} from ${name}?`,
  });
  line({ type: 'asked', messageId, accepted: result.accepted });
  await runtime.whenIdle();
  await new Promise((resolve) => setTimeout(resolve, 5));
}
await runtime.stop();
await store.close();
line({ type: 'done' });
