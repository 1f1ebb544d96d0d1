/**
 * The crash test's child program:
 *
 *   node --import tsx test/support/crashChild.ts <dir> <seed> <play|finish>
 *
 * It runs a Troupe runtime on `<dir>/troupe.db` with the system clock, short timings, the offline
 * model slowed down by a seeded latency, and a journal transport (every message the "platform"
 * takes is appended to `deliveries.jsonl` and fsynced before the receipt returns; keys it already
 * took are duplicates, as with a platform that has idempotent sends). It plays the seeded script
 * from `script.cursor`, written after each event is accepted, so a restarted child continues
 * where the killed one stopped.
 *
 * `play` keeps running after the script until it is killed. `finish` plays what is left, waits
 * until no channel has a turn in flight, a thread or a follow-up pending, stops the runtime and
 * writes `final.json`.
 *
 * Every stored channel document gets a marker (run, effect sequence number): which of the logged
 * floor effects the stored state reflects. The test uses it to tell the effects that survived a
 * kill from those that were lost with the process's memory.
 */
import {
  appendFileSync,
  closeSync,
  existsSync,
  fsyncSync,
  openSync,
  readFileSync,
  renameSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { LEDGER } from '../../src/actors/channelLedger.js';
import { CHANNELS } from '../../src/actors/channelPersistence.js';
import { createScriptedModel } from '../../src/adapters/llm/scriptedModel.js';
import { openSqliteStore } from '../../src/adapters/store/sqlite/sqliteStore.js';
import { createRuntime } from '../../src/createRuntime.js';
import type { FloorView } from '../../src/floor/channelFloor.js';
import type { TurnGenerationRequest, TurnGenerationResult, TurnModel } from '../../src/ports/model.js';
import type {
  DocumentOperation,
  DocumentStore,
  DocumentWrite,
  StoredDocument,
  TroupeStore,
} from '../../src/ports/store.js';
import type {
  Transport,
  TransportLimits,
  TransportMessage,
  TransportReceipt,
} from '../../src/ports/transport.js';
import {
  type AttemptLine,
  between,
  CRASH_AVATARS,
  CRASH_CHANNELS,
  CRASH_CONFIG,
  CRASH_FILES,
  CRASH_KIND,
  CRASH_MAX_TEXT,
  type CrashMarker,
  crashChannelKey,
  crashPersistence,
  crashScript,
  type DeliveryLine,
  type EffectLine,
  type EventLine,
  type FinalFile,
  hash,
  LONGEST_TTL_MS,
  MARKER_FIELD,
  parseJsonLines,
  prng,
  type RunLine,
  reconnectDelayMs,
  type ScriptedEvent,
} from './crashScenario.js';
import { readCrashChannel } from './crashState.js';

/** Floor effects worth logging: what the test checks deliveries, summon turns and threads against. */
const LOGGED_EFFECTS = new Set([
  'turn.claimed',
  'turn.consumed',
  'turn.released',
  'thread.opened',
  'thread.ended',
  'presence.summoned',
  'presence.dismissed',
]);

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', abort);
      resolve();
    }, ms);
    const abort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', abort, { once: true });
  });
}

function readLines<T>(path: string): T[] {
  return existsSync(path) ? parseJsonLines<T>(readFileSync(path, 'utf8')) : [];
}

/** Appends one JSON line (a single write: a kill never leaves half a line behind). */
function appendLine(path: string, value: unknown): void {
  appendFileSync(path, `${JSON.stringify(value)}\n`);
}

/** Replaces a small file atomically (a kill leaves the old content or the new, never neither). */
function replaceFile(path: string, content: string): void {
  writeFileSync(`${path}.tmp`, content);
  renameSync(`${path}.tmp`, path);
}

/**
 * A platform with idempotent sends, journalled on disk: a message is appended to
 * `deliveries.jsonl` and fsynced before its receipt returns; a key already in the journal (from
 * this run or an earlier one) is a duplicate and is not delivered again. Every attempt is logged
 * to `attempts.jsonl`. Seeded delays before and after taking a message widen the windows in
 * which a kill lands between sending, taking and settling.
 */
class JournalTransport implements Transport {
  readonly kind = CRASH_KIND;
  readonly limits: TransportLimits = { maxTextLength: CRASH_MAX_TEXT, voice: false, attachments: false };
  /** Everything delivered so far, oldest first (earlier runs included). */
  readonly delivered: DeliveryLine[];
  private readonly byKey = new Map<string, string>();
  private readonly fd: number;

  constructor(
    private readonly dir: string,
    private readonly run: number,
    private readonly seed: number,
  ) {
    this.delivered = readLines<DeliveryLine>(join(dir, CRASH_FILES.deliveries));
    for (const d of this.delivered) this.byKey.set(d.key, d.messageId);
    this.fd = openSync(join(dir, CRASH_FILES.deliveries), 'a');
  }

  async send(message: TransportMessage): Promise<TransportReceipt> {
    const random = prng(hash(`${this.seed}:${this.run}:${message.idempotencyKey}`));
    await sleep(between(random, 0, 12));
    const text = message.text ?? '';
    const known = this.byKey.get(message.idempotencyKey);
    const attempt = (result: AttemptLine['result']): AttemptLine => ({
      run: this.run,
      key: message.idempotencyKey,
      result,
      text,
      wall: Date.now(),
    });
    if (known !== undefined) {
      appendLine(join(this.dir, CRASH_FILES.attempts), attempt('duplicate'));
      return { messageId: known, duplicate: true };
    }
    const line: DeliveryLine = {
      run: this.run,
      key: message.idempotencyKey,
      messageId: `${message.channelId}-${this.delivered.length + 1}`,
      channelId: message.channelId,
      ...(message.speaker ? { speaker: message.speaker.avatarId } : {}),
      ...(message.replyTo ? { replyTo: message.replyTo.messageId } : {}),
      text,
      wall: Date.now(),
    };
    writeSync(this.fd, `${JSON.stringify(line)}\n`);
    fsyncSync(this.fd);
    this.delivered.push(line);
    this.byKey.set(line.key, line.messageId);
    appendLine(join(this.dir, CRASH_FILES.attempts), attempt('accepted'));
    // Tells the test, which may kill the process right after a delivery.
    process.stdout.write('delivered\n');
    // The platform took it; the receipt is still on its way back.
    await sleep(between(random, 0, 12));
    return { messageId: line.messageId };
  }

  /** The latest message an avatar sent in a channel (the first part of its latest response). */
  latestAvatarMessage(channelId: string): { messageId: string; avatarId: string } | undefined {
    for (let i = this.delivered.length - 1; i >= 0; i -= 1) {
      const d = this.delivered[i];
      if (d?.channelId === channelId && d.speaker !== undefined && d.key.endsWith('#0'))
        return { messageId: d.messageId, avatarId: d.speaker };
    }
    return undefined;
  }

  close(): void {
    closeSync(this.fd);
  }
}

/**
 * The store's documents, with a marker added to every channel document written: the run and the
 * number of effects logged so far. A flush builds the documents and writes them in one go, so
 * the marker names exactly the effects the stored state reflects. The runtime ignores the field.
 */
class MarkedDocuments implements DocumentStore {
  constructor(
    private readonly inner: DocumentStore,
    private readonly marker: () => CrashMarker,
  ) {}

  private mark<T>(collection: string, value: T): T {
    if ((collection !== CHANNELS && collection !== LEDGER) || typeof value !== 'object' || value === null)
      return value;
    return { ...value, [MARKER_FIELD]: this.marker() };
  }

  get<T = unknown>(collection: string, key: string): Promise<StoredDocument<T> | undefined> {
    return this.inner.get<T>(collection, key);
  }

  put<T = unknown>(
    collection: string,
    key: string,
    value: T,
    options?: { expectedVersion?: number; at?: number },
  ): Promise<number> {
    return this.inner.put(collection, key, this.mark(collection, value), options);
  }

  putMany<T = unknown>(
    collection: string,
    writes: readonly DocumentWrite<T>[],
    at?: number,
  ): Promise<number[]> {
    return this.inner.putMany(
      collection,
      writes.map((w) => ({ ...w, value: this.mark(collection, w.value) })),
      at,
    );
  }

  batch(operations: readonly DocumentOperation[], at?: number): Promise<(number | boolean)[]> {
    return this.inner.batch(
      operations.map((o) => (o.op === 'put' ? { ...o, value: this.mark(o.collection, o.value) } : o)),
      at,
    );
  }

  delete(collection: string, key: string, options?: { expectedVersion?: number }): Promise<boolean> {
    return this.inner.delete(collection, key, options);
  }

  list<T = unknown>(
    collection: string,
    options?: { afterKey?: string; limit?: number; keyPrefix?: string },
  ): Promise<StoredDocument<T>[]> {
    return this.inner.list<T>(collection, options);
  }

  expireIdle(collection: string, idleBefore: number): Promise<number> {
    return this.inner.expireIdle(collection, idleBefore);
  }
}

/** The offline model, taking a seeded 5–40 ms per turn (so kills land mid-generation too). */
function slowModel(seed: number, run: number): TurnModel {
  const inner = createScriptedModel();
  return {
    id: inner.id,
    offline: inner.offline,
    async generateTurn(request: TurnGenerationRequest): Promise<TurnGenerationResult> {
      const random = prng(hash(`${seed}:${run}:${request.channelKey}:${request.turn.turnId}`));
      await sleep(between(random, 5, 40), request.signal);
      return inner.generateTurn(request);
    },
  };
}

async function main(): Promise<void> {
  const [dir, seedText, phase] = process.argv.slice(2);
  if (!dir || !seedText || (phase !== 'play' && phase !== 'finish'))
    throw new Error('usage: crashChild.ts <dir> <seed> <play|finish>');
  const seed = Number(seedText);
  const file = (name: keyof typeof CRASH_FILES) => join(dir, CRASH_FILES[name]);
  const run = readLines<RunLine>(file('runs')).length;
  const cursorText = existsSync(file('cursor')) ? readFileSync(file('cursor'), 'utf8') : '0';
  let cursor = Number(cursorText) || 0;

  const logger = pino({ level: 'info', base: { run } }, pino.destination({ dest: file('log'), sync: true }));
  const sqlite = await openSqliteStore({ path: file('db'), logger });

  // What the kill left in the store, before the runtime touches it, as the runtime restores it.
  const restored: RunLine['restored'] = [];
  for (const channel of CRASH_CHANNELS) {
    const state = await readCrashChannel(sqlite.documents, crashChannelKey(channel));
    if (!state) continue;
    restored.push({
      channelKey: crashChannelKey(channel),
      marker: state.marker ?? null,
      epoch: state.snapshot.epoch,
      inFlight: state.snapshot.inFlight.map((c) => String(c.turnId)),
    });
  }
  const unsettled = (await sqlite.outbox.unsettled()).map((e) => e.key);

  let seq = 0;
  const store: TroupeStore = {
    ...sqlite,
    documents: new MarkedDocuments(sqlite.documents, () => ({ run, seq })),
  };
  const transport = new JournalTransport(dir, run, seed);
  const runtime = createRuntime({
    avatars: CRASH_AVATARS,
    config: CRASH_CONFIG,
    model: slowModel(seed, run),
    transports: [transport],
    store,
    logger,
    persistence: crashPersistence(seed),
  });
  const startedAt = Date.now();
  const runLine: RunLine = { run, phase, startedAt, cursor, restored, unsettled };
  appendLine(file('runs'), runLine);

  runtime.inspection$.subscribe((event) => {
    if (event.type === 'floor.effect' && LOGGED_EFFECTS.has(event.effect.type)) {
      seq += 1;
      const line: EffectLine = {
        run,
        phase,
        seq,
        wall: Date.now(),
        channelKey: event.channelKey,
        kind: 'effect',
        effect: event.effect,
      };
      appendLine(file('effects'), line);
    } else if (event.type === 'actor.activated' || event.type === 'actor.stopped') {
      seq += 1;
      const line: EffectLine = {
        run,
        phase,
        seq,
        wall: Date.now(),
        channelKey: event.channelKey,
        kind: 'actor',
        event: event.type === 'actor.activated' ? 'activated' : 'stopped',
        ...(event.type === 'actor.stopped' ? { reason: event.reason } : {}),
      };
      appendLine(file('effects'), line);
    }
  });
  runtime.errors$.subscribe((error) =>
    appendLine(file('errors'), { run, code: error.code, message: error.message, wall: Date.now() }),
  );
  process.stdout.write('ready\n');

  // The rest of the script. An event sent but not acknowledged (the cursor not moved) before a
  // kill is sent again as it was: a gateway's redelivery.
  await sleep(reconnectDelayMs(seed, run));
  const script = crashScript(seed);
  const sentBefore = new Map(readLines<EventLine>(file('events')).map((l) => [l.index, l.event]));
  for (; cursor < script.length; cursor += 1) {
    const step = script[cursor];
    if (!step) break;
    await sleep(step.gapMs);
    let event: ScriptedEvent | undefined = sentBefore.get(cursor);
    if (!event) {
      event = step.event;
      if (step.reply && event.type === 'channel.message') {
        const target = transport.latestAvatarMessage(event.channel.id);
        if (target) event = { ...event, replyTo: target };
      }
      const line: EventLine = { run, index: cursor, event, wall: Date.now() };
      appendLine(file('events'), line);
    }
    const result = runtime.send(event);
    if (!result.accepted)
      appendLine(file('errors'), {
        run,
        code: result.error.code,
        message: result.error.message,
        index: cursor,
      });
    replaceFile(file('cursor'), String(cursor + 1));
  }

  if (phase === 'play') {
    // Keep going (deadlines, follow-ups) until the test kills the process.
    setInterval(() => undefined, 1_000);
    setTimeout(() => process.exit(3), 60_000);
    return;
  }

  // Wait until nothing is left to happen: no work in flight, and no channel (active or stored)
  // with a turn in flight, a thread or a follow-up pending.
  const waitStart = Date.now();
  const limit = waitStart + LONGEST_TTL_MS * 3 + 30_000;
  const channels = CRASH_CHANNELS.map((id) => ({ kind: CRASH_KIND, id }));
  const quiet = async (): Promise<boolean> => {
    if (runtime.inFlight > 0) return false;
    for (const channel of channels) {
      const view = runtime.view(channel);
      if (view) {
        if (view.inFlight.length > 0 || view.threads.length > 0 || view.pendingFollowUps.length > 0)
          return false;
        continue;
      }
      const stored = (await readCrashChannel(sqlite.documents, crashChannelKey(channel.id)))?.floor.view();
      if (
        stored &&
        (stored.inFlight.length > 0 || stored.threads.length > 0 || stored.pendingFollowUps.length > 0)
      )
        return false;
    }
    return true;
  };
  let stable = 0;
  while (Date.now() < limit && stable < 3) {
    await sleep(50);
    stable = (await quiet()) ? stable + 1 : 0;
  }
  const idle = stable >= 3;
  const views: FloorView[] = [];
  for (const channel of channels) views.push(await runtime.open(channel));
  await runtime.stop();
  await sqlite.close();
  transport.close();
  const final: FinalFile = {
    run,
    idle,
    waitedMs: Date.now() - waitStart,
    channels: views.map((v) => ({
      channelKey: v.channelId,
      now: v.now,
      present: v.present.map((p) => ({ id: p.id, summonTurns: p.summonTurns })),
      threads: v.threads.map((t) => ({ id: t.id, status: t.status, expiresAt: t.expiresAt })),
      inFlight: v.inFlight.map((c) => c.turnId),
      pendingFollowUps: v.pendingFollowUps.length,
    })),
  };
  replaceFile(file('final'), `${JSON.stringify(final, null, 2)}\n`);
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `crash child failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(2);
});
