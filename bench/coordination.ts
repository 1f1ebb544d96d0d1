/**
 * Coordination benchmark: many channels × avatars with mixed human and bot traffic, mentions and
 * summons, through the channel floor on both of its engines, in the same run and on the same
 * traffic:
 *
 *   compiled  `new ChannelFloor({ engine: 'compiled' })`, the production default: the presence and
 *             thread machines' own definitions run as plain step functions (src/engine/compiledMachine.ts);
 *   xstate    `new ChannelFloor({ engine: 'xstate' })`: real XState snapshots stepped per event.
 *
 * (A hand-written plain-object floor, ported by hand after every behaviour change, was the third
 * until it was retired; its last figures are in the README's performance section.)
 *
 * Prints figures; never asserts timings. The targets are checked against the compiled engine.
 *
 *   npm run bench:coordination                      # 100, 1,000 and 10,000 channels (about 3.5 minutes)
 *   npm run bench:coordination -- --quick           # 20 and 50 channels, seconds (CI runs it)
 *   npm run bench:coordination -- --channels 1000 --messages 100000 --avatars 10 --sweep 5,10,20 --json
 *   npm run bench:coordination -- --xstate-channels 100,1000   # skip the xstate engine at 10,000
 *
 * Node flags (package.json): --expose-gc for heap figures; --single-threaded so V8 runs GC and JIT on
 * the main thread too, making "one core" literal (CPU/wall is printed). With no concurrent marking,
 * the max latencies include whole stop-the-world GC pauses.
 */
import os from 'node:os';
import { parseArgs } from 'node:util';
import { type CoordinationConfig, defaultCoordinationConfig } from '../src/config/coordinationConfig.js';
import { ChannelFloor } from '../src/floor/channelFloor.js';
import { type ColdMatcher, measureColdMatchers } from './support/cold.js';
import { buildFloors, createStats, drive, type FloorFactory, type FloorLike } from './support/driver.js';
import {
  canMeasureHeap,
  type IdleHeap,
  measureIdle,
  measureRunningActors,
  measureThreads,
  settledHeap,
  type ThreadHeap,
} from './support/heap.js';
import {
  type Agreement,
  agreement,
  fixed,
  int,
  pct,
  type RunSummary,
  ratio,
  summarize,
  table,
} from './support/report.js';
import { printSummary } from './support/summary.js';
import {
  avatarPool,
  type ChannelSpec,
  generateTraffic,
  START_AT,
  type TrafficCounts,
} from './support/traffic.js';

// ---------------------------------------------------------------- options

const HELP = `Usage: npm run bench:coordination -- [options]

  --channels LIST         scales: floors alive and interleaved at once, comma-separated
                          (default 100,1000,10000; quick: 20,50)
  --per-channel N         inbound items (human messages, summons, dismissals) per channel (default 10)
  --messages N            inbound items per scale, at least channels x per-channel; smaller scales run
                          batches of fresh channels until they reach it (default 40000; quick: 500)
  --xstate-channels LIST  scales at which the xstate engine runs too, or "none" (default: every scale;
                          with "none" the sweep leaves it out as well)
  --xstate-messages N     inbound items per scale for the xstate engine: it runs the first batches of
                          the same traffic (default: as --messages)
  --avatars N             avatars present per channel (default 10)
  --sweep LIST            avatars-per-channel sweep, comma-separated, or "none" (default 5,10,20,40;
                          quick: 10)
  --sweep-channels N      channels in the sweep (default 1000; quick: 20)
  --casts N               distinct rosters the channels draw from, 0 = one per channel (default 20; quick: 10)
  --seed N                traffic seed (default 42)
  --quick                 small sizes and a short warm-up: seconds, rough figures
  --json                  print the results as JSON instead of tables
  --help                  this text
`;

const { values: args } = parseArgs({
  options: {
    channels: { type: 'string' },
    'per-channel': { type: 'string' },
    messages: { type: 'string' },
    'xstate-channels': { type: 'string' },
    'xstate-messages': { type: 'string' },
    avatars: { type: 'string' },
    sweep: { type: 'string' },
    'sweep-channels': { type: 'string' },
    casts: { type: 'string' },
    seed: { type: 'string' },
    quick: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
  strict: true,
});

if (args.help) {
  process.stdout.write(HELP);
  process.exit(0);
}

function intList(raw: string | undefined, fallback: number[], name: string, allowZero = false): number[] {
  if (raw === undefined) return fallback;
  if (raw === 'none') return [];
  const list = raw.split(',').map((s) => Number(s.replaceAll('_', '').trim()));
  if (list.length === 0 || list.some((n) => !Number.isInteger(n) || n < (allowZero ? 0 : 1))) {
    process.stderr.write(
      `--${name} takes ${allowZero ? 'whole numbers' : 'positive whole numbers'}, comma-separated (got "${raw}")\n`,
    );
    process.exit(2);
  }
  return list;
}
const intArg = (raw: string | undefined, fallback: number, name: string, allowZero = false) =>
  intList(raw, [fallback], name, allowZero)[0] as number;

const quick = args.quick;
const scales = intList(args.channels, quick ? [20, 50] : [100, 1_000, 10_000], 'channels');
const perChannel = intArg(args['per-channel'], 10, 'per-channel');
const itemsPerScale = intArg(args.messages, quick ? 500 : 40_000, 'messages');
const xstateScales = intList(args['xstate-channels'], scales, 'xstate-channels').filter((c) =>
  scales.includes(c),
);
const xstateItems = intArg(args['xstate-messages'], itemsPerScale, 'xstate-messages');
const avatars = intArg(args.avatars, 10, 'avatars');
const sweep = intList(args.sweep, quick ? [10] : [5, 10, 20, 40], 'sweep');
const sweepChannels = intArg(args['sweep-channels'], quick ? 20 : 1_000, 'sweep-channels');
const casts = intArg(args.casts, quick ? 10 : 20, 'casts', true);
const seed = intArg(args.seed, 42, 'seed', true);
const SPARES = 2;
/** Mention threads opened per floor for the heap figure: 5, fewer at large scales (at least ~20,000 threads). */
const threadPairs = (channels: number) => Math.min(5, Math.max(1, Math.ceil(20_000 / channels)));
const COLD_ROSTERS = quick ? 5 : 20;
/** Channels of the warm-up traffic, run twice by each engine before the scales. */
const WARM_CHANNELS = quick ? 20 : 200;
/** XState actors whose retained heap is measured for reference. */
const REFERENCE_ACTORS = quick ? 500 : 5_000;

const config: CoordinationConfig = { ...defaultCoordinationConfig };
const t0 = performance.now();
const log = (line: string) =>
  process.stderr.write(`[${((performance.now() - t0) / 1000).toFixed(1).padStart(5)} s] ${line}\n`);

// ---------------------------------------------------------------- the two engines

type ImplName = 'compiled' | 'xstate';
const IMPLS: { name: ImplName; factory: FloorFactory }[] = [
  { name: 'compiled', factory: (o) => new ChannelFloor({ ...o, engine: 'compiled' }) },
  { name: 'xstate', factory: (o) => new ChannelFloor({ ...o, engine: 'xstate' }) },
];
const PAIRS: readonly (readonly [ImplName, ImplName])[] = [['compiled', 'xstate']];
const xstateInSweep = xstateScales.length > 0;
const implsInSweep = IMPLS.filter((i) => i.name !== 'xstate' || xstateInSweep);

const TARGETS = {
  messagesPerSec: 50_000,
  /** The compiled engine's messages/s over the xstate engine's, in the same run, at every scale. */
  overXstate: 3,
  p99Us: 1_000,
  bytesPerIdlePresence: 2_048,
  /** Cost per message may vary at most this much across scales to count as independent of the number of avatars. */
  scaleDrift: 1.5,
};

// ---------------------------------------------------------------- measurement

interface ImplResult {
  /** Batches of `channels` fresh channels this floor ran at the scale, and their inbound items. */
  batches: number;
  items: number;
  run: RunSummary;
  idle: IdleHeap | null;
  threads: ThreadHeap | null;
}

interface PairAgreement extends Agreement {
  a: ImplName;
  b: ImplName;
}

interface ScaleResult {
  channels: number;
  batches: number;
  avatarsPerChannel: number;
  presences: number;
  items: number;
  traffic: TrafficCounts;
  impls: Partial<Record<ImplName, ImplResult>>;
  agreements: PairAgreement[];
}

interface SweepResult {
  avatarsPerChannel: number;
  channels: number;
  presences: number;
  impls: Partial<Record<ImplName, RunSummary>>;
  coldMatcher: ColdMatcher | null;
}

const pool = avatarPool(Math.max(400, 8 * (Math.max(avatars, ...sweep) + SPARES)), seed);

const trafficFor = (channels: number, perChannelAvatars: number, trafficSeed = seed) =>
  generateTraffic({
    channels,
    perChannel,
    avatarsPerChannel: perChannelAvatars,
    spares: SPARES,
    pool,
    seed: trafficSeed,
    casts,
  });
/** Warm-up traffic: the same kind, other messages than any measured channel's. */
const WARM_SEED = seed ^ 0x3a3a;

function warmUp(): void {
  const t = trafficFor(WARM_CHANNELS, avatars, WARM_SEED);
  for (let round = 0; round < 2; round++) {
    for (const impl of implsInSweep) {
      drive(
        buildFloors(impl.factory, t.channels, config, START_AT, true),
        t.channels,
        { seed, recordDecisions: true },
        createStats(true),
      );
      // (Warms the heap figures' code too; quick runs leave its forced collections out.)
      if (canMeasureHeap && !quick)
        measureThreads(impl.factory, t.channels.slice(0, 20), config, START_AT, threadPairs(20));
    }
  }
}

/**
 * Forced full collections (the heap figures) let V8 collect the hidden classes of objects that are
 * no longer alive, and it then discards the optimized code that depended on them ("deoptimization,
 * reason: weak objects"): a run right after them would start half cold, which a process busy with
 * live floors never does. So every timed run that follows them is preceded by this short, untimed
 * run of the same floor on other channels.
 */
const rewarmTraffic = trafficFor(100, avatars, WARM_SEED);
function rewarm(factory: FloorFactory): void {
  const t = rewarmTraffic.channels;
  drive(
    buildFloors(factory, t, config, START_AT, true),
    t,
    { seed, recordDecisions: false },
    createStats(false),
  );
}

/** Batches an implementation runs at a scale: all of them, except where the xstate engine is limited. */
function batchesFor(name: ImplName, channels: number, batches: number): number {
  if (name !== 'xstate') return batches;
  if (!xstateScales.includes(channels)) return 0;
  return Math.min(batches, Math.max(1, Math.ceil(xstateItems / (channels * perChannel))));
}

/** One engine's run at a scale: its batches, the figures it gathers, its idle heap. */
interface EngineRun {
  impl: (typeof IMPLS)[number];
  batches: number;
  stats: ReturnType<typeof createStats>;
  idle: IdleHeap | null;
  /** The first batch's floors, built while measuring the idle heap; driven first. */
  first: FloorLike[] | undefined;
}

/**
 * Each engine's idle heap on the first batch (forced collections), then a rewarm of each, so the
 * timed batches that follow run back to back.
 */
function startEngines(channels: number, batches: number, first: ChannelSpec[]): EngineRun[] {
  const runs: EngineRun[] = [];
  for (const impl of IMPLS) {
    const implBatches = batchesFor(impl.name, channels, batches);
    if (implBatches === 0) continue;
    const m = canMeasureHeap ? measureIdle(impl.factory, first, config, START_AT) : null;
    runs.push({
      impl,
      batches: implBatches,
      stats: createStats(true),
      idle: m?.heap ?? null,
      first: m?.floors,
    });
  }
  if (canMeasureHeap) for (const r of runs) rewarm(r.impl.factory);
  return runs;
}

/**
 * One scale: `channels` floors alive and interleaved at once. Every scale runs the same kind of
 * channel (same per-channel traffic length); smaller scales run several batches of fresh channels
 * so every scale sees enough traffic. Heap is measured on the first batch. The engines take turns
 * batch by batch on the same traffic, so a change in the machine's load while the scale runs
 * (other processes, frequency scaling) weighs on both alike and their ratio holds.
 */
function measureScale(channels: number): ScaleResult {
  const batches = Math.max(1, Math.ceil(itemsPerScale / (channels * perChannel)));
  const t = trafficFor(channels * batches, avatars);
  const itemsIn = (n: number) =>
    t.channels.slice(0, n * channels).reduce((sum, c) => sum + c.inbound.length, 0);
  const items = itemsIn(batches);
  log(
    `  ${int(channels)} channels alive at once, ${batches} batch${batches === 1 ? '' : 'es'}, ${int(items)} inbound items`,
  );
  const runs = startEngines(channels, batches, t.channels.slice(0, channels));
  for (let b = 0; b < batches; b++) {
    const batch = t.channels.slice(b * channels, (b + 1) * channels);
    for (const r of runs) {
      if (b >= r.batches) continue;
      const floors = r.first ?? buildFloors(r.impl.factory, batch, config, START_AT, true);
      r.first = undefined;
      drive(floors, batch, { seed, recordDecisions: true }, r.stats);
    }
  }
  const impls: ScaleResult['impls'] = {};
  const recorded: Partial<Record<ImplName, ReturnType<typeof createStats>>> = {};
  for (const r of runs) {
    const run = summarize(r.stats);
    // Only what the agreement needs is kept; the latency samples go.
    recorded[r.impl.name] = { ...r.stats, latencies: new Float64Array(0), kinds: new Uint8Array(0) };
    settledHeap();
    const threads = canMeasureHeap
      ? measureThreads(r.impl.factory, t.channels.slice(0, channels), config, START_AT, threadPairs(channels))
      : null;
    log(
      `    ${r.impl.name.padEnd(8)} ${int(run.messagesPerSec)} msg/s (steady ${int(run.steady.messagesPerSec)}), ` +
        `${fixed(run.steady.usPerMessage, 2)} µs/msg, p99 ${fixed(run.latency.p99)} µs` +
        (r.idle ? `, ${int(r.idle.bytesPerIdlePresence)} B/idle presence` : '') +
        (threads ? `, ${int(threads.bytesPerOpenThread)} B/open thread` : '') +
        (r.batches < batches ? ` (${r.batches} of ${batches} batches)` : ''),
    );
    impls[r.impl.name] = { batches: r.batches, items: itemsIn(r.batches), run, idle: r.idle, threads };
  }
  const agreements: PairAgreement[] = [];
  for (const [a, b] of PAIRS) {
    const ra = recorded[a];
    const rb = recorded[b];
    if (ra && rb) agreements.push({ a, b, ...agreement(ra, rb) });
  }
  return {
    channels,
    batches,
    avatarsPerChannel: avatars,
    presences: channels * avatars,
    items,
    traffic: t.counts,
    impls,
    agreements,
  };
}

function measureSweep(perChannelAvatars: number): SweepResult {
  const t = trafficFor(sweepChannels, perChannelAvatars);
  const impls: SweepResult['impls'] = {};
  for (const impl of implsInSweep) {
    let floors: FloorLike[] | undefined = buildFloors(impl.factory, t.channels, config, START_AT, true);
    settledHeap(); // as at the scales: the floors are tenured before the run, not promoted during it
    rewarm(impl.factory);
    impls[impl.name] = summarize(
      drive(floors, t.channels, { seed, recordDecisions: false }, createStats(false)),
    );
    floors = undefined;
    settledHeap();
  }
  const coldMatcher = canMeasureHeap
    ? measureColdMatchers(pool, perChannelAvatars + SPARES, COLD_ROSTERS, seed, 'sweep')
    : null;
  log(
    `    ${perChannelAvatars} avatars/channel: ` +
      implsInSweep
        .map((i) => `${i.name} ${fixed(impls[i.name]?.steady.usPerMessage ?? Number.NaN, 2)} µs/msg`)
        .join(', ') +
      (coldMatcher ? `, new roster's matcher built in ${fixed(coldMatcher.buildMs * 1000, 1)} µs` : ''),
  );
  return {
    avatarsPerChannel: perChannelAvatars,
    channels: sweepChannels,
    presences: sweepChannels * perChannelAvatars,
    impls,
    coldMatcher,
  };
}

const started = performance.now();
log(
  `coordination bench: scales ${scales.join(', ')} channels, ${perChannel} inbound items per channel, ` +
    `at least ${int(itemsPerScale)} per scale${quick ? ' (quick)' : ''}; xstate engine at ` +
    `${xstateScales.length > 0 ? xstateScales.join(', ') : 'no scale'}`,
);
if (!canMeasureHeap) log('  (no --expose-gc: heap figures are skipped)');
log('  warming up...');
warmUp();
const scaleResults = scales.map(measureScale);
const coldMatcher = canMeasureHeap
  ? measureColdMatchers(pool, avatars + SPARES, COLD_ROSTERS, seed, 'main')
  : null;
if (sweep.length > 0) log(`  avatars-per-channel sweep at ${int(sweepChannels)} channels`);
const sweepResults = sweep.map(measureSweep);
const actorBytes = canMeasureHeap ? measureRunningActors(config, REFERENCE_ACTORS) : Number.NaN;
const elapsedS = (performance.now() - started) / 1000;
log(`  done in ${fixed(elapsedS)} s`);

// ---------------------------------------------------------------- verdicts (compiled engine)

const mark = (ok: boolean | null) => (ok === null ? '?' : ok ? '✓' : '✗');
const all = <T>(xs: T[], ok: (x: T) => boolean) => xs.length > 0 && xs.every(ok);
const compiledOf = (s: ScaleResult) => s.impls.compiled as ImplResult;
/**
 * Messages per second counting, for every floor, building the mention matcher of a never-seen
 * roster: the one part of activating a floor that its first scans (timed) do not already include.
 */
const ifRostersNew = (r: RunSummary) =>
  coldMatcher ? r.messages / ((r.floorMs + r.channels * coldMatcher.buildMs) / 1000) : Number.NaN;
const usPerMsgOf = (name: ImplName) =>
  scaleResults.flatMap((s) => {
    const r = s.impls[name];
    return r ? [r.run.steady.usPerMessage] : [];
  });
const driftOf = (xs: number[]) => (xs.length > 1 ? Math.max(...xs) / Math.min(...xs) : Number.NaN);
const drift = driftOf(usPerMsgOf('compiled'));
/**
 * Messages per second of CPU time of the whole driver loop (floor calls and the driver's
 * bookkeeping): unlike the floor-time figures, time the process spends waiting for a core on a busy
 * machine does not count.
 */
const perCpuSecond = (r: RunSummary) => r.messagesPerSecWall / r.cpuPerWall;
/** Messages/s of the compiled engine over the xstate engine's at a scale (undefined if xstate did not run). */
const overXstateOf = (s: ScaleResult) => {
  const x = s.impls.xstate;
  return x ? compiledOf(s).run.messagesPerSec / x.run.messagesPerSec : undefined;
};
const agreementOf = (s: ScaleResult, a: ImplName, b: ImplName) =>
  s.agreements.find((p) => p.a === a && p.b === b);
/** The pairs compared at one scale at least. */
const ranPairs = PAIRS.filter(([a, b]) => scaleResults.some((s) => agreementOf(s, a, b)));
const verdicts = {
  messagesPerSec: all(scaleResults, (s) => compiledOf(s).run.messagesPerSec >= TARGETS.messagesPerSec),
  messagesPerSecSteady: all(
    scaleResults,
    (s) => compiledOf(s).run.steady.messagesPerSec >= TARGETS.messagesPerSec,
  ),
  messagesPerSecNewRosters: coldMatcher
    ? all(scaleResults, (s) => ifRostersNew(compiledOf(s).run) >= TARGETS.messagesPerSec)
    : null,
  overXstate: all(scaleResults, (s) => (overXstateOf(s) ?? Number.NaN) >= TARGETS.overXstate),
  p99: all(scaleResults, (s) => compiledOf(s).run.latency.p99 < TARGETS.p99Us),
  p99Steady: all(scaleResults, (s) => compiledOf(s).run.steady.latency.p99 < TARGETS.p99Us),
  bytesPerIdlePresence: canMeasureHeap
    ? all(
        scaleResults,
        (s) =>
          (compiledOf(s).idle?.bytesPerIdlePresence ?? Number.POSITIVE_INFINITY) <
          TARGETS.bytesPerIdlePresence,
      )
    : null,
  independentOfTotalAvatars: Number.isFinite(drift) ? drift <= TARGETS.scaleDrift : null,
  agreement: all(scaleResults, (s) => s.agreements.every((p) => p.rate === 1)),
  identicalStreams: all(scaleResults, (s) => s.agreements.every((p) => p.identicalStreams === p.channels)),
};

// ---------------------------------------------------------------- output

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
        options: {
          scales,
          perChannel,
          itemsPerScale,
          xstateScales,
          xstateItems,
          avatarsPerChannel: avatars,
          spares: SPARES,
          casts,
          sweep,
          sweepChannels,
          quick,
        },
        config,
        targets: TARGETS,
        verdicts,
        scaleDrift: drift,
        scales: scaleResults,
        coldMatcher,
        sweep: sweepResults,
        runningActorBytesPerPresence: actorBytes,
      },
      null,
      2,
    )}\n`,
  );
} else {
  const out: string[] = [];
  const p = (s = '') => out.push(s);
  const nan = Number.NaN;
  const us1 = (n: number) => fixed(n, 1);
  const us2 = (n: number) => fixed(n, 2);
  const ch = (s: ScaleResult) => `${int(s.channels)} ch`;

  p(
    'Troupe coordination benchmark: the channel floor on its compiled engine (the default), the same floor stepping',
  );
  p('real XState snapshots, on the same traffic');
  p(`node ${environment.node} (V8 ${environment.v8}), flags: ${environment.execArgv.join(' ') || '(none)'}`);
  p(
    `${environment.cpu}, ${environment.cores} cores; all work on the main thread; seed ${seed}; took ${fixed(elapsedS)} s`,
  );
  const first = scaleResults[0];
  if (first) {
    const c = first.traffic;
    const human = c.humanMessages;
    p(
      `Traffic: every channel gets ${perChannel} inbound items, 1-20 s apart; ${avatars} avatars present (+${SPARES} to summon), ` +
        `rosters drawn from ${casts === 0 ? 'one cast per channel' : `${casts} casts`} of a ${pool.length}-avatar pool.`,
    );
    p(
      `  Inbound at ${int(first.channels)} channels: ${int(human)} human messages (${pct(c.mentioning / human, 0)} mention 1-2 avatars, ` +
        `${pct(c.replies / human, 0)} reply to an avatar, ${pct(c.unaddressed / human, 0)} unaddressed), ` +
        `${int(c.summons)} summons, ${int(c.dismissals)} dismissals.`,
    );
    const r = compiledOf(first).run;
    p(
      `  Avatar turns arise from the floor's claims: ${int(r.deliveredTurns)} delivered (${pct(r.deliveredTurns / r.messages, 0)} of messages), ` +
        `${int(r.threadsOpened)} threads opened, ${int(r.byKind.tick)} ticks, ${fixed(r.events / r.messages, 2)} floor events per message.`,
    );
  }
  p('Engines, run in this order at every scale, after a warm-up of both:');
  p(
    "  compiled  ChannelFloor, engine 'compiled' (production default): the machines' definitions as plain step functions",
  );
  p(
    "  xstate    ChannelFloor, engine 'xstate': real XState snapshots stepped per event (machine.transition)",
  );
  const xstateNote = scaleResults.flatMap((s) => {
    const x = s.impls.xstate;
    if (!x) return [`not run at ${int(s.channels)} channels`];
    if (x.batches < s.batches)
      return [
        `at ${int(s.channels)} channels only the first ${x.batches} of ${s.batches} batches (${int(x.items)} of ${int(s.items)} items)`,
      ];
    return [];
  });
  if (xstateNote.length > 0) {
    p(
      `  The xstate engine was limited to keep the run short (--xstate-channels, --xstate-messages): ${xstateNote.join('; ')}` +
        `${xstateInSweep ? '' : '; left out of the sweep'}. Its agreement is over the channels it ran.`,
    );
  }
  p();

  // The headline: the compiled engine against the targets.
  p('Targets, compiled engine:');
  {
    const rows: string[][] = [];
    const row = (label: string, get: (s: ScaleResult) => string, target: string, ok: boolean | null) =>
      rows.push([label, ...scaleResults.map(get), target, target === '' ? '' : mark(ok)]);
    row('messages/s', (s) => int(compiledOf(s).run.messagesPerSec), '>= 50,000', verdicts.messagesPerSec);
    row(
      'messages/s steady',
      (s) => int(compiledOf(s).run.steady.messagesPerSec),
      '>= 50,000',
      verdicts.messagesPerSecSteady,
    );
    if (coldMatcher)
      row(
        'msg/s if every roster were new',
        (s) => int(ifRostersNew(compiledOf(s).run)),
        '>= 50,000',
        verdicts.messagesPerSecNewRosters,
      );
    row(
      'messages/s over the xstate engine',
      (s) => {
        const r = overXstateOf(s);
        return r === undefined ? 'n/a' : `${fixed(r, 2)}x`;
      },
      `>= ${TARGETS.overXstate}x`,
      verdicts.overXstate,
    );
    row(
      '  per CPU second of the loop',
      (s) => {
        const x = s.impls.xstate;
        return x ? `${fixed(perCpuSecond(compiledOf(s).run) / perCpuSecond(x.run), 2)}x` : 'n/a';
      },
      '',
      null,
    );
    row('p99 µs per event', (s) => us1(compiledOf(s).run.latency.p99), '< 1,000 µs', verdicts.p99);
    row('p99 µs steady', (s) => us1(compiledOf(s).run.steady.latency.p99), '< 1,000 µs', verdicts.p99Steady);
    row(
      'µs per message steady',
      (s) => us2(compiledOf(s).run.steady.usPerMessage),
      `drift <= ${TARGETS.scaleDrift}x`,
      verdicts.independentOfTotalAvatars,
    );
    if (canMeasureHeap)
      row(
        'B per idle presence',
        (s) => int(compiledOf(s).idle?.bytesPerIdlePresence ?? nan),
        '< 2,048 B',
        verdicts.bytesPerIdlePresence,
      );
    for (const [a, b] of ranPairs.filter(([x]) => x === 'compiled')) {
      row(
        `same decisions as ${b}`,
        (s) => {
          const g = agreementOf(s, a, b);
          return g ? pct(g.rate, 3) : 'n/a';
        },
        '100%',
        all(scaleResults, (s) => (agreementOf(s, a, b)?.rate ?? 1) === 1),
      );
    }
    p(table(['', ...scaleResults.map(ch), 'target', ''], rows));
  }
  p(
    `Cost per message across scales, steady µs, for ${scaleResults.map((s) => int(s.presences)).join(' -> ')} presences alive`,
  );
  p(`(counted as independent of the number of avatars when max/min <= ${TARGETS.scaleDrift}x):`);
  for (const impl of IMPLS) {
    const xs = usPerMsgOf(impl.name);
    const d = driftOf(xs);
    p(
      `  ${impl.name.padEnd(8)}  ${xs.length > 0 ? xs.map(us2).join(' -> ') : 'not run'}` +
        (Number.isFinite(d) ? `  max/min ${fixed(d, 2)}x ${mark(d <= TARGETS.scaleDrift)}` : '') +
        (xs.length < scaleResults.length ? ` (${xs.length} of ${scaleResults.length} scales)` : ''),
    );
  }
  p();

  // Side by side, one table per scale.
  const metrics: {
    label: string;
    get: (r: ImplResult) => number;
    fmt: (n: number) => string;
    ratio: boolean;
  }[] = [
    { label: 'floor events (handle calls)', get: (r) => r.run.events, fmt: int, ratio: false },
    { label: 'messages (human + delivered turns)', get: (r) => r.run.messages, fmt: int, ratio: false },
    { label: 'messages/s', get: (r) => r.run.messagesPerSec, fmt: int, ratio: true },
    { label: 'messages/s steady', get: (r) => r.run.steady.messagesPerSec, fmt: int, ratio: true },
    { label: 'events/s', get: (r) => r.run.eventsPerSec, fmt: int, ratio: true },
    { label: 'p50 µs per event', get: (r) => r.run.latency.p50, fmt: us2, ratio: true },
    { label: 'p99 µs per event', get: (r) => r.run.latency.p99, fmt: us1, ratio: true },
    { label: 'p99 µs steady', get: (r) => r.run.steady.latency.p99, fmt: us1, ratio: true },
    { label: 'max µs per event', get: (r) => r.run.latency.max, fmt: int, ratio: true },
    { label: 'µs per message steady', get: (r) => r.run.steady.usPerMessage, fmt: us2, ratio: true },
    { label: 'ms per floor, first 2 scans', get: (r) => r.run.cold.msPerFloor, fmt: us2, ratio: true },
    ...(coldMatcher
      ? [
          {
            label: 'msg/s if every roster were new',
            get: (r: ImplResult) => ifRostersNew(r.run),
            fmt: int,
            ratio: true,
          },
        ]
      : []),
    ...(canMeasureHeap
      ? [
          {
            label: 'B per idle presence',
            get: (r: ImplResult) => r.idle?.bytesPerIdlePresence ?? nan,
            fmt: int,
            ratio: true,
          },
          {
            label: 'B per open thread',
            get: (r: ImplResult) => r.threads?.bytesPerOpenThread ?? nan,
            fmt: int,
            ratio: true,
          },
          {
            label: 'B per floor, nobody present',
            get: (r: ImplResult) => r.idle?.bytesPerEmptyFloor ?? nan,
            fmt: int,
            ratio: true,
          },
        ]
      : []),
    { label: 'messages per CPU second, whole loop', get: (r) => perCpuSecond(r.run), fmt: int, ratio: true },
    { label: 'CPU/wall during the run', get: (r) => r.run.cpuPerWall, fmt: us2, ratio: false },
  ];
  for (const s of scaleResults) {
    const x = s.impls.xstate;
    p(
      `${int(s.channels)} channels alive at once (${int(s.presences)} presences): ${s.batches} batch${s.batches === 1 ? '' : 'es'} ` +
        `of fresh channels, ${int(s.items)} inbound items` +
        (!x ? '; xstate engine not run' : x.batches < s.batches ? `; xstate: ${x.batches} batches` : '') +
        '.',
    );
    const rows = metrics.map((m) => {
      const v = (name: ImplName) => {
        const r = s.impls[name];
        return r ? m.get(r) : nan;
      };
      const rat = (a: ImplName, b: ImplName) => (m.ratio ? ratio(v(a), v(b)) : '');
      return [m.label, m.fmt(v('compiled')), m.fmt(v('xstate')), rat('compiled', 'xstate')];
    });
    p(table(['', 'compiled', 'xstate', 'compiled/xstate'], rows));
    p();
  }

  if (coldMatcher) {
    p(
      `A roster never seen before (${coldMatcher.avatars} names, ${coldMatcher.rosters} rosters, medians): building its mention ` +
        `matcher costs ${us1(coldMatcher.buildMs * 1000)} µs (was the regex compilation), its first scan ${us1(coldMatcher.firstMs * 1000)} µs, the second ` +
        `${us1(coldMatcher.secondMs * 1000)} µs, then ${us1(coldMatcher.thirdMs * 1000)} µs; ${int(coldMatcher.bytes)} B of heap per matcher.`,
    );
  }
  if (sweepResults.length > 0) {
    p();
    p(
      `Per-message cost vs avatars per channel (${int(sweepChannels)} channels, ${perChannel} inbound items each; steady figures;`,
    );
    p('c/x = compiled/xstate):');
    p(
      table(
        [
          'avatars/channel',
          'presences',
          'compiled µs/msg',
          'xstate µs/msg',
          'c/x',
          'compiled p99 µs',
          'claims/msg',
          'matcher build µs',
        ],
        sweepResults.map((s) => {
          const u = (name: ImplName) => s.impls[name]?.steady.usPerMessage ?? nan;
          const c = s.impls.compiled as RunSummary;
          return [
            String(s.avatarsPerChannel),
            int(s.presences),
            us2(u('compiled')),
            us2(u('xstate')),
            ratio(u('compiled'), u('xstate')),
            us1(c.steady.latency.p99),
            us2(c.claims / c.messages),
            s.coldMatcher ? us1(s.coldMatcher.buildMs * 1000) : 'n/a',
          ];
        }),
      ),
    );
  }
  if (canMeasureHeap) {
    const idle = scaleResults.at(-1)?.impls.compiled?.idle?.bytesPerIdlePresence ?? nan;
    p();
    p(
      `For reference: a running XState actor of the presence machine (createActor().start()) retains ${int(actorBytes)} B, ` +
        `${fixed(actorBytes / idle, 1)}x an idle presence of the compiled engine.`,
    );
  }

  p();
  p(
    'Agreement (both engines fed the same inbound traffic by the same driver). Decisions: share of triggers for which',
  );
  p(
    'both claimed the same (avatar, rung) set. Streams: channels whose whole effect stream (every effect, reasons',
  );
  p('and thread events included, in order) was identical.');
  {
    const rows: string[][] = [];
    for (const [a, b] of ranPairs) {
      const get = (s: ScaleResult) => agreementOf(s, a, b);
      rows.push([
        `${a} ~ ${b}: decisions`,
        ...scaleResults.map((s) => {
          const g = get(s);
          return g ? `${pct(g.rate, 3)} of ${int(g.triggers)}` : 'n/a';
        }),
        mark(all(scaleResults, (s) => (get(s)?.rate ?? 1) === 1)),
      ]);
      rows.push([
        '    identical streams',
        ...scaleResults.map((s) => {
          const g = get(s);
          return g ? `${int(g.identicalStreams)} of ${int(g.channels)}` : 'n/a';
        }),
        mark(all(scaleResults, (s) => (get(s)?.identicalStreams ?? 0) === (get(s)?.channels ?? 0))),
      ]);
    }
    p(table(['', ...scaleResults.map(ch), ''], rows));
  }
  for (const s of scaleResults) {
    for (const g of s.agreements) {
      const ra = s.impls[g.a]?.run;
      const rb = s.impls[g.b]?.run;
      if (g.rate < 1)
        p(
          `  ${int(s.channels)} channels, ${g.a} ~ ${g.b}: keys only in ${g.a} ${int(g.onlyA)}, only in ${g.b} ${int(g.onlyB)}; ` +
            g.examples.map((e) => `${e.trigger}: ${e.a ?? '(absent)'} | ${e.b ?? '(absent)'}`).join('; '),
        );
      if (
        ra &&
        rb &&
        (ra.claims !== rb.claims || ra.suppressed !== rb.suppressed) &&
        ra.channels === rb.channels
      )
        p(
          `  ${int(s.channels)} channels, ${g.a} ~ ${g.b}: totals differ: claims ${ra.claims} vs ${rb.claims}, ` +
            `suppressed ${ra.suppressed} vs ${rb.suppressed}`,
        );
    }
    for (const impl of IMPLS) {
      const r = s.impls[impl.name]?.run;
      const rejected = Object.entries(r?.rejected ?? {}).map(([k, v]) => `${k} ${v}`);
      if (r && (rejected.length > 0 || r.staleDeadlines > 0))
        p(
          `  ${int(s.channels)} channels, ${impl.name} rejected: ${rejected.join(', ') || 'none'}; stale deadlines: ${r.staleDeadlines}`,
        );
    }
  }

  const ref = scaleResults.find((s) => s.channels === 1_000) ?? scaleResults.at(-1);
  if (ref) {
    const c = compiledOf(ref).run;
    p();
    p(`At ${int(ref.channels)} channels:`);
    p(
      `  rungs claimed: ${Object.entries(c.claimsByRung)
        .map(([k, v]) => `${k} ${int(v)}`)
        .join(', ')}`,
    );
    const perImpl = (title: string, line: (r: RunSummary) => string) => {
      p(`  ${title}:`);
      for (const impl of IMPLS) {
        const r = ref.impls[impl.name]?.run;
        if (r) p(`    ${impl.name.padEnd(8)} ${line(r)}`);
      }
    };
    perImpl('latency by event kind, p50/p99/max µs', (r) =>
      Object.entries(r.latencyByKind)
        .map(([k, l]) => `${k} ${us1(l.p50)}/${us1(l.p99)}/${int(l.max)}`)
        .join('; '),
    );
    perImpl('share of handle time by event kind', (r) =>
      Object.entries(r.timeShareByKind)
        .sort((x, y) => y[1] - x[1])
        .map(([k, v]) => `${k} ${pct(v, 0)}`)
        .join(', '),
    );
  }

  p();
  p('What the figures mean:');
  for (const line of [
    'scale: floors alive and interleaved at once (round-robin, one inbound item per channel in turn). Every channel',
    '  gets the same length of traffic at every scale; smaller scales run batches of fresh channels.',
    'messages/s, events/s: messages (inbound human messages + delivered avatar turns) and floor events (every handle',
    '  call: messages, summons, dismissals, turn.generated/delivered/failed, ticks) per second of time spent inside',
    '  the floor (handle + nextDeadline), one thread. Traffic generation and the driver run outside the timed windows.',
    "steady: without each floor's first two text scans (its warm-up; until the matcher stopped compiling a regex per",
    '  roster, that is where the regex was compiled and tiered up).',
    'p50/p99/max: latency of single handle calls (performance.now() around each; ~0.05 µs timer overhead included).',
    '  With --single-threaded there is no concurrent GC marking, so the max values are stop-the-world GC pauses.',
    'ratios: of the figures as printed, so above 1x is faster for rates and slower (or bigger) for times and bytes.',
    'messages per CPU second: messages over the CPU time of the whole driver loop (floor calls and bookkeeping);',
    '  waiting for a core on a busy machine does not count, so its ratio holds better under load than the others.',
    "msg/s if every roster were new: all floor time plus, per floor, building a never-seen roster's mention matcher",
    '  (median of the "new roster" measurement; the floor does it in its constructor, outside the timed windows,',
    "  and every floor builds its own, so a floor's first scans, timed, are already a new matcher's). Until the matcher",
    '  stopped compiling a regex per roster (4c14f3e), this counted the regex compilation and tier-up instead.',
    'µs per message: floor time divided by messages, so it includes the ticks and turn progress a message brings',
    '  with it; its drift across scales shows whether cost depends on the total number of avatars alive.',
    'B per idle presence: floors built twice from the same rosters, with nobody present and with every avatar present',
    '  and idle; difference in retained heap (after full GCs) / presences. B per floor, nobody present: first build / channels.',
    `B per open thread: fresh floors; ${scaleResults.map((s) => threadPairs(s.channels)).join('/')} mention threads per channel (by scale), opened by real steps (a human mentions A,`,
    "  A's answer mentions B, B answers; the claim that follows is aborted). Retained heap with the threads open, minus",
    "  after a tick a day later has ended them and the floors' bounded endedThreads maps are emptied, / threads.",
    'agreement: for every trigger (message, summon, scheduled turn), the (avatar, rung) set each floor claimed; the',
    '  share of triggers with equal sets; and the channels whose effect streams hash the same.',
  ])
    p(`  ${line}`);
  process.stdout.write(`${out.join('\n')}\n`);
}
if (!args.json)
  printSummary(
    'coordination',
    scaleResults.flatMap((s) => {
      const c = compiledOf(s).run;
      const x = s.impls.xstate?.run;
      return [
        {
          name: `compiled floor, ${int(s.channels)} channels`,
          value: c.messagesPerSec,
          unit: 'msg/s',
          ...(x ? { ratio: c.messagesPerSec / x.messagesPerSec, reference: 'xstate engine' } : {}),
        },
        {
          name: `compiled floor, ${int(s.channels)} channels, per CPU second of the loop`,
          value: perCpuSecond(c),
          unit: 'msg/s',
          ...(x ? { ratio: perCpuSecond(c) / perCpuSecond(x), reference: 'xstate engine' } : {}),
        },
        {
          name: `compiled floor p99, ${int(s.channels)} channels`,
          value: c.latency.p99,
          unit: 'µs',
          ...(x ? { ratio: c.latency.p99 / x.latency.p99, reference: 'xstate engine' } : {}),
        },
      ];
    }),
  );
