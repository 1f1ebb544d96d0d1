import { SimulatedClock } from '../actors/clock.js';
import type { Runtime, RuntimeOptions } from '../actors/runtimeOptions.js';
import { advanceOnClock, DEFAULT_SETTLE_LIMIT_MS, settleOnClock } from '../actors/settleOnClock.js';
import { createRuntime } from '../createRuntime.js';

/** A runtime on a simulated clock: everything of {@link RuntimeOptions} but the clock. */
export interface SimulatedRuntimeOptions extends Omit<RuntimeOptions, 'clock'> {
  /** Start of simulated time (epoch ms). */
  startAt?: number;
  /**
   * How long `settle()` waits for one wait outside the process (any port not marked `local`)
   * that does not answer before it fails naming it (default 60 s of wall time). Work inside the
   * process is waited for however long it takes.
   */
  settleLimitMs?: number;
}

/** A runtime whose time moves only when asked: the tour's, and the base of `createTestRuntime`. */
export interface SimulatedRuntime {
  readonly runtime: Runtime;
  readonly clock: SimulatedClock;
  /** Resolves once every unit of work is parked on the simulated clock or done. */
  settle(): Promise<void>;
  /** Moves simulated time forward by `ms`, firing every timer due on the way and settling after each. */
  advance(ms: number): Promise<void>;
  /** Stops the runtime (after settling). */
  stop(): Promise<void>;
}

/** A runtime on a {@link SimulatedClock}, settled on what it is waiting for, never on wall time. */
export function createSimulatedRuntime(options: SimulatedRuntimeOptions): SimulatedRuntime {
  const { startAt, settleLimitMs, ...runtimeOptions } = options;
  const clock = new SimulatedClock(startAt);
  const runtime = createRuntime({ ...runtimeOptions, clock });
  const settleOptions = { limitMs: settleLimitMs ?? DEFAULT_SETTLE_LIMIT_MS };
  const settle = () => settleOnClock(runtime, clock, settleOptions);
  return {
    runtime,
    clock,
    settle,
    advance: (ms) => advanceOnClock(runtime, clock, ms, settleOptions),
    async stop() {
      await settle();
      await runtime.stop();
    },
  };
}
