/**
 * Delivery benchmark: what the runtime costs around the coordination core, in one run.
 *
 *   1. Preparation and routing: responses per second through prepareOutgoingResponse ->
 *      ensureFeedback -> RoutingActor.route (MemoryOutbox, simulated clock, silent logger) to a null
 *      transport (takes every message at once, keeps nothing), spread over K channels, awaited in
 *      batches of 1,000 in flight; preparation alone; a long text that splits into 3 parts; and the
 *      latency of route() with bounded concurrency.
 *   2. The runtime end to end: createRuntime with the offline scripted model, the null transport and
 *      a SimulatedClock, C channels with 3-5 resident avatars each, M inbound events (human messages,
 *      about half naming a present avatar, and a few summons and dismissals of guest avatars), in
 *      rounds of one event per channel awaited with whenIdle(); then the bare ChannelFloor on the same
 *      traffic with turns completed at once, and the ratio (support/roomTraffic.ts, support/bareRoom.ts);
 *      the same runtime traffic on a durable SQLite store (a new temporary file each run) and its ratio; the runtime
 *      on MongoDB through the real driver and the in-process fake server of test/support, on smaller
 *      traffic of its own, the fake's own execution left out (support/runtimeOnMongo.ts); and what the
 *      retained heap per channel holds (history, outbox, the rest), by letting the store's parts go.
 *      The bare floor and the runtime each run the traffic twice, and the second run counts (the first
 *      is printed too): the first warms up what the warm-up's smaller traffic did not. The runtime on
 *      SQLite runs once to warm up, then three timed passes (one in quick mode), each with fresh bare
 *      floors replaying the same traffic beside it, round by round (see timeSqlitePass): its ratio
 *      is the median of the three pairs'. Each pass also
 *      prints its ratio with the runtime's stop counted in: the run is too short for most channels
 *      to fold their ledgers, and the stop folds them all (snapshots, and the history lines the
 *      ledgers held), work a long run does every `ledgerLimit` events of a channel.
 *
 * Prints figures and ratios; never asserts.
 *
 *   npm run bench:delivery                 # full run (about a minute on 2 cores)
 *   npm run bench:delivery -- --quick      # small sizes, seconds (CI runs it)
 *   npm run bench:delivery -- --responses 200000 --channels 2000 --messages 100000 --json
 *
 * Node flags (package.json), as bench:coordination: --expose-gc for the heap figures; --single-threaded
 * so GC and JIT run on the main thread too (CPU/wall is printed).
 */
import os from 'node:os';
import { parseArgs } from 'node:util';
import { avatarListSchema, toProfile } from '../src/actors/avatarDefinition.js';
import { DEFAULT_LEDGER_LIMIT } from '../src/actors/channelPersistence.js';
import { SimulatedClock } from '../src/actors/clock.js';
import { RoutingActor } from '../src/actors/routingActor.js';
import { MemoryOutbox } from '../src/adapters/store/memory/memoryOutbox.js';
import { type CoordinationConfig, defaultCoordinationConfig } from '../src/config/coordinationConfig.js';
import { createRuntime } from '../src/createRuntime.js';
import { ensureFeedback } from '../src/delivery/feedbackGuarantee.js';
import { type PreparationRequest, prepareOutgoingResponse } from '../src/delivery/preparation.js';
import { silentLogger } from '../src/logging/logger.js';
import type { OutgoingResponse } from '../src/ports/outgoingResponse.js';
import type { RoutingOutcome } from '../src/ports/routingOutcome.js';
import type { TroupeStore } from '../src/ports/store.js';
import { intArg } from './support/args.js';
import { type BareStats, bareReplay, buildRoomFloors, replayBare } from './support/bareRoom.js';
import { canMeasureHeap, settledHeap } from './support/heap.js';
import { NullTransport } from './support/nullTransport.js';
import { fixed, int, type Latency, latencyOf, pct, ratio, table } from './support/report.js';
import {
  generateRoomTraffic,
  ROOM_KIND,
  ROOM_START_AT,
  type RoomMessage,
  type RoomTraffic,
} from './support/roomTraffic.js';
import {
  type MongoRow,
  mongoReportLines,
  mongoTrafficLimits,
  runOnFakeMongo,
} from './support/runtimeOnMongo.js';
import { droppableMemoryStore, temporarySqliteStore } from './support/runtimeStores.js';
import { printSummary } from './support/summary.js';

/**
 * Inbound events per channel for a run near a steady state on SQLite: every channel folds its
 * turn ledger while timed, and the outbox holds a few hundred thousand replies.
 */
const STEADY_EVENTS_PER_CHANNEL = 200;

// ---------------------------------------------------------------- options

const HELP = `Usage: npm run bench:delivery -- [options]

  --responses N   responses routed per routing figure (default 100000; quick: 2000)
  --channels N    channels: routing spreads its responses over them, and the end-to-end run has
                  that many channel actors (default 1000; quick: 50)
  --messages N    inbound events in the end-to-end run: human messages, with about 3% summons and
                  1.5% dismissals among them (default 40000; quick: 500). At 40 per channel few
                  channels fold their turn ledger while timed: 200 per channel (200000) measures
                  SQLite near its steady state (about 5 minutes)
  --avatars N     avatars in the cast, each resident in some channels (default 24)
  --seed N        traffic seed (default 42)
  --quick         small sizes and a short warm-up: seconds (figures are then rough)
  --skip-sqlite   leave out the end-to-end run on a durable SQLite store (a temporary file)
  --skip-mongo    leave out the end-to-end run on MongoDB (the real driver against the in-process fake
                  server of test/support, on traffic of its own: at most 50 channels and 1,000 events;
                  quick: 20 and 200; see support/runtimeOnMongo.ts)
  --json          print the results as JSON instead of tables
  --help          this text
`;

const { values: args } = parseArgs({
  options: {
    responses: { type: 'string' },
    channels: { type: 'string' },
    messages: { type: 'string' },
    avatars: { type: 'string' },
    seed: { type: 'string' },
    quick: { type: 'boolean', default: false },
    'skip-sqlite': { type: 'boolean', default: false },
    'skip-mongo': { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
  strict: true,
});

if (args.help) {
  process.stdout.write(HELP);
  process.exit(0);
}

const quick = args.quick;
const responses = intArg(args.responses, quick ? 2_000 : 100_000, 'responses');
const channels = intArg(args.channels, quick ? 50 : 1_000, 'channels');
const messages = intArg(args.messages, quick ? 500 : 40_000, 'messages');
/** Items of each warm-up step (quick: a tenth, one round). */
const warmItems = (n: number) => (quick ? n / 10 : n);
const avatarCount = intArg(args.avatars, 24, 'avatars', 5);
const seed = intArg(args.seed, 42, 'seed', 0);
const withSqlite = !args['skip-sqlite'];
const withMongo = !args['skip-mongo'];
const mongoLimits = mongoTrafficLimits(quick);
/** Responses awaited together in the throughput figures. */
const IN_FLIGHT = 1_000;
/** Alternated runs with and without the usage ledger, to tell its cost from the noise. */
const LEDGER_PASSES = 3;
/**
 * Timed SQLite runs, each with the bare floor replaying the same traffic beside it, round by
 * round: the SQLite/floor ratio reported is the median of the pairs' ratios.
 */
const SQLITE_PASSES = quick ? 1 : 3;
/** Concurrency levels of the latency figure (closed loop). */
const LATENCY_CONCURRENCY = [1, 64];
/** Channel actors activated for the heap figure (at most). */
const HEAP_CHANNELS = Math.min(channels, 2_000);
/** What the previous issue reported for the compiled floor (bench:coordination, messages/s steady). */
const PREVIOUS_COMPILED_FLOOR = { low: 56_000, high: 69_000, scales: '100-10,000 channels' };

const config: CoordinationConfig = { ...defaultCoordinationConfig };
const t0 = performance.now();
const log = (line: string) =>
  process.stderr.write(`[${((performance.now() - t0) / 1000).toFixed(1).padStart(5)} s] ${line}\n`);

// ---------------------------------------------------------------- 1. preparation and routing

const SHORT_TEXTS = [
  'Great question! Honestly, it all comes back to astronomy.',
  'Luna, ha, I love that. This reminds me of jazz.',
  'Ooh, let me think. My hot take: chess over coffee, any day.',
  'Tell me more! Between us, gardening is underrated.',
];

/** About 5,000 characters of sentences: three parts at the 2,000-character limit. */
const LONG_TEXT = (() => {
  const sentences = [
    'The comet came back after seventy-six years, and nobody in the village remembered the last time.',
    'We set up the telescope on the roof, argued about the focus, and drank far too much coffee.',
    'By midnight the tail was visible even without the lens, a pale smudge over the lighthouse.',
    'Someone asked whether it would hit us, and the old keeper laughed until he had to sit down.',
  ];
  let text = '';
  for (let i = 0; text.length < 5_000; i++) {
    text += sentences[i % sentences.length];
    text += i % 6 === 5 ? '\n\n' : ' ';
  }
  return text.trim();
})();

const routeChannels = Array.from({ length: channels }, (_, i) => ({ kind: ROOM_KIND, id: `route${i}` }));

/** A preparation request as a channel actor makes it for an answer to a person. */
function requestFor(tag: string, i: number, at: number): PreparationRequest {
  const channel = routeChannels[i % channels] as { kind: string; id: string };
  return {
    idempotencyKey: `${tag}:${channel.id}:t${i}`,
    channel,
    speaker: { avatarId: 'av0', name: 'Luna', emoji: '🦊' },
    replyTo: { messageId: `m${i}` },
    origin: { turnId: `t${i}`, avatarId: 'av0', triggerMessageId: `m${i}` },
    inboundVoice: false,
    voicePolicy: { mode: 'on-request' },
    at,
  };
}

function prepare(request: PreparationRequest, text: string): OutgoingResponse {
  const prepared = prepareOutgoingResponse({ generation: { text }, request });
  const decision = ensureFeedback(prepared, request, true);
  return decision.response as OutgoingResponse;
}

function newRouting(): { routing: RoutingActor; outbox: MemoryOutbox; transport: NullTransport } {
  const outbox = new MemoryOutbox();
  const transport = new NullTransport(ROOM_KIND);
  const routing = new RoutingActor({
    transports: [transport],
    outbox,
    clock: new SimulatedClock(ROOM_START_AT),
    logger: silentLogger(),
  });
  return { routing, outbox, transport };
}

interface Throughput {
  responses: number;
  /** Time inside the timed windows, ms. */
  ms: number;
  perSec: number;
  usEach: number;
  /** Transport messages per response, and responses not sent (should be 0). */
  partsPerResponse: number;
  notSent: number;
  cpuPerWall: number;
}

let _sink: unknown;

/** Preparation and the feedback guarantee alone: pure functions, requests built outside the timing. */
function measurePreparation(n: number, tag: string): Throughput {
  let ms = 0;
  const cpu0 = process.cpuUsage();
  const w0 = performance.now();
  for (let done = 0; done < n; done += IN_FLIGHT) {
    const count = Math.min(IN_FLIGHT, n - done);
    const requests = Array.from({ length: count }, (_, j) => requestFor(tag, done + j, ROOM_START_AT));
    const s = performance.now();
    for (let j = 0; j < count; j++) {
      _sink = prepare(requests[j] as PreparationRequest, SHORT_TEXTS[j & 3] as string);
    }
    ms += performance.now() - s;
  }
  return summarizeThroughput(n, ms, 1, 0, cpu0, performance.now() - w0);
}

/**
 * Prepared, guaranteed and routed, `IN_FLIGHT` at a time: each batch's requests are built outside
 * the timing, then the batch is prepared and handed to route() at once and awaited with Promise.all.
 * Routing serialises per channel (a queue per channel), so with K channels each channel has about
 * IN_FLIGHT / K responses queued and the channels interleave.
 */
async function measureRouting(n: number, text: string, tag: string): Promise<Throughput> {
  const { routing, transport } = newRouting();
  let ms = 0;
  let notSent = 0;
  const cpu0 = process.cpuUsage();
  const w0 = performance.now();
  for (let done = 0; done < n; done += IN_FLIGHT) {
    const count = Math.min(IN_FLIGHT, n - done);
    const requests = Array.from({ length: count }, (_, j) => requestFor(tag, done + j, ROOM_START_AT));
    const s = performance.now();
    const pending: Promise<RoutingOutcome>[] = new Array(count);
    for (let j = 0; j < count; j++)
      pending[j] = routing.route(prepare(requests[j] as PreparationRequest, text));
    const outcomes = await Promise.all(pending);
    ms += performance.now() - s;
    for (const o of outcomes) if (!o.sent) notSent++;
  }
  return summarizeThroughput(n, ms, transport.taken / n, notSent, cpu0, performance.now() - w0);
}

function summarizeThroughput(
  n: number,
  ms: number,
  parts: number,
  notSent: number,
  cpu0: NodeJS.CpuUsage,
  wallMs: number,
): Throughput {
  const cpu = process.cpuUsage(cpu0);
  return {
    responses: n,
    ms,
    perSec: n / (ms / 1000),
    usEach: (ms * 1000) / n,
    partsPerResponse: parts,
    notSent,
    cpuPerWall: (cpu.user + cpu.system) / 1000 / wallMs,
  };
}

interface RouteLatency {
  concurrency: number;
  responses: number;
  latency: Latency;
  perSec: number;
}

/**
 * Latency of one response through routing: performance.now() just before route() is called and
 * when its promise resolves (the outcome is in hand), per response. Closed loop: `concurrency`
 * workers, each on its own channel, each preparing its next response only once the previous one
 * resolved, so exactly `concurrency` responses are in flight at any time. With 1 in flight the figure
 * is the service time of a response (outbox record, split, send, mark, settle, publish, and the
 * promise hops between them); with more, the workers' continuations share one microtask queue, so it
 * also counts the time the other in-flight responses run in between (about concurrency x service
 * time: queueing, not slower routing). The preparation of the next response is outside the window.
 */
async function measureRouteLatency(n: number, concurrency: number, tag: string): Promise<RouteLatency> {
  const { routing } = newRouting();
  const samples = new Float64Array(n);
  let next = 0;
  const worker = async (w: number) => {
    for (;;) {
      const i = next++;
      if (i >= n) return;
      // Worker w always uses channel w: one response in flight per channel.
      const request = requestFor(tag, w, ROOM_START_AT);
      request.idempotencyKey = `${tag}:${i}`;
      const response = prepare(request, SHORT_TEXTS[i & 3] as string);
      const s = performance.now();
      await routing.route(response);
      samples[i] = performance.now() - s;
    }
  };
  const s = performance.now();
  await Promise.all(Array.from({ length: concurrency }, (_, w) => worker(w)));
  const ms = performance.now() - s;
  return { concurrency, responses: n, latency: latencyOf(samples), perSec: n / (ms / 1000) };
}

// ---------------------------------------------------------------- 2. runtime end to end

interface RuntimeRun {
  inbound: number;
  rejected: number;
  delivered: number;
  notSent: number;
  /** Timers the simulated clock fired (floor ticks). */
  timers: number;
  rounds: number;
  activeChannels: number;
  wallMs: number;
  cpuMs: number;
  /**
   * How long `runtime.stop()` took after the timed run (not in `wallMs`): it writes every channel's
   * snapshot, folding its ledger in, and on SQLite the history lines that ledger held. A run this
   * short folds few ledgers while it runs; a long one folds each every `ledgerLimit` events.
   */
  stopMs: number;
  /** Retained heap after the run with every actor still active (history, outbox included), per channel. */
  retainedBytesPerChannel: number;
}

/** What the retained heap after a run holds, per channel (measured by letting parts go). */
interface RetainedBreakdown {
  total: number;
  /** The memory store's channel history. */
  history: number;
  historyLines: number;
  /** The memory store's outbox (settled entries kept to drop duplicates, shared by all channels). */
  outbox: number;
  /** Everything else: the channel actors with their floors and remembered message ids, relationships. */
  rest: number;
}

/** How a runtime run is set up. */
interface RunSetup {
  /** Measure the retained heap after the run (needs --expose-gc). */
  measureRetained?: boolean;
  /** The store (default: the runtime's own memory store). */
  store?: TroupeStore;
  /** Called after the run, before the runtime stops (for the retained-heap breakdown). */
  afterRun?: (base: number, channels: number) => Promise<void>;
  /** `false`: no usage ledger (to measure what the ledger costs). Default: the runtime's own. */
  usage?: false;
  /**
   * Run before each round, outside the runtime's timing (its wall and CPU time are left out): the
   * bare floor's same round, so both sides are timed side by side on the same machine state.
   */
  beside?: (round: number) => void;
}

/**
 * The runtime on simulated time: before each round, every timer due by the round's time fires (the
 * floors' ticks), each followed by whenIdle(); then the clock is set to the round's time, the round's
 * messages (one per channel) are sent, and whenIdle() awaits every generation, preparation, route
 * and history write they led to (bot-to-bot cascades included). All of it is timed, wall and CPU.
 */
async function runRuntime(traffic: RoomTraffic, setup: RunSetup = {}): Promise<RuntimeRun> {
  const measureRetained = (setup.measureRetained ?? false) || setup.afterRun !== undefined;
  const clock = new SimulatedClock(ROOM_START_AT);
  const transport = new NullTransport(ROOM_KIND);
  const base = measureRetained ? settledHeap() : Number.NaN;
  const runtime = createRuntime({
    avatars: traffic.avatars,
    config,
    transports: [transport],
    logger: silentLogger(),
    clock,
    ...(setup.store ? { store: setup.store } : {}),
    ...(setup.usage === false ? { usage: false as const } : {}),
  });
  let delivered = 0;
  let notSent = 0;
  runtime.outcomes$.subscribe((o) => {
    if (o.sent) delivered++;
    else notSent++;
  });
  let rejected = 0;
  let timers = 0;
  let inbound = 0;
  await runtime.whenIdle();
  const cpu0 = process.cpuUsage();
  const w0 = performance.now();
  let besideMs = 0;
  let besideCpuUs = 0;
  for (const [index, round] of traffic.rounds.entries()) {
    if (setup.beside) {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      setup.beside(index);
      besideMs += performance.now() - t0;
      const c = process.cpuUsage(c0);
      besideCpuUs += c.user + c.system;
    }
    while (clock.fireNext(round.at)) {
      timers++;
      await runtime.whenIdle();
    }
    clock.setNow(round.at);
    for (const { event } of round.events) {
      inbound++;
      if (!runtime.send(event).accepted) rejected++;
    }
    await runtime.whenIdle();
  }
  const wallMs = performance.now() - w0 - besideMs;
  const cpu = process.cpuUsage(cpu0);
  const activeChannels = runtime.activeChannels().length;
  const retained = measureRetained ? (settledHeap() - base) / activeChannels : Number.NaN;
  await setup.afterRun?.(base, activeChannels);
  const s0 = performance.now();
  await runtime.stop();
  const stopMs = performance.now() - s0;
  return {
    inbound,
    rejected,
    delivered,
    notSent,
    timers,
    rounds: traffic.rounds.length,
    activeChannels,
    wallMs,
    cpuMs: (cpu.user + cpu.system - besideCpuUs) / 1000,
    stopMs,
    retainedBytesPerChannel: retained,
  };
}

/**
 * The runtime on the memory store, as runRuntime, and what its retained heap holds: measured with
 * everything, then with the store's history let go, then its outbox too.
 */
async function runRuntimeWithBreakdown(
  traffic: RoomTraffic,
): Promise<{ run: RuntimeRun; breakdown: RetainedBreakdown | null }> {
  if (!canMeasureHeap) return { run: await runRuntime(traffic), breakdown: null };
  const memory = droppableMemoryStore();
  let breakdown: RetainedBreakdown | null = null;
  const run = await runRuntime(traffic, {
    store: memory.store,
    afterRun: async (base, active) => {
      let lines = 0;
      for (const ch of traffic.channels) lines += await memory.historyLines(ch.key);
      const all = settledHeap() - base;
      memory.dropHistory();
      const withoutHistory = settledHeap() - base;
      memory.dropOutbox();
      const rest = settledHeap() - base;
      breakdown = {
        total: all / active,
        history: (all - withoutHistory) / active,
        historyLines: lines / traffic.channels.length,
        outbox: (withoutHistory - rest) / active,
        rest: rest / active,
      };
    },
  });
  return { run, breakdown };
}

/** The runtime on a durable SQLite store (a temporary file), as runRuntime. */
async function runRuntimeOnSqlite(traffic: RoomTraffic): Promise<RuntimeRun> {
  const sqlite = await temporarySqliteStore();
  try {
    return await runRuntime(traffic, { store: sqlite.store });
  } finally {
    await sqlite.dispose();
  }
}

/**
 * The runtime on MongoDB through the fake server, as runRuntime, on `mongoTraffic` (at most
 * mongoTrafficLimits), with the bare floor on that traffic for its ratio (twice, the second counts).
 */
async function runRuntimeOnMongo(mongoTraffic: RoomTraffic): Promise<MongoRow<RuntimeRun>> {
  runBare(mongoTraffic);
  const floor = runBare(mongoTraffic);
  settledHeap();
  return runOnFakeMongo(
    mongoTraffic,
    (store, afterWindow) => runRuntime(mongoTraffic, { store, afterRun: async () => afterWindow() }),
    (floor.floorMs * 1000) / floor.inbound,
  );
}

function rosterOf(traffic: RoomTraffic) {
  return avatarListSchema.parse(traffic.avatars).map(toProfile);
}

/** One timed SQLite run and the bare floor beside it, round by round, on the same traffic. */
interface SqlitePass {
  run: RuntimeRun;
  sqliteUs: number;
  floorUs: number;
  ratio: number;
  /** `sqliteUs` with the runtime's stop counted in (the writes the run left for it). */
  withStopUs: number;
  withStopRatio: number;
}

/** A young-generation collection, outside both timings (see timeSqlitePass). */
const minorGc = (globalThis as { gc?: (options: { type: 'minor' }) => void }).gc;

/**
 * The runtime on SQLite with the bare floor beside it: before each of the runtime's rounds, the
 * bare floor (fresh floors) replays the same round, so both sides are timed on the same machine
 * state, a few hundred milliseconds apart at most, rather than one after the other (a machine
 * whose speed drifts by 20% over seconds moved the ratio of separate runs as much). A minor GC
 * before each bare round (timed by neither side) clears the runtime's young objects, so the floor's
 * timed calls do not pay for collecting them.
 */
async function timeSqlitePass(traffic: RoomTraffic, pass: number): Promise<SqlitePass> {
  settledHeap();
  const roster = rosterOf(traffic);
  const bare = bareReplay(traffic, buildRoomFloors(traffic, roster, config), roster, config);
  const sqlite = await temporarySqliteStore();
  let run: RuntimeRun;
  try {
    run = await runRuntime(traffic, {
      store: sqlite.store,
      beside: (round) => {
        minorGc?.({ type: 'minor' });
        bare.round(round);
      },
    });
  } finally {
    await sqlite.dispose();
  }
  const floorUs = (bare.stats.floorMs * 1000) / bare.stats.inbound;
  const sqliteUs = (run.wallMs * 1000) / run.inbound;
  const withStopUs = ((run.wallMs + run.stopMs) * 1000) / run.inbound;
  log(
    `    runtime on SQLite, pass ${pass + 1}: ${fixed(sqliteUs, 1)} µs per inbound event; the bare floor beside it: ${fixed(floorUs, 2)} µs (${fixed(sqliteUs / floorUs, 2)}x); with the stop (${int(run.stopMs)} ms) counted in: ${fixed(withStopUs, 1)} µs (${fixed(withStopUs / floorUs, 2)}x)`,
  );
  return {
    run,
    sqliteUs,
    floorUs,
    ratio: sqliteUs / floorUs,
    withStopUs,
    withStopRatio: withStopUs / floorUs,
  };
}

/** The pass with the median ratio (the upper one of an even count). */
function medianPass(passes: readonly SqlitePass[]): SqlitePass {
  const sorted = [...passes].sort((a, b) => a.ratio - b.ratio);
  return sorted[Math.floor(sorted.length / 2)] as SqlitePass;
}

function runBare(traffic: RoomTraffic): BareStats {
  const roster = rosterOf(traffic);
  const floors = buildRoomFloors(traffic, roster, config);
  return replayBare(traffic, floors, roster, config);
}

interface ActorHeap {
  channels: number;
  /** Retained bytes per active channel actor, activated by one message that claims no turn. */
  bytesPerRuntimeChannel: number;
  /** Retained bytes per bare floor with the same roster and residents. */
  bytesPerBareFloor: number;
}

/**
 * Heap per active channel: a fresh runtime, then one message per channel that addresses nobody
 * ("ok": no claim, no response); retained heap after full GCs, minus before, per channel. That is
 * the channel actor with its floor (residents present), its child logger, registry entry, the one
 * history line and the remembered message id. Against it, the same floors built bare.
 */
async function measureActorHeap(traffic: RoomTraffic): Promise<ActorHeap> {
  const n = traffic.channels.length;
  const first = traffic.rounds[0]?.at ?? ROOM_START_AT;
  const clock = new SimulatedClock(first);
  let runtime: ReturnType<typeof createRuntime> | undefined = createRuntime({
    avatars: traffic.avatars,
    config,
    transports: [new NullTransport(ROOM_KIND)],
    logger: silentLogger(),
    clock,
  });
  await runtime.whenIdle();
  const before = settledHeap();
  for (const ch of traffic.channels) {
    const message: RoomMessage = {
      type: 'channel.message',
      at: first,
      channel: ch.ref,
      messageId: `${ch.ref.id}:heap`,
      author: { kind: 'human', id: 'u0', name: 'alice' },
      text: 'ok',
    };
    runtime.send(message);
  }
  await runtime.whenIdle();
  const after = settledHeap();
  const active = runtime.activeChannels().length;
  await runtime.stop();
  runtime = undefined;
  const roster = rosterOf(traffic);
  const base = settledHeap();
  let floors: unknown = buildRoomFloors(traffic, roster, config);
  const withFloors = settledHeap();
  _sink = floors;
  floors = undefined;
  _sink = undefined;
  return {
    channels: n,
    bytesPerRuntimeChannel: (after - before) / active,
    bytesPerBareFloor: (withFloors - base) / n,
  };
}

// ---------------------------------------------------------------- run

const started = performance.now();
log(
  `delivery bench: ${int(responses)} responses over ${int(channels)} channels; end to end ${int(messages)} inbound events ` +
    `over ${int(channels)} channels, ${avatarCount}-avatar cast${quick ? ' (quick)' : ''}`,
);
if (!canMeasureHeap) log('  (no --expose-gc: heap figures are skipped)');

log('  warming up...');
{
  const warm = generateRoomTraffic({
    channels: Math.min(channels, 200),
    events: Math.min(messages, 3_000),
    avatars: avatarCount,
    seed: seed ^ 0x3a3a,
    channelOffset: 1_000_000,
  });
  for (let r = 0; r < (quick ? 1 : 3); r++) {
    measurePreparation(warmItems(5_000), `warm${r}p`);
    await measureRouting(warmItems(5_000), SHORT_TEXTS[0] as string, `warm${r}s`);
    await measureRouting(warmItems(1_000), LONG_TEXT, `warm${r}l`);
    await measureRouteLatency(warmItems(2_000), 8, `warm${r}q`);
    await runRuntime(warm);
    runBare(warm);
    runBare(warm);
  }
  if (withSqlite) await runRuntimeOnSqlite(warm);
  if (withMongo)
    await runRuntimeOnMongo(
      generateRoomTraffic({
        channels: Math.min(channels, mongoLimits.channels),
        events: Math.min(messages, quick ? 100 : 500),
        avatars: avatarCount,
        seed: seed ^ 0x3a3a,
        channelOffset: 1_000_000,
      }),
    );
}
settledHeap();

log('  1. preparation and routing');
const preparation = measurePreparation(responses, 'prep');
log(`    preparation + guarantee: ${int(preparation.perSec)}/s`);
settledHeap();
const routedShort = await measureRouting(responses, SHORT_TEXTS[0] as string, 'short');
log(`    routed, short text: ${int(routedShort.perSec)}/s`);
settledHeap();
const longCount = Math.max(IN_FLIGHT, Math.round(responses / 4));
const routedLong = await measureRouting(longCount, LONG_TEXT, 'long');
log(`    routed, long text (${fixed(routedLong.partsPerResponse, 1)} parts): ${int(routedLong.perSec)}/s`);
const latencies: RouteLatency[] = [];
for (const c of LATENCY_CONCURRENCY) {
  settledHeap();
  const l = await measureRouteLatency(
    Math.max(2_000, Math.round(responses / 5)),
    Math.min(c, channels),
    `lat${c}`,
  );
  latencies.push(l);
  log(`    latency, ${c} in flight: p50 ${fixed(l.latency.p50, 1)} µs, p99 ${fixed(l.latency.p99, 1)} µs`);
}

log('  2. runtime end to end, and the bare floor on the same traffic');
const traffic = generateRoomTraffic({ channels, events: messages, avatars: avatarCount, seed });
/**
 * Each side runs the traffic twice, on fresh floors / a fresh runtime, and the second run is
 * reported: the first warms up what the warm-up's other channels did not (a floor's first scans).
 */
let bare = runBare(traffic);
settledHeap();
bare = runBare(traffic);
log(`    bare floor: ${int(bare.inbound / (bare.floorMs / 1000))} inbound events/s (floor calls only)`);
settledHeap();
// The first run also tells what the retained heap holds (measured after its timing window).
const { run: firstRuntimeRun, breakdown: retainedBreakdown } = await runRuntimeWithBreakdown(traffic);
log(
  `    runtime, first run: ${int(firstRuntimeRun.inbound / (firstRuntimeRun.wallMs / 1000))} inbound events/s`,
);
settledHeap();
const runtimeRun = await runRuntime(traffic, { measureRetained: canMeasureHeap });
log(`    runtime: ${int(runtimeRun.inbound / (runtimeRun.wallMs / 1000))} inbound events/s`);
// What the usage ledger costs: the runtime without it and with it, alternated, best of each.
const ledgerPasses = { with: [] as number[], without: [] as number[] };
for (let pass = 0; pass < LEDGER_PASSES; pass++) {
  for (const usage of [false, true]) {
    settledHeap();
    const run = await runRuntime(traffic, usage ? {} : { usage: false });
    (usage ? ledgerPasses.with : ledgerPasses.without).push((run.wallMs * 1000) / run.inbound);
  }
}
const ledgerCost = {
  usPerInboundWith: Math.min(...ledgerPasses.with),
  usPerInboundWithout: Math.min(...ledgerPasses.without),
  passes: ledgerPasses,
};
log(
  `    usage ledger: ${fixed(ledgerCost.usPerInboundWith, 2)} µs per inbound event with it, ${fixed(ledgerCost.usPerInboundWithout, 2)} without (best of ${LEDGER_PASSES})`,
);
let sqliteRun: RuntimeRun | null = null;
let sqliteFirstRun: RuntimeRun | null = null;
const sqlitePasses: SqlitePass[] = [];
if (withSqlite) {
  // A first run on a fresh temporary file warms up; then the timed passes, each with its floor.
  settledHeap();
  sqliteFirstRun = await runRuntimeOnSqlite(traffic);
  log(
    `    runtime on SQLite, first run: ${int(sqliteFirstRun.inbound / (sqliteFirstRun.wallMs / 1000))} inbound events/s`,
  );
  for (let pass = 0; pass < SQLITE_PASSES; pass++) sqlitePasses.push(await timeSqlitePass(traffic, pass));
  sqliteRun = medianPass(sqlitePasses).run;
}
let mongoRun: MongoRow<RuntimeRun> | null = null;
if (withMongo) {
  settledHeap();
  mongoRun = await runRuntimeOnMongo(
    channels <= mongoLimits.channels && messages <= mongoLimits.events
      ? traffic
      : generateRoomTraffic({
          channels: Math.min(channels, mongoLimits.channels),
          events: Math.min(messages, mongoLimits.events),
          avatars: avatarCount,
          seed,
        }),
  );
  log(`    runtime on MongoDB (fake server): ${fixed(mongoRun.usPerInbound, 1)} µs per inbound event`);
}
const heapTraffic =
  HEAP_CHANNELS === channels
    ? traffic
    : generateRoomTraffic({ channels: HEAP_CHANNELS, events: HEAP_CHANNELS, avatars: avatarCount, seed });
const actorHeap = canMeasureHeap ? await measureActorHeap(heapTraffic) : null;
const elapsedS = (performance.now() - started) / 1000;
log(`  done in ${fixed(elapsedS)} s`);

// ---------------------------------------------------------------- figures

const runtimeFig = {
  inboundPerSec: runtimeRun.inbound / (runtimeRun.wallMs / 1000),
  deliveredPerSec: runtimeRun.delivered / (runtimeRun.wallMs / 1000),
  usPerInbound: (runtimeRun.wallMs * 1000) / runtimeRun.inbound,
  cpuPerWall: runtimeRun.cpuMs / runtimeRun.wallMs,
};
const bareFloorFig = {
  inboundPerSec: bare.inbound / (bare.floorMs / 1000),
  deliveredPerSec: bare.delivered / (bare.floorMs / 1000),
  usPerInbound: (bare.floorMs * 1000) / bare.inbound,
  /** Human messages plus delivered turns per second: the unit bench:coordination reports. */
  messagesPerSec: (bare.inbound + bare.delivered) / (bare.floorMs / 1000),
};
const bareLoopFig = {
  inboundPerSec: bare.inbound / (bare.wallMs / 1000),
  deliveredPerSec: bare.delivered / (bare.wallMs / 1000),
  usPerInbound: (bare.wallMs * 1000) / bare.inbound,
  cpuPerWall: bare.cpuMs / bare.wallMs,
};
const sqliteFig = sqliteRun
  ? {
      inboundPerSec: sqliteRun.inbound / (sqliteRun.wallMs / 1000),
      deliveredPerSec: sqliteRun.delivered / (sqliteRun.wallMs / 1000),
      usPerInbound: (sqliteRun.wallMs * 1000) / sqliteRun.inbound,
      cpuPerWall: sqliteRun.cpuMs / sqliteRun.wallMs,
    }
  : null;
const ratios = {
  /** How many times longer the runtime takes per inbound message than the floor calls alone. */
  runtimeOverBareFloor: runtimeFig.usPerInbound / bareFloorFig.usPerInbound,
  /** ... than the bare replay loop (floor calls + the scripted model's replies + bookkeeping). */
  runtimeOverBareLoop: runtimeFig.usPerInbound / bareLoopFig.usPerInbound,
  /** The same on a durable SQLite store: the median pass, against the floor run beside it. */
  sqliteOverBareFloor: sqlitePasses.length > 0 ? medianPass(sqlitePasses).ratio : Number.NaN,
};

const cpus = os.cpus();
const environment = {
  node: process.version,
  v8: process.versions.v8,
  execArgv: process.execArgv.filter((a) => !a.startsWith('--import') && a !== 'tsx' && !a.includes('/tsx/')),
  cpu: cpus[0]?.model ?? 'unknown',
  cores: cpus.length,
  seed,
  elapsedSeconds: elapsedS,
};

if (args.json) {
  process.stdout.write(
    `${JSON.stringify(
      {
        environment,
        options: { responses, channels, messages, avatars: avatarCount, quick, inFlight: IN_FLIGHT },
        routing: { preparation, routedShort, routedLong, latencies },
        endToEnd: {
          traffic: traffic.counts,
          rounds: traffic.rounds.length,
          runtime: { ...runtimeRun, ...runtimeFig },
          runtimeOnSqlite: sqliteRun && sqliteFig ? { ...sqliteRun, ...sqliteFig } : null,
          runtimeOnSqlitePasses: sqlitePasses.map(
            ({ sqliteUs, floorUs, ratio, withStopUs, withStopRatio }) => ({
              sqliteUs,
              floorUs,
              ratio,
              withStopUs,
              withStopRatio,
            }),
          ),
          runtimeOnMongo: mongoRun,
          bare: { ...bare, floor: bareFloorFig, loop: bareLoopFig },
          ratios,
          ledgerCost,
          actorHeap,
          retainedBreakdown,
          previousCompiledFloorMessagesPerSec: PREVIOUS_COMPILED_FLOOR,
        },
      },
      null,
      2,
    )}\n`,
  );
} else {
  const out: string[] = [];
  const p = (s = '') => out.push(s);
  const nan = Number.NaN;
  const c = traffic.counts;
  p('Troupe delivery benchmark: preparation and routing to a null transport, and the runtime end to end');
  p('against the bare channel floor on the same traffic');
  p(`node ${environment.node} (V8 ${environment.v8}), flags: ${environment.execArgv.join(' ') || '(none)'}`);
  p(`${environment.cpu}, ${environment.cores} cores; seed ${seed}; took ${fixed(elapsedS)} s`);
  p();
  p(
    `1. Preparation and routing: ${int(responses)} responses (long text: ${int(longCount)}) over ${int(channels)} channels, ` +
      `${int(IN_FLIGHT)} in flight per batch; MemoryOutbox, simulated clock, silent logger, null transport (2,000-char limit).`,
  );
  p(
    table(
      ['', 'responses/s', 'µs/response', 'parts/response', 'not sent', 'CPU/wall'],
      [
        [
          'prepare + feedback guarantee (pure)',
          int(preparation.perSec),
          fixed(preparation.usEach, 2),
          '',
          '',
          fixed(preparation.cpuPerWall, 2),
        ],
        [
          `prepare + guarantee + route, ${SHORT_TEXTS[0]?.length}-char text`,
          int(routedShort.perSec),
          fixed(routedShort.usEach, 2),
          fixed(routedShort.partsPerResponse, 1),
          int(routedShort.notSent),
          fixed(routedShort.cpuPerWall, 2),
        ],
        [
          `prepare + guarantee + route, ${int(LONG_TEXT.length)}-char text`,
          int(routedLong.perSec),
          fixed(routedLong.usEach, 2),
          fixed(routedLong.partsPerResponse, 1),
          int(routedLong.notSent),
          fixed(routedLong.cpuPerWall, 2),
        ],
      ],
    ),
  );
  p(`  long/short cost per response: ${ratio(routedLong.usEach, routedShort.usEach)}`);
  p();
  p('   Latency of route() -> resolved, per response, closed loop (one response in flight per channel):');
  p(
    table(
      ['', 'p50 µs', 'p99 µs', 'p99.9 µs', 'max µs', 'responses/s'],
      latencies.map((l) => [
        `${l.concurrency} in flight`,
        fixed(l.latency.p50, 1),
        fixed(l.latency.p99, 1),
        fixed(l.latency.p999, 1),
        int(l.latency.max),
        int(l.perSec),
      ]),
    ),
  );
  p();
  p(
    `2. End to end: ${int(channels)} channels with 3-5 residents each from a ${avatarCount}-avatar cast (every floor knows all ` +
      `${avatarCount}), ${int(c.inbound)} inbound events in ${int(traffic.rounds.length)} rounds (one per channel, 10-30 s apart):`,
  );
  p(
    `   ${int(c.messages)} human messages (${pct(c.mentionOne / c.messages, 0)} name one present avatar, ${pct(c.mentionTwo / c.messages, 0)} two, ` +
      `${pct(c.onTopic / c.messages, 0)} unaddressed on a resident's topic, ${pct(c.smallTalk / c.messages, 0)} small talk), ` +
      `${int(c.summons)} summons of a guest avatar, ${int(c.dismissals)} dismissals.`,
  );
  p(
    '   Each side ran the traffic twice (fresh runtime / fresh floors); the second run is reported. "Inbound" counts all',
  );
  p('   inbound events (messages, summons, dismissals), as the runtime receives them through send().');
  p(
    '   runtime: createRuntime, offline scripted model, null transport, SimulatedClock; whenIdle() after each round and timer.',
  );
  p(
    '   bare floor: ChannelFloor.handle + nextDeadline only (turns generated and delivered at once, scripted text).',
  );
  p('   bare loop: the whole bare replay (floor calls + scripted replies + bookkeeping).');
  const sq = (f: (x: NonNullable<typeof sqliteFig>) => string) => (sqliteFig ? f(sqliteFig) : 'n/a');
  p(
    '   runtime on SQLite: the same on a durable store (a temporary file, WAL, synchronous = NORMAL), where a',
  );
  p(
    "   channel's state is written behind as it changes and before each reply (the memory store writes it on",
  );
  p(
    '   passivation and stop only). SQLite/floor is the median of its passes, each against the bare floor run beside it, round by round.',
  );
  if (c.inbound / channels < STEADY_EVENTS_PER_CHANNEL)
    p(
      `   A short run: ${int(c.inbound / channels)} inbound events per channel, so few channels fold their turn ledger while timed` +
        ` (every ${int(DEFAULT_LEDGER_LIMIT)} floor events) and the outbox is small; SQLite costs more per event in a long run` +
        ` (--messages ${int(STEADY_EVENTS_PER_CHANNEL * channels)}).`,
    );
  p(
    table(
      [
        '',
        'runtime',
        'on SQLite',
        'bare floor',
        'bare loop',
        'runtime/floor',
        'SQLite/floor',
        'runtime/loop',
      ],
      [
        [
          'inbound events/s',
          int(runtimeFig.inboundPerSec),
          sq((f) => int(f.inboundPerSec)),
          int(bareFloorFig.inboundPerSec),
          int(bareLoopFig.inboundPerSec),
          ratio(bareFloorFig.inboundPerSec, runtimeFig.inboundPerSec),
          sq(() => ratio(ratios.sqliteOverBareFloor, 1)),
          ratio(bareLoopFig.inboundPerSec, runtimeFig.inboundPerSec),
        ],
        [
          'µs per inbound event',
          fixed(runtimeFig.usPerInbound, 2),
          sq((f) => fixed(f.usPerInbound, 2)),
          fixed(bareFloorFig.usPerInbound, 2),
          fixed(bareLoopFig.usPerInbound, 2),
          ratio(runtimeFig.usPerInbound, bareFloorFig.usPerInbound),
          sq(() => ratio(ratios.sqliteOverBareFloor, 1)),
          ratio(runtimeFig.usPerInbound, bareLoopFig.usPerInbound),
        ],
        [
          'delivered responses/s',
          int(runtimeFig.deliveredPerSec),
          sq((f) => int(f.deliveredPerSec)),
          int(bareFloorFig.deliveredPerSec),
          int(bareLoopFig.deliveredPerSec),
          '',
          '',
          '',
        ],
        [
          'delivered responses',
          int(runtimeRun.delivered),
          sqliteRun ? int(sqliteRun.delivered) : 'n/a',
          int(bare.delivered),
          '',
          '',
          '',
          '',
        ],
        [
          'delivered per inbound event',
          fixed(runtimeRun.delivered / runtimeRun.inbound, 3),
          sqliteRun ? fixed(sqliteRun.delivered / sqliteRun.inbound, 3) : 'n/a',
          fixed(bare.delivered / bare.inbound, 3),
          '',
          '',
          '',
          '',
        ],
        [
          'ticks (timers fired)',
          int(runtimeRun.timers),
          sqliteRun ? int(sqliteRun.timers) : 'n/a',
          int(bare.ticks),
          '',
          '',
          '',
          '',
        ],
        [
          'CPU/wall',
          fixed(runtimeFig.cpuPerWall, 2),
          sq((f) => fixed(f.cpuPerWall, 2)),
          '',
          fixed(bareLoopFig.cpuPerWall, 2),
          '',
          '',
          '',
        ],
        ...(actorHeap
          ? [
              [
                `B per active channel (${int(actorHeap.channels)} ch)`,
                int(actorHeap.bytesPerRuntimeChannel),
                '',
                int(actorHeap.bytesPerBareFloor),
                '',
                ratio(actorHeap.bytesPerRuntimeChannel, actorHeap.bytesPerBareFloor),
                '',
                '',
              ],
              [
                'B per channel after the run',
                int(runtimeRun.retainedBytesPerChannel),
                '',
                '',
                '',
                '',
                '',
                '',
              ],
            ]
          : []),
      ],
    ),
  );
  for (const line of mongoReportLines(mongoRun)) p(line);
  if (retainedBreakdown) {
    const b = retainedBreakdown;
    p(
      `   B per channel after the run: every channel actor still active, and what the memory store keeps. Of ${int(b.total)} B` +
        ' (first run):',
    );
    p(
      `   ${int(b.history)} B history (${fixed(b.historyLines, 1)} lines per channel; the store keeps the last 200, trimmed at 400),`,
    );
    p(
      `   ${int(b.outbox)} B outbox (settled entries kept to drop a duplicate: the last 10,000, trimmed at 20,000, shared by all`,
    );
    p(
      `   channels), ${int(b.rest)} B the rest: the actor and its floor (threads; an ended one only while a pending turn names it, at most 16), the last`,
    );
    p(
      '   1,024 message ids, turns spoken per thread, relationships. Each part has a bound, none grows with time.',
    );
  }
  if (runtimeRun.rejected > 0 || runtimeRun.notSent > 0)
    p(
      `   runtime: ${int(runtimeRun.rejected)} events rejected, ${int(runtimeRun.notSent)} responses not sent`,
    );
  p(
    `   For context: the bare floor here does ${int(bareFloorFig.messagesPerSec)} messages/s counted as bench:coordination counts ` +
      `(human messages + delivered turns per second of floor time); the previous issue reported ` +
      `${int(PREVIOUS_COMPILED_FLOOR.low)}-${int(PREVIOUS_COMPILED_FLOOR.high)} msg/s for the compiled floor at ${PREVIOUS_COMPILED_FLOOR.scales}`,
  );
  p(
    '   (10 of 12 roster avatars present per channel there; here 3-5 present of a roster of the whole cast).',
  );
  p();
  p('Summary');
  p(
    table(
      ['figure', 'value'],
      [
        ['prepare + guarantee, per second', int(preparation.perSec)],
        ['prepare + guarantee + route (short), responses/s', int(routedShort.perSec)],
        ['prepare + guarantee + route (3 parts), responses/s', int(routedLong.perSec)],
        ...latencies.map((l) => [
          `route() latency p50 / p99, ${l.concurrency} in flight, µs`,
          `${fixed(l.latency.p50, 1)} / ${fixed(l.latency.p99, 1)}`,
        ]),
        ['runtime, inbound events/s', int(runtimeFig.inboundPerSec)],
        ['runtime, delivered responses/s', int(runtimeFig.deliveredPerSec)],
        ['runtime, µs per inbound event', fixed(runtimeFig.usPerInbound, 2)],
        ['bare floor, inbound events/s', int(bareFloorFig.inboundPerSec)],
        ['bare floor, µs per inbound event', fixed(bareFloorFig.usPerInbound, 2)],
        ['runtime / bare floor (times slower per inbound event)', ratio(ratios.runtimeOverBareFloor, 1)],
        ['runtime on SQLite (durable), µs per inbound event', sq((f) => fixed(f.usPerInbound, 2))],
        [
          'runtime on SQLite, first run on the traffic (not counted), µs per inbound event',
          sqliteFirstRun ? fixed((sqliteFirstRun.wallMs * 1000) / sqliteFirstRun.inbound, 2) : 'n/a',
        ],
        ['runtime on SQLite / bare floor', sqliteFig ? ratio(ratios.sqliteOverBareFloor, 1) : 'n/a'],
        [
          'runtime on SQLite / bare floor, each pass (against the floor beside it, round by round)',
          sqlitePasses.length > 0 ? sqlitePasses.map((p) => ratio(p.ratio, 1)).join(', ') : 'n/a',
        ],
        [
          "the same with the runtime's stop counted in (it folds every ledger left by the run), each pass",
          sqlitePasses.length > 0
            ? sqlitePasses
                .map((p) => `${ratio(p.withStopRatio, 1)} (stop ${int(p.run.stopMs)} ms)`)
                .join(', ')
            : 'n/a',
        ],
        [
          'runtime on MongoDB (fake server, its execution left out), µs per inbound event',
          mongoRun ? fixed(mongoRun.usPerInbound, 2) : 'n/a',
        ],
        [
          'runtime on MongoDB / bare floor (same traffic)',
          mongoRun ? ratio(mongoRun.overBareFloor, 1) : 'n/a',
        ],
        ['runtime / bare loop with scripted replies', ratio(ratios.runtimeOverBareLoop, 1)],
        [
          `usage ledger, µs per inbound event with / without (best of ${LEDGER_PASSES}, alternated)`,
          `${fixed(ledgerCost.usPerInboundWith, 2)} / ${fixed(ledgerCost.usPerInboundWithout, 2)} (${ledgerCost.usPerInboundWith >= ledgerCost.usPerInboundWithout ? '+' : ''}${fixed((ledgerCost.usPerInboundWith / ledgerCost.usPerInboundWithout - 1) * 100, 1)}%)`,
        ],
        ['B per channel after the run (memory store)', int(runtimeRun.retainedBytesPerChannel)],
        [
          'B per active channel actor (runtime / bare floor)',
          actorHeap
            ? `${int(actorHeap.bytesPerRuntimeChannel)} / ${int(actorHeap.bytesPerBareFloor)}`
            : 'n/a',
        ],
        [
          'previous issue, compiled floor msg/s (coordination traffic)',
          `${int(PREVIOUS_COMPILED_FLOOR.low)}-${int(PREVIOUS_COMPILED_FLOOR.high)}`,
        ],
      ].map((r) => r.map((x) => x ?? String(nan))),
    ),
  );
  process.stdout.write(`${out.join('\n')}\n`);
}
if (!args.json)
  printSummary('delivery', [
    { name: 'routing (prepare + guarantee + route)', value: routedShort.perSec, unit: 'responses/s' },
    {
      name: 'runtime, memory store, per inbound event',
      value: runtimeFig.usPerInbound,
      unit: 'µs',
      ratio: ratios.runtimeOverBareFloor,
      reference: 'the bare floor',
    },
    {
      name: 'runtime, SQLite (durable), per inbound event',
      value: sqliteFig?.usPerInbound ?? null,
      unit: 'µs',
      ratio: ratios.sqliteOverBareFloor,
      reference: 'the bare floor',
    },
    {
      name: 'runtime, MongoDB (fake in-process server, its execution left out), per inbound event',
      value: mongoRun?.usPerInbound ?? null,
      unit: 'µs',
      ratio: mongoRun?.overBareFloor ?? null,
      reference: 'the bare floor on the same traffic',
    },
  ]);
