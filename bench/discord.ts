/**
 * Discord benchmark: inbound gateway messages per second through the Discord adapter, the runtime
 * and the webhook transport, against the fake Discord running in a child process (so its work is
 * not counted), and the adapter's share of the cost per message.
 *
 *   1. Through Discord: a discord.js client logged in to the fake; C channels with two resident
 *      avatars; R rounds of one message per channel (each naming one avatar), posted by the fake
 *      and delivered over its gateway; the bot's answers go out through channel webhooks over REST.
 *      Each round ends when every message has reached the runtime and the runtime is idle.
 *   2. The runtime alone: the same avatars, channels and messages given to runtime.send, answers to
 *      a transport that takes them at once.
 *
 * The adapter's share is the extra CPU time of this process per message in (1) over (2): discord.js
 * (gateway, REST, caches) and Troupe's adapter (inbound conversion, webhooks, quote lines).
 * Prints figures and ratios, and what each part keeps in memory (discord.js's caches, the adapter's
 * maps, the rest). Fails (exit 1) only when its premise breaks: a request waited on discord.js's
 * global rate limiter, so the figures would measure a sleep.
 *
 *   npm run bench:discord                      # C=100, R=240 (24,000 messages; minutes)
 *   npm run bench:discord -- --channels 200 --rounds 30
 *   npm run bench:discord -- --quick           # C=20, R=5 (seconds)
 */
import { type ChildProcess, fork } from 'node:child_process';
import { Session } from 'node:inspector/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { writeHeapSnapshot } from 'node:v8';
import type { REST } from 'discord.js';
import { filter, Subject, tap } from 'rxjs';
import type { AvatarDefinitionInput } from '../src/actors/avatarDefinition.js';
import type { Runtime } from '../src/actors/runtimeOptions.js';
import { ChannelRecentMap } from '../src/adapters/discord/channelRecentMap.js';
import { createDiscordClient, DiscordTransport, startDiscordBot } from '../src/adapters/discord/index.js';
import { RecentMap } from '../src/adapters/discord/recentMap.js';
import { createMemoryStore } from '../src/adapters/store/memory/memoryStore.js';
import { SettledKeys } from '../src/adapters/store/memory/settledKeys.js';
import { createRuntime } from '../src/createRuntime.js';
import { silentLogger } from '../src/logging/logger.js';
import type { TroupeStore } from '../src/ports/store.js';
import { intArg } from './support/args.js';
import { settledHeap } from './support/heap.js';
import { NullTransport } from './support/nullTransport.js';
import { printSummary } from './support/summary.js';

const { values: args } = parseArgs({
  options: {
    channels: { type: 'string' },
    rounds: { type: 'string' },
    help: { type: 'boolean', default: false },
    functions: { type: 'boolean', default: false },
    quick: { type: 'boolean', default: false },
    'heap-snapshot': { type: 'string' },
  },
});
if (args.help) {
  process.stdout.write(
    'Usage: npm run bench:discord -- [--channels N (100)] [--rounds N (240)] [--quick (20, 5)]\n',
  );
  process.exit(0);
}
const CHANNELS = intArg(args.channels, args.quick ? 20 : 100, 'channels');
const ROUNDS = intArg(args.rounds, args.quick ? 5 : 240, 'rounds');

const avatarsFor = (kind: string, channels: string[]): AvatarDefinitionInput[] => [
  { id: 'nova', name: 'Nova', emoji: '🌟', residentIn: channels.map((c) => `${kind}:${c}`) },
  { id: 'rex', name: 'Rex', emoji: '🦖', residentIn: channels.map((c) => `${kind}:${c}`) },
];
const textOf = (round: number, i: number) =>
  `${(round + i) % 2 === 0 ? 'Nova' : 'Rex'}, question ${round}.${i}?`;

interface RunFigures {
  messages: number;
  answers: number;
  wallMs: number;
  cpuMs: number;
}

function ask(child: ChildProcess, message: object, reply: string): Promise<Record<string, unknown>> {
  return new Promise((resolve) => {
    const on = (m: unknown) => {
      if ((m as { type?: string }).type === reply) {
        child.off('message', on);
        resolve(m as Record<string, unknown>);
      }
    };
    child.on('message', on);
    child.send(message);
  });
}

interface CpuProfile {
  nodes: { id: number; callFrame: { url: string; functionName: string } }[];
  samples: number[];
  timeDeltas: number[];
}

/** What the runtime keeps per channel, by part (bytes; measured by emptying each in turn). */
interface RuntimeParts {
  /** The in-memory store's channel history. */
  history: number;
  /** The in-memory store's settled outbox entries. */
  outbox: number;
  /** Channel actors (floor, inbound ids, turns) and routing, found by stopping the runtime. */
  actors: number;
}
const noParts = (): RuntimeParts => ({ history: Number.NaN, outbox: Number.NaN, actors: Number.NaN });

/** Empties the Map fields of an object, and of the SettledKeys it holds (bench-only introspection). */
function clearMaps(holder: object): number {
  let entries = 0;
  for (const value of Object.values(holder)) {
    if (value instanceof Map) {
      entries += value.size;
      value.clear();
    } else if (value instanceof SettledKeys) clearMaps(value);
  }
  return entries;
}

/**
 * Measures the runtime's parts from a settled heap at `heap`: the store's history and settled
 * outbox (emptied), then the runtime stopped (its channels written to the store's documents,
 * emptied too). Leaves the runtime stopped.
 */
async function runtimeParts(
  runtime: Runtime,
  store: TroupeStore,
  heap: number,
  channels: number,
): Promise<RuntimeParts> {
  clearMaps(store.history);
  const withoutHistory = settledHeap();
  clearMaps(store.outbox);
  const withoutOutbox = settledHeap();
  await runtime.stop();
  clearMaps(store.documents);
  const withoutActors = settledHeap();
  return {
    history: (heap - withoutHistory) / channels,
    outbox: (withoutHistory - withoutOutbox) / channels,
    actors: (withoutOutbox - withoutActors) / channels,
  };
}

/** Heap the bot keeps per channel after the run, by part, and what the caches held. */
let retained = {
  runtime: noParts(),
  bytesPerChannel: Number.NaN,
  discordJsCachesPerChannel: Number.NaN,
  adapterMapsPerChannel: Number.NaN,
  /** discord.js's REST route handlers and bucket hashes. */
  routesPerChannel: Number.NaN,
  /** The channels and guild discord.js must know, and code compiled during the run. */
  restPerChannel: Number.NaN,
  routes: 0,
  cachedMessages: 0,
  cachedUsers: 0,
  remembered: 0,
  adapterEntries: 0,
};

/** The global rate given to discord.js: far above what the run can reach. */
const LIFTED_RATE = 1_000_000;
/** discord.js's default global limiter (Discord's 50 requests/s per bot). */
const LIMITER_RATE = 50;
/** Requests that waited on discord.js's global limiter (the premise is that none do). */
let globalWaits = 0;

function watchLimiter(rest: REST, name: string): void {
  rest.on('rateLimited', (info) => {
    if (!info.global) return;
    globalWaits += 1;
    if (globalWaits === 1)
      process.stderr.write(
        `bench:discord: ${name} waited on discord.js's global limiter (${info.limit}/s)\n`,
      );
  });
}

/** Empties the adapter's own maps (bench-only introspection); the entries they held. */
function clearAdapterMaps(transport: DiscordTransport): number {
  let entries = 0;
  const holders: object[] = [transport, transport.memory];
  for (const holder of holders)
    for (const value of Object.values(holder))
      if (value instanceof RecentMap || value instanceof ChannelRecentMap || value instanceof Map) {
        entries += value.size;
        value.clear();
      }
  return entries;
}

/** Where the sampled CPU time went, by part (self time, ms). */
let breakdown: Map<string, number> = new Map();

function partOf(url: string, fn: string): string {
  if (/\/(src|dist)\/adapters\/discord\//u.test(url)) return "Troupe's Discord adapter";
  if (/node_modules\/(discord\.js|@discordjs|discord-api-types|@sapphire|magic-bytes)/u.test(url))
    return 'discord.js';
  if (
    /node_modules\/(undici|ws)\//u.test(url) ||
    /^node:(internal\/)?(http|net|stream|buffer|zlib|_http|dns|tls|events)/u.test(url)
  )
    return 'HTTP and WebSocket (undici, ws, node)';
  if (/\/(src|dist)\//u.test(url) || /node_modules\/(xstate|rxjs|zod|pino)/u.test(url))
    return 'the runtime (Troupe core, xstate, rxjs, zod)';
  if (fn === '(garbage collector)') return 'garbage collection';
  if (fn === '(idle)' || fn === '(program)') return '(idle / program)';
  return 'other (node, tsx)';
}

/** The adapter's costliest functions (self time, ms), for `--functions`. */
const adapterFunctions = new Map<string, number>();

function selfTimeByPart(profile: CpuProfile): Map<string, number> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parts = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const node = byId.get(id);
    if (!node) return;
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    const part = partOf(node.callFrame.url, node.callFrame.functionName);
    parts.set(part, (parts.get(part) ?? 0) + ms);
    if (part === "Troupe's Discord adapter" || part === 'other (node, tsx)') {
      const name = `${node.callFrame.functionName || '(anonymous)'} ${node.callFrame.url.split('/').slice(-1)[0]}`;
      adapterFunctions.set(name, (adapterFunctions.get(name) ?? 0) + ms);
    }
  });
  return parts;
}

async function stopProfiler(profiler: Session): Promise<Map<string, number>> {
  const { profile } = await profiler.post('Profiler.stop');
  profiler.disconnect();
  return selfTimeByPart(profile as CpuProfile);
}

async function throughDiscord(): Promise<RunFigures & { webhookSends: number }> {
  const child = fork(fileURLToPath(new URL('./support/fakeDiscordChild.ts', import.meta.url)), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, BENCH_CHANNELS: String(CHANNELS) },
  });
  const ready = await new Promise<{ restApi: string; token: string; channels: string[] }>((resolve) =>
    child.once('message', (m) => resolve(m as { restApi: string; token: string; channels: string[] })),
  );
  const logger = silentLogger();
  const heapBefore = settledHeap();
  // discord.js keeps a bot to Discord's 50 requests/s; the fake has no such limit, and the cap
  // would measure waiting, not work. Given when the client is made, so the transport's webhook
  // client has it too; the run checks that no request waited on it.
  const client = createDiscordClient({ apiUrl: ready.restApi, globalRequestsPerSecond: LIFTED_RATE });
  const transport = new DiscordTransport({ client, logger });
  watchLimiter(client.rest, 'the client');
  // Bench-only introspection: the webhook client is private to the transport.
  watchLimiter((transport as unknown as { webhookRest: REST }).webhookRest, "the transport's webhook client");
  const store = createMemoryStore();
  const runtime = createRuntime({
    avatars: avatarsFor('discord', ready.channels),
    transports: [transport],
    store,
    logger,
    config: { summonProactiveEnabled: false },
  });
  let inbound = 0;
  const arrived = new Subject<void>();
  // Count what reaches the runtime: a round is done when all of it arrived and the runtime is idle.
  const counted: Runtime = {
    ...runtime,
    connect: (events$) =>
      runtime.connect(
        events$.pipe(
          tap(() => {
            inbound += 1;
            arrived.next();
          }),
        ),
      ),
  };
  let answers = 0;
  runtime.outcomes$.pipe(filter((o) => o.sent)).subscribe(() => {
    answers += 1;
  });
  const bot = await startDiscordBot({
    token: ready.token,
    client,
    transport,
    runtime: counted,
    avatars: runtime.avatars,
    store,
    registerCommands: false,
    logger,
  });
  // Warm-up round (webhooks created, caches and JIT warm), not measured.
  await round(child, -1, ready.channels.length, () => inbound);
  await runtime.whenIdle();
  inbound = 0;
  answers = 0;
  const profiler = new Session();
  profiler.connect();
  await profiler.post('Profiler.enable');
  await profiler.post('Profiler.setSamplingInterval', { interval: 200 });
  await profiler.post('Profiler.start');
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let r = 0; r < ROUNDS; r += 1) {
    const target = (r + 1) * ready.channels.length;
    await round(child, r, ready.channels.length, () => inbound, target);
    await runtime.whenIdle();
  }
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  // Read in a function of its own: the profile (megabytes) must not stay reachable while the heap is measured.
  breakdown = await stopProfiler(profiler);
  const stats = await ask(child, { type: 'stats' }, 'stats');
  // What stays reachable with the bot connected and every channel's state in memory, then what
  // is left once discord.js's message and user caches are emptied, then the adapter's maps.
  const heapAfter = settledHeap();
  if (args['heap-snapshot']) writeHeapSnapshot(args['heap-snapshot']);
  let cachedMessages = 0;
  for (const channel of client.channels.cache.values())
    if ('messages' in channel) {
      cachedMessages += channel.messages.cache.size;
      channel.messages.cache.clear();
    }
  const cachedUsers = client.users.cache.size;
  client.users.cache.sweep((user) => user.id !== client.user?.id);
  const heapWithoutDiscordJs = settledHeap();
  const remembered = transport.memory.size;
  const adapterEntries = clearAdapterMaps(transport);
  const heapWithoutAdapter = settledHeap();
  // discord.js's REST keeps a handler and a bucket hash per route (a webhook's is per channel).
  const webhookRest = (transport as unknown as { webhookRest: REST }).webhookRest;
  let routes = 0;
  for (const rest of [client.rest, webhookRest]) {
    routes += rest.handlers.size;
    rest.handlers.clear();
    rest.hashes.clear();
  }
  const heapWithoutRoutes = settledHeap();
  bot.stopListening();
  const parts = await runtimeParts(runtime, store, heapWithoutRoutes, ready.channels.length);
  const heapWithoutRuntime = settledHeap();
  const perChannel = (bytes: number) => bytes / ready.channels.length;
  retained = {
    runtime: parts,
    bytesPerChannel: perChannel(heapAfter - heapBefore),
    discordJsCachesPerChannel: perChannel(heapAfter - heapWithoutDiscordJs),
    adapterMapsPerChannel: perChannel(heapWithoutDiscordJs - heapWithoutAdapter),
    routesPerChannel: perChannel(heapWithoutAdapter - heapWithoutRoutes),
    restPerChannel: perChannel(heapWithoutRuntime - heapBefore),
    routes,
    cachedMessages,
    cachedUsers,
    remembered,
    adapterEntries,
  };
  await bot.close();
  child.send({ type: 'close' });
  return {
    messages: inbound,
    answers,
    wallMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
    webhookSends: Number(stats.executions),
  };

  async function round(c: ChildProcess, r: number, n: number, seen: () => number, target = n): Promise<void> {
    const text = Array.from({ length: n }, (_, i) => textOf(r, i));
    const done = new Promise<void>((resolve) => {
      if (seen() >= target) resolve();
      const sub = arrived.subscribe(() => {
        if (seen() >= target) {
          sub.unsubscribe();
          resolve();
        }
      });
    });
    await ask(c, { type: 'round', text }, 'posted');
    await done;
  }
}

/** Heap the runtime alone keeps per channel after the same traffic, and by part. */
let aloneRetainedPerChannel = Number.NaN;
let aloneParts = noParts();

async function runtimeAlone(): Promise<RunFigures> {
  const heapBefore = settledHeap();
  const channels = Array.from({ length: CHANNELS }, (_, i) => `room-${i + 1}`);
  const transport = new NullTransport('bench');
  // The same store as through Discord, so the difference is Discord's part.
  const store = createMemoryStore();
  const runtime = createRuntime({
    avatars: avatarsFor('bench', channels),
    transports: [transport],
    store,
    logger: silentLogger(),
    config: { summonProactiveEnabled: false },
  });
  let answers = 0;
  runtime.outcomes$.pipe(filter((o) => o.sent)).subscribe(() => {
    answers += 1;
  });
  let id = 0;
  const sendRound = (r: number) =>
    channels.forEach((c, i) => {
      id += 1;
      runtime.send({
        type: 'channel.message',
        channel: { kind: 'bench', id: c },
        messageId: `m${id}`,
        author: { kind: 'human', id: '300000000000000001', name: 'Ada' },
        text: textOf(r, i),
      });
    });
  sendRound(-1);
  await runtime.whenIdle();
  answers = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let r = 0; r < ROUNDS; r += 1) {
    sendRound(r);
    await runtime.whenIdle();
  }
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const heapAfter = settledHeap();
  aloneRetainedPerChannel = (heapAfter - heapBefore) / CHANNELS;
  aloneParts = await runtimeParts(runtime, store, heapAfter, CHANNELS);
  return { messages: ROUNDS * CHANNELS, answers, wallMs, cpuMs: (cpu.user + cpu.system) / 1000 };
}

const kb = (bytes: number) => (Number.isNaN(bytes) ? 'n/a' : `${(bytes / 1024).toFixed(0).padStart(4)} KB`);

const partRow = (name: string, discordBytes: number, aloneBytes?: number) =>
  `    ${name.padEnd(36)} ${kb(discordBytes).padStart(7)} ${aloneBytes === undefined ? '' : kb(aloneBytes).padStart(7)}`;

const alone = await runtimeAlone();
const discord = await throughDiscord();
const perMessage = (f: RunFigures) => (f.cpuMs * 1000) / f.messages;
const share = perMessage(discord) / perMessage(alone) - 1;
const row = (name: string, f: RunFigures) =>
  `${name.padEnd(34)} ${String(f.messages).padStart(7)} ${String(f.answers).padStart(7)} ${(f.messages / (f.wallMs / 1000)).toFixed(0).padStart(9)} ${perMessage(f).toFixed(0).padStart(11)}`;
process.stdout.write(
  [
    `bench:discord — ${CHANNELS} channels × ${ROUNDS} rounds, two resident avatars, offline scripted model, node ${process.version}`,
    '',
    `${'run'.padEnd(34)} ${'msgs'.padStart(7)} ${'answers'.padStart(7)} ${'msgs/s'.padStart(9)} ${'CPU µs/msg'.padStart(11)}`,
    row('runtime alone (null transport)', alone),
    row('through Discord (fake, gateway+REST)', discord),
    '',
    `webhook executions seen by the fake: ${discord.webhookSends - CHANNELS} measured (+${CHANNELS} warm-up)`,
    `retained after the run, bot connected: ${Number.isNaN(retained.bytesPerChannel) ? 'n/a (run with --expose-gc)' : `${kb(retained.bytesPerChannel)} per channel`} (target ≤ 150 KB); the runtime alone keeps ${kb(aloneRetainedPerChannel)} per channel on the same traffic`,
    `${'  per channel, by part'.padEnd(40)} ${'Discord'.padStart(7)} ${'alone'.padStart(7)}`,
    partRow("store history (the prompt's window)", retained.runtime.history, aloneParts.history),
    partRow('store settled outbox entries', retained.runtime.outbox, aloneParts.outbox),
    partRow('channel actors (floor, ids), routing', retained.runtime.actors, aloneParts.actors),
    partRow(
      `discord.js caches (${retained.cachedMessages} msgs, ${retained.cachedUsers} users)`,
      retained.discordJsCachesPerChannel,
    ),
    partRow(`adapter maps (${retained.adapterEntries} entries)`, retained.adapterMapsPerChannel),
    partRow(`REST route handlers (${retained.routes})`, retained.routesPerChannel),
    partRow('the rest (discord.js channels, guild; code)', retained.restPerChannel),
    `  the Discord path beyond the runtime alone: ${kb(retained.bytesPerChannel - aloneRetainedPerChannel)} per channel`,
    `the Discord path's extra CPU per message over the runtime alone (discord.js, HTTP, WebSocket and Troupe's adapter): +${(share * 100).toFixed(0)}%`,
    `at Discord's 50 requests/s per bot (discord.js's default limiter, lifted here for the fake) one answer per message caps a process at about 50 msgs/s; requests that waited on the limiter here: ${globalWaits}`,
    '',
    'where the CPU went through Discord (sampled self time; µs per message, share of busy time):',
    ...(() => {
      const busy = [...breakdown].filter(([k]) => k !== '(idle / program)').reduce((a, [, v]) => a + v, 0);
      return [...breakdown]
        .filter(([k]) => k !== '(idle / program)')
        .sort((a, b) => b[1] - a[1])
        .map(
          ([k, ms]) =>
            `  ${k.padEnd(46)} ${((ms * 1000) / discord.messages).toFixed(0).padStart(6)} µs  ${((ms / busy) * 100).toFixed(1).padStart(5)}%`,
        );
    })(),
    (() => {
      const adapter = breakdown.get("Troupe's Discord adapter") ?? 0;
      const core = breakdown.get('the runtime (Troupe core, xstate, rxjs, zod)') ?? 0;
      return `Troupe's own adapter code adds ${((adapter / core) * 100).toFixed(1)}% to the runtime's CPU per message (${((adapter * 1000) / discord.messages).toFixed(0)} µs over ${((core * 1000) / discord.messages).toFixed(0)} µs); target ≤ 30%`;
    })(),
    '',
    ...(args.functions
      ? [...adapterFunctions]
          .sort((a, b) => b[1] - a[1])
          .slice(0, 25)
          .map(([k, ms]) => `  ${((ms * 1000) / discord.messages).toFixed(1).padStart(7)} µs  ${k}`)
      : []),
  ].join('\n'),
);
// The premise: the run measures work, not discord.js's limiter. A wait on it, or throughput at its
// rate with enough messages to reach it, means the figures above measure a sleep.
const throughput = discord.messages / (discord.wallMs / 1000);
if (globalWaits > 0 || (discord.messages >= 4 * LIMITER_RATE && throughput <= 1.2 * LIMITER_RATE)) {
  process.stderr.write(
    `\nbench:discord: the run measured discord.js's global rate limiter, not the adapter: ${globalWaits} request(s) waited on it, ${throughput.toFixed(0)} msgs/s against its ${LIMITER_RATE}/s. The limiter must be lifted when the client is made (createDiscordClient's globalRequestsPerSecond) so every REST client of the adapter has it.\n`,
  );
  process.exitCode = 1;
}
printSummary('discord', [
  {
    name: `through Discord (fake), ${CHANNELS} channels x ${ROUNDS} rounds`,
    value: discord.messages / (discord.wallMs / 1000),
    unit: 'msgs/s',
  },
  {
    name: 'CPU per message through Discord',
    value: perMessage(discord),
    unit: 'µs',
    ratio: perMessage(discord) / perMessage(alone),
    reference: 'the runtime alone',
  },
  { name: 'retained per channel, bot connected', value: retained.bytesPerChannel, unit: 'B' },
]);
