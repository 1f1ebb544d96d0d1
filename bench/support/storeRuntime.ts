/**
 * The real runtime over a benchmark store: `createRuntime` with the offline scripted model, a
 * simulated clock, a silent logger and a transport that takes every message and keeps nothing
 * (so the heap figures count the runtime, not a recording of what it sent).
 */
import { SimulatedClock } from '../../src/actors/clock.js';
import { channelFromKey } from '../../src/actors/runtime.js';
import type { Runtime } from '../../src/actors/runtimeOptions.js';
import { createScriptedModel } from '../../src/adapters/llm/scriptedModel.js';
import { createRuntime } from '../../src/createRuntime.js';
import { silentLogger } from '../../src/logging/logger.js';
import type { TroupeStore } from '../../src/ports/store.js';
import type {
  Transport,
  TransportLimits,
  TransportMessage,
  TransportReceipt,
} from '../../src/ports/transport.js';
import { type Cast, STORE_KIND } from './storeFixtures.js';

/** Takes every message at once and keeps only a count. */
class CountingTransport implements Transport {
  readonly kind = STORE_KIND;
  readonly limits: TransportLimits = { maxTextLength: 2000, voice: false, attachments: false };
  taken = 0;

  send(_message: TransportMessage): Promise<TransportReceipt> {
    this.taken += 1;
    return Promise.resolve({ messageId: `n${this.taken}` });
  }
}

export interface BenchRuntime {
  runtime: Runtime;
  clock: SimulatedClock;
  transport: CountingTransport;
  /** Routing outcomes and errors seen so far (counts only). */
  counts: { outcomes: number; sent: number; errors: number; firstError?: string };
}

/** Persistence settings of the benchmark runtimes (the runtime's defaults, written out). */
export const PERSISTENCE = { flushIntervalMs: 250, passivateAfterMs: 10 * 60_000 };

export function benchRuntime(store: TroupeStore, cast: Cast, startAt: number): BenchRuntime {
  const clock = new SimulatedClock(startAt);
  const transport = new CountingTransport();
  const runtime = createRuntime({
    avatars: cast.definitions,
    store,
    clock,
    logger: silentLogger(),
    persistence: PERSISTENCE,
    transports: [transport],
    model: createScriptedModel(),
  });
  const counts: BenchRuntime['counts'] = { outcomes: 0, sent: 0, errors: 0 };
  runtime.outcomes$.subscribe((o) => {
    counts.outcomes++;
    if (o.sent) counts.sent++;
  });
  runtime.errors$.subscribe((e) => {
    counts.errors++;
    counts.firstError ??= `${e.code}: ${e.message}`;
  });
  return { runtime, clock, transport, counts };
}

/** Activates channels through `runtime.open` (load from the store, restore, resume) and waits for all. */
export async function openAll(runtime: Runtime, keys: readonly string[]): Promise<void> {
  await Promise.all(keys.map((key) => runtime.open(channelFromKey(key))));
  await runtime.whenIdle();
}

/**
 * Activates channels the way traffic does: one human message per channel (addressed to nobody),
 * then waits until everything it set off (loads, decisions, any turns, history writes) is done.
 */
export async function messageAll(runtime: Runtime, keys: readonly string[], tag: string): Promise<void> {
  keys.forEach((key, i) => {
    const result = runtime.send({
      type: 'channel.message',
      channel: channelFromKey(key),
      messageId: `${key}:${tag}`,
      author: { kind: 'human', id: `u${i % 9_973}`, name: 'alice' },
      text: 'good morning everyone, what did I miss?',
    });
    if (!result.accepted) throw result.error;
  });
  await runtime.whenIdle();
}
