import { testingErrorCodes } from '../ports/errorCodes.js';
import { TroupeError } from '../ports/troupeError.js';
import type { SimulatedClock } from './clock.js';
import type { Runtime } from './runtimeOptions.js';
import type { PendingWork } from './workTracker.js';

/**
 * How long settling waits for one external wait (a network model, a real transport, a networked
 * store) that does not answer, in wall-clock milliseconds. Internal work is always waited for.
 */
export const DEFAULT_SETTLE_LIMIT_MS = 60_000;

/** How settling gives up. */
export interface SettleOptions {
  /**
   * Wall-clock milliseconds an external wait may go unanswered before settling fails, naming it
   * (default {@link DEFAULT_SETTLE_LIMIT_MS}). Internal work has no limit: it ends, and on a loaded
   * machine it is only slow.
   */
  limitMs?: number;
}

const macrotask = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * True when no work can go on without time moving: every unit in flight is parked on the clock,
 * or queued behind another (a reply waiting for the one before it in its channel).
 */
function waitsOnlyForTime(runtime: Runtime, clock: SimulatedClock): boolean {
  const { inFlight } = runtime;
  if (inFlight <= clock.parked) return true;
  let queued = 0;
  for (const work of runtime.pending()) if (work.waitingOn === 'queue') queued++;
  return inFlight <= clock.parked + queued;
}

/**
 * Lets a runtime on a simulated clock do everything it can without time moving, on the runtime's
 * idle signal rather than a wall-clock poll: it resolves once every unit of work is parked on
 * the clock or done (confirmed over two macrotasks, since a finishing unit may start the next one
 * asynchronously), firing timers already due on the way. It sleeps between changes: it wakes when
 * a unit ends or changes its wait, or work parks on the clock.
 *
 * @throws TroupeError `TROUPE_TEST_NOT_SETTLED` when an external wait went unanswered for
 *   `limitMs` of wall time; the message names every such wait (e.g. `nova's turn in test:room is
 *   waiting on the model for 61 s`).
 */
export async function settleOnClock(
  runtime: Runtime,
  clock: SimulatedClock,
  options: SettleOptions = {},
): Promise<void> {
  const limitMs = options.limitMs ?? DEFAULT_SETTLE_LIMIT_MS;
  let wake: (() => void) | undefined;
  const poke = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const offWork = runtime.onProgress(poke);
  const offClock = clock.onPark(poke);
  let check: NodeJS.Timeout | undefined;
  let checkDue = false;
  const armCheck = (inMs: number) => {
    check = setTimeout(
      () => {
        check = undefined;
        checkDue = true;
        poke();
      },
      Math.max(1, inMs),
    );
  };
  try {
    let quiet = 0;
    for (;;) {
      if (waitsOnlyForTime(runtime, clock)) {
        // Everything in flight waits for simulated time; confirm over a macrotask or two.
        await macrotask();
        quiet = waitsOnlyForTime(runtime, clock) ? quiet + 1 : 0;
        if (quiet < 2) continue;
        quiet = 0;
        // Timers already due (a deadline that passed while a runtime was down) fire now too.
        if (!clock.fireNext(clock.now())) return;
        continue;
      }
      quiet = 0;
      if (checkDue) {
        checkDue = false;
        armCheck(overdueIn(runtime.pending(), clock.parked, limitMs));
      } else if (!check) {
        armCheck(limitMs);
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
  } finally {
    offWork();
    offClock();
    if (check) clearTimeout(check);
  }
}

/**
 * Throws when more external waits are past the limit than units are parked on the clock (a
 * parked unit shows its last wait, so only the surplus is surely stuck); otherwise says when to
 * look again.
 */
function overdueIn(pending: readonly PendingWork[], parked: number, limitMs: number): number {
  const external = pending.filter((p) => p.external);
  const overdue = external.filter((p) => p.forMs >= limitMs);
  if (overdue.length > parked) {
    throw new TroupeError(
      testingErrorCodes.notSettled,
      `Work on the simulated clock did not settle: ${overdue.map((p) => p.description).join('; ')}. A wait outside the process (a network model, a real transport, a networked store) is given up after ${limitMs} ms of real time without an answer (settleLimitMs); is something waiting on a service that never answers?`,
      { details: { pending } },
    );
  }
  const soonest = external
    .filter((p) => p.forMs < limitMs)
    .reduce((min, p) => Math.min(min, limitMs - p.forMs), limitMs);
  return soonest;
}

/**
 * Moves a simulated clock forward by `ms`, firing every timer due on the way in order and
 * settling the runtime after each (see {@link settleOnClock}).
 */
export async function advanceOnClock(
  runtime: Runtime,
  clock: SimulatedClock,
  ms: number,
  options: SettleOptions = {},
): Promise<void> {
  const target = clock.now() + ms;
  await settleOnClock(runtime, clock, options);
  while (clock.fireNext(target)) await settleOnClock(runtime, clock, options);
  clock.setNow(target);
  await settleOnClock(runtime, clock, options);
}
