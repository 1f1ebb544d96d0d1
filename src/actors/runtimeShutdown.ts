import type { Subscription } from 'rxjs';
import { TroupeError } from '../ports/troupeError.js';
import type { ChannelLifecycle } from './channelLifecycle.js';
import type { RuntimeWiring } from './runtimeWiring.js';

/** How long `stop()` waits for work in flight by default. */
export const DEFAULT_STOP_DEADLINE_MS = 30_000;

/**
 * Stops a runtime: waits up to `deadlineMs` for work in flight (past it, sends are abandoned and
 * turns cancelled), writes every channel and gives its leases back, flushes relationships and usage, stops
 * every actor, and completes the runtime's streams.
 */
export async function shutDownRuntime(
  wiring: RuntimeWiring,
  channels: ChannelLifecycle,
  outcomeSubscription: Subscription,
  deadlineMs: number,
): Promise<void> {
  const { tracker, logger, routing, registry, relationships, inspect, clock } = wiring;
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
  await channels.close();
  await relationships.flush().catch(() => undefined);
  await wiring.usage?.flush().catch(() => undefined);
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
