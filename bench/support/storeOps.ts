/**
 * Store operations, one at a time (each awaited before the next, as one actor issues them), with
 * the latency of every call. Throughput is operations per second of wall time of the loop.
 */
import { PerformanceObserver } from 'node:perf_hooks';
import { type Latency, latencyOf } from './report.js';

export interface OpFigure {
  /** Calls made (a batch counts once). */
  ops: number;
  /** Documents, records or events written or read (ops x batch size). */
  items: number;
  seconds: number;
  opsPerSec: number;
  itemsPerSec: number;
  /** Per call, µs. */
  latency: Latency;
  /** CPU time of the process over wall time of the loop: below 1, it waited (for the disk). */
  cpuPerWall: number;
}

/** Runs `op(i)` for i in [from, from + count), awaiting each; `itemsPerOp` for batches. */
export async function timeOps(
  count: number,
  op: (i: number) => Promise<unknown>,
  itemsPerOp = 1,
  from = 0,
): Promise<OpFigure> {
  const latencies = new Float64Array(count);
  const cpu0 = process.cpuUsage();
  const started = performance.now();
  for (let k = 0; k < count; k++) {
    const t = performance.now();
    await op(from + k);
    latencies[k] = performance.now() - t;
  }
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return {
    ops: count,
    items: count * itemsPerOp,
    seconds,
    opsPerSec: count / seconds,
    itemsPerSec: (count * itemsPerOp) / seconds,
    latency: latencyOf(latencies),
    cpuPerWall: (cpu.user + cpu.system) / 1e6 / seconds,
  };
}

/** Milliseconds of wall time a piece of work takes (sync or async). */
export async function timeMs(work: () => unknown): Promise<number> {
  const t = performance.now();
  await work();
  return performance.now() - t;
}

/** Wall and CPU milliseconds of a piece of work (CPU of the whole process, all threads). */
export async function timeWallCpu(work: () => unknown): Promise<{ ms: number; cpuMs: number }> {
  const cpu0 = process.cpuUsage();
  const t = performance.now();
  await work();
  const ms = performance.now() - t;
  const cpu = process.cpuUsage(cpu0);
  return { ms, cpuMs: (cpu.user + cpu.system) / 1000 };
}

/**
 * Garbage-collection time during a phase, from V8's `gc` performance entries (with
 * --single-threaded every collection runs on the main thread, so it is part of the phase's wall
 * time). Node delivers the entries a macrotask after the collection, hence the waits.
 */
export function gcClock(): { start(): Promise<void>; stopMs(): Promise<number>; dispose(): void } {
  let total = 0;
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) total += e.duration;
  });
  observer.observe({ entryTypes: ['gc'] });
  let from = 0;
  const drain = async () => {
    await new Promise<void>((resolve) => setTimeout(resolve, 0));
    for (const e of observer.takeRecords()) total += e.duration;
  };
  return {
    async start() {
      await drain();
      from = total;
    },
    async stopMs() {
      await drain();
      return total - from;
    },
    dispose() {
      observer.disconnect();
    },
  };
}
