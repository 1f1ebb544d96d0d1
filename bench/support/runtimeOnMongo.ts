/**
 * The delivery benchmark's MongoDB row: the runtime end to end on the MongoDB store, opened with the
 * real `mongodb` driver against the fake server of test/support (a one-member replica set, so
 * `putMany` runs in a transaction as on a production deployment).
 *
 * The fake runs in this process and keeps its collections in arrays that every command scans (no
 * indexes, no disk), so its cost grows with what is stored; a real server does that work in another
 * process, on indexes and a disk. The fake's command execution is therefore timed on its own and
 * reported apart, and the figure the row stands for is the rest: the runtime, the driver (BSON,
 * connection pool, sessions) and the loopback socket, with the fake's wire side (decoding commands,
 * encoding replies). It is not what a real server's disk costs. For the same reason the row runs on
 * traffic of its own, smaller than the other rows' (see {@link mongoTrafficLimits}), with the bare
 * floor measured on that same traffic for its ratio.
 */
import { openMongoStore } from '../../src/adapters/store/mongo/mongoStore.js';
import type { TroupeStore } from '../../src/ports/store.js';
import { type FakeMongoServer, startFakeMongoServer } from '../../test/support/fakeMongoServer.js';
import { fixed, int, ratio } from './report.js';
import type { RoomTraffic } from './roomTraffic.js';

/**
 * The most channels and inbound events the MongoDB row runs (the fake's scans grow with both, so
 * the whole traffic of the other rows would take many minutes).
 */
export function mongoTrafficLimits(quick: boolean): { channels: number; events: number } {
  return quick ? { channels: 20, events: 200 } : { channels: 50, events: 1_000 };
}

/** A MongoDB store on a fresh fake server, with the time the fake spent executing commands. */
export interface FakeMongoStore {
  store: TroupeStore;
  /** Milliseconds the fake server spent executing commands since it started (wire side excluded). */
  engineMs(): number;
  /** The same in CPU time of this process (user + system). */
  engineCpuMs(): number;
  /** Commands the fake server received since it started. */
  commands(): number;
  dispose(): Promise<void>;
}

/** Opens the MongoDB store on a new fake replica set, timing the fake's command execution. */
export async function fakeMongoStore(): Promise<FakeMongoStore> {
  const server: FakeMongoServer = await startFakeMongoServer({ replicaSet: 'rs0' });
  let engineMs = 0;
  let engineCpuUs = 0;
  const engine = server.engine;
  const run = engine.run.bind(engine);
  // The server calls engine.run for every command; timing it here leaves the wire side out.
  engine.run = (db, body) => {
    const started = performance.now();
    const cpu = process.cpuUsage();
    try {
      return run(db, body);
    } finally {
      engineMs += performance.now() - started;
      const used = process.cpuUsage(cpu);
      engineCpuUs += used.user + used.system;
    }
  };
  const store = await openMongoStore({ uri: server.uri, database: 'troupe_bench' });
  return {
    store,
    engineMs: () => engineMs,
    engineCpuMs: () => engineCpuUs / 1000,
    commands: () => server.commands.length,
    async dispose() {
      await store.close();
      await server.close();
    },
  };
}

/** What a runtime run reports that the MongoDB row needs. */
export interface TimedRun {
  inbound: number;
  delivered: number;
  wallMs: number;
  cpuMs: number;
}

/** The MongoDB row's figures. */
export interface MongoRow<R extends TimedRun> {
  run: R;
  /** Inbound events and channels of the row's traffic. */
  traffic: { channels: number; inbound: number };
  /** The fake's command execution inside the timed window, ms, and the commands it received there. */
  engineMs: number;
  /** The fake's command execution in CPU time, ms. */
  engineCpuMs: number;
  commands: number;
  /** Wall time per inbound event, everything included (the fake's execution too), µs. */
  usPerInboundTotal: number;
  /** The same less the fake's command execution: runtime + driver + wire, µs. */
  usPerInbound: number;
  /** The bare floor on the same traffic, µs per inbound event. */
  bareFloorUsPerInbound: number;
  /** usPerInbound over the bare floor's. */
  overBareFloor: number;
  /**
   * CPU time per inbound event less the fake's execution, µs: on a busy machine, where waiting for
   * the loopback socket stretches the wall time, the steadier figure.
   */
  cpuUsPerInbound: number;
  inboundPerSec: number;
  cpuPerWall: number;
}

/**
 * Runs `runtimeRun` on a fresh fake MongoDB store; `afterWindow` must be called by the run right
 * after its timed window (the delivery bench's `afterRun` hook), so the fake's execution is counted
 * up to there. Commands before the window (the runtime's start on an empty database: a few reads)
 * fall inside the count too, which leaves the net figure a little low, never high.
 */
export async function runOnFakeMongo<R extends TimedRun>(
  traffic: RoomTraffic,
  runtimeRun: (store: TroupeStore, afterWindow: () => void) => Promise<R>,
  bareFloorUsPerInbound: number,
): Promise<MongoRow<R>> {
  const mongo = await fakeMongoStore();
  try {
    const engineAtOpen = mongo.engineMs();
    const engineCpuAtOpen = mongo.engineCpuMs();
    const commandsAtOpen = mongo.commands();
    let engineMs = Number.NaN;
    let engineCpuMs = Number.NaN;
    let commands = 0;
    const run = await runtimeRun(mongo.store, () => {
      engineMs = mongo.engineMs() - engineAtOpen;
      engineCpuMs = mongo.engineCpuMs() - engineCpuAtOpen;
      commands = mongo.commands() - commandsAtOpen;
    });
    const usPerInboundTotal = (run.wallMs * 1000) / run.inbound;
    const usPerInbound = ((run.wallMs - engineMs) * 1000) / run.inbound;
    return {
      run,
      traffic: { channels: traffic.channels.length, inbound: run.inbound },
      engineMs,
      engineCpuMs,
      commands,
      usPerInboundTotal,
      usPerInbound,
      bareFloorUsPerInbound,
      overBareFloor: usPerInbound / bareFloorUsPerInbound,
      cpuUsPerInbound: ((run.cpuMs - engineCpuMs) * 1000) / run.inbound,
      inboundPerSec: run.inbound / ((run.wallMs - engineMs) / 1000),
      cpuPerWall: run.cpuMs / run.wallMs,
    };
  } finally {
    await mongo.dispose();
  }
}

/** The MongoDB row's lines in the delivery bench's text report. */
export function mongoReportLines<R extends TimedRun>(row: MongoRow<R> | null): string[] {
  if (!row) return ['   runtime on MongoDB: skipped (--skip-mongo).'];
  const r = row.run;
  return [
    `   runtime on MongoDB: the real mongodb driver against the fake server of test/support (in this process, a`,
    `   one-member replica set: putMany in a transaction), on traffic of its own: ${int(row.traffic.channels)} channels, ` +
      `${int(row.traffic.inbound)} inbound events`,
    '   (the fake scans arrays on every command, so its cost grows with what is stored; it runs smaller traffic).',
    `   The fake's command execution is timed apart (${fixed(row.engineMs / 1000, 2)} s for ${int(row.commands)} commands) and left out:`,
    "   the figure is the runtime + the driver + the loopback wire, not a real server's indexes or disk.",
    `     µs per inbound event: ${fixed(row.usPerInbound, 2)} (with the fake's execution: ${fixed(row.usPerInboundTotal, 2)}); ` +
      `bare floor on the same traffic: ${fixed(row.bareFloorUsPerInbound, 2)}; MongoDB/floor: ${ratio(row.usPerInbound, row.bareFloorUsPerInbound)}`,
    `     inbound events/s: ${int(row.inboundPerSec)}; delivered per inbound event: ${fixed(r.delivered / r.inbound, 3)}; ` +
      `store commands per inbound event: ${fixed(row.commands / r.inbound, 1)}; CPU/wall: ${fixed(row.cpuPerWall, 2)}`,
    `     CPU µs per inbound event, the fake's execution left out: ${fixed(row.cpuUsPerInbound, 1)} (steadier than wall time on a busy machine)`,
  ];
}
