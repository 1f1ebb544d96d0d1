import type { Subscription } from 'rxjs';
import { TroupeError } from '../ports/troupeError.js';
import type { ChannelLifecycle } from './channelLifecycle.js';
import type { RuntimeWiring } from './runtimeWiring.js';

/** How long `stop()` waits for work in flight by default. */
export const DEFAULT_STOP_DEADLINE_MS = 30_000;

/**
 * How long the last writes (channels, relationships, usage) may take past the stop deadline: a
 * store that does not answer (a MongoDB server behind a partition hangs each write about 40 s)
 * must not hold `stop()` for ever.
 */
export const STOP_WRITES_GRACE_MS = 10_000;

/**
 * Stops a runtime: waits up to `deadlineMs` for work in flight (past it, sends are abandoned and
 * turns cancelled), then writes every channel and gives its leases back, and flushes
 * relationships and usage, all at once and for at most what is left of the deadline plus
 * {@link STOP_WRITES_GRACE_MS} (past it, what was not written is logged and left); stops every
 * actor, and completes the runtime's streams.
 */
export async function shutDownRuntime(
  wiring: RuntimeWiring,
  channels: ChannelLifecycle,
  outcomeSubscription: Subscription,
  deadlineMs: number,
): Promise<void> {
  const { tracker, logger, routing, registry, relationships, inspect, clock } = wiring;
  const stopBy = clock.now() + deadlineMs;
  if (!(await drainedWithin(wiring, deadlineMs))) {
    const reason = new TroupeError(
      'TROUPE_RUNTIME_STOPPED',
      `The runtime stopped with work still in flight after ${deadlineMs} ms; replies not sent stay in the outbox and are sent on the next start.`,
      { retryable: true },
    );
    logger.warn({ err: reason, inFlight: tracker.active, deadlineMs }, reason.message);
    routing.abandon();
    for (const key of registry.keys()) registry.get(key)?.cancelTurns(reason);
    // Let what the aborts unwind finish (outbox notes, turns giving up) before writing.
    await Promise.race([tracker.drained(), new Promise((resolve) => setImmediate(resolve))]);
  }
  await lastWrites(wiring, stopBy, [
    channels.close(),
    relationships.flush().catch(() => undefined),
    wiring.usage?.flush().catch(() => undefined),
  ]);
  relationships.dispose();
  for (const key of registry.stopAll())
    inspect({ type: 'actor.stopped', at: clock.now(), channelKey: key, reason: 'runtime-stopped' });
  outcomeSubscription.unsubscribe();
  wiring.inspection$.complete();
  wiring.errors$.complete();
  routing.outcomes$.complete();
}

/** Resolves true once no work is in flight, or false when `ms` pass first (on the runtime's clock). */
function drainedWithin({ tracker, clock }: RuntimeWiring, ms: number): Promise<boolean> {
  if (tracker.active === 0) return Promise.resolve(true);
  if (!Number.isFinite(ms)) return tracker.drained().then(() => true);
  return new Promise((resolve) => {
    const timer = clock.setTimer(clock.now() + Math.max(0, ms), () => resolve(false));
    void tracker.drained().then(() => {
      clock.clearTimer(timer);
      resolve(true);
    });
  });
}

/**
 * Waits for the last writes until `stopBy` plus {@link STOP_WRITES_GRACE_MS} (on the runtime's
 * clock); past it, logs what may be lost and returns (the writes go on, and fail once the store is
 * closed).
 */
async function lastWrites(
  { clock, logger }: RuntimeWiring,
  stopBy: number,
  writes: (Promise<unknown> | undefined)[],
): Promise<void> {
  const all = Promise.all(writes);
  const limitMs = Math.max(0, stopBy - clock.now()) + STOP_WRITES_GRACE_MS;
  if (!Number.isFinite(limitMs)) {
    await all;
    return;
  }
  // A failure within the time fails stop() as before; one after it is only logged (nobody waits).
  let gaveUp = false;
  let timer: ReturnType<typeof clock.setTimer> | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = clock.setTimer(clock.now() + limitMs, () => {
      gaveUp = true;
      resolve('late');
    });
  });
  const written = all.then(
    () => 'written' as const,
    (error: unknown) => {
      if (!gaveUp) throw error;
      logger.debug({ err: error }, 'a last write failed after stop() gave up on it');
      return 'written' as const;
    },
  );
  const outcome = await Promise.race([written, late]);
  if (timer !== undefined) clock.clearTimer(timer);
  if (outcome === 'written') return;
  const reason = new TroupeError(
    'TROUPE_RUNTIME_STOPPED',
    `The runtime stopped before the store took its last writes (${limitMs} ms): channel state, relationships and usage changed since their last write may be lost; the next start restores what was stored.`,
    { retryable: true },
  );
  logger.warn({ err: reason, waitedMs: limitMs }, reason.message);
}
