/**
 * Soak: the whole runtime (memory store, offline model) on a simulated clock for many simulated
 * hours of chat in many channels, with people coming and going. Every simulated hour it prints the
 * heap after a full GC; at the end, the slope in bytes per message between hour `--from` and the
 * end (least squares), which should be about 0 once every bounded structure is full.
 *
 *   npm run soak                                  # 96 simulated hours, 300 channels
 *   npm run soak -- --hours 100 --channels 900 --rate 0.25 --max-seconds 900
 *   npm run soak -- --quick                       # 3 simulated hours, 30 channels (seconds)
 *
 * Node flags (package.json): --expose-gc for the heap figures.
 */
import { performance } from 'node:perf_hooks';
import { createTestRuntime } from '../src/testing/index.js';
import { intArg } from './support/args.js';
import { printSummary } from './support/summary.js';

const HELP = `Usage: npm run soak -- [options]
  --hours N         simulated hours (default 96)
  --from N          first hour of the slope (default 76: after three days, when the memory store
                    keeps as many usage buckets as it ever will; half the hours if fewer)
  --channels N      channels (default 300)
  --rate X          chance per channel per simulated minute of a person's message (default 0.2)
  --people N        distinct people who come and go (default 20000)
  --max-seconds N   stop early after this much wall time (default 600)
  --seed N          traffic seed (default 7)
  --quick           3 simulated hours, 30 channels, 500 people (seconds; the slope is then noise)
Environment: SOAK_DIAG=1 also prints the size of each stored collection every hour.`;

const argv = process.argv.slice(2);
if (argv.includes('--help')) {
  process.stdout.write(`${HELP}\n`);
  process.exit(0);
}
const floatArg = (name: string, fallback: number): number => {
  const i = argv.indexOf(name);
  if (i < 0) return fallback;
  const value = Number(argv[i + 1]);
  if (!Number.isFinite(value) || value < 0 || value > 1) {
    process.stderr.write(`${name} must be a number from 0 to 1\n`);
    process.exit(2);
  }
  return value;
};
const arg = (name: string) => {
  const i = argv.indexOf(`--${name}`);
  return i < 0 ? undefined : argv[i + 1];
};
const quick = argv.includes('--quick');
const hours = intArg(arg('hours'), quick ? 3 : 96, 'hours');
const from = intArg(arg('from'), hours > 76 ? 76 : Math.floor(hours / 2), 'from', 0);
const channels = intArg(arg('channels'), quick ? 30 : 300, 'channels');
const people = intArg(arg('people'), quick ? 500 : 20_000, 'people');
const maxSeconds = intArg(arg('max-seconds'), 600, 'max-seconds');
const rate = floatArg('--rate', 0.2);
let seed = intArg(arg('seed'), 7, 'seed') >>> 0 || 1;

/** xorshift32: the same traffic every run. */
function random(): number {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) / 4_294_967_296;
}
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) {
  process.stderr.write('run with node --expose-gc (npm run soak does)\n');
  process.exit(2);
}
const heapAfterGc = (): number => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

const residents = ['nova', 'milo'];
const visitors = ['rex', 'ivy'];
const channelRefs = Array.from({ length: channels }, (_, i) => ({ kind: 'test', id: `c${i}` }));
// Nova and Milo live in every channel; Rex and Ivy are summoned and dismissed now and then.
const everywhere = channelRefs.map((c) => `${c.kind}:${c.id}`);
const t = createTestRuntime({
  retain: 0,
  avatars: [
    { id: 'nova', name: 'Nova', topics: ['comets', 'stars'], residentIn: everywhere },
    { id: 'milo', name: 'Milo', topics: ['coffee', 'espresso'], residentIn: everywhere },
    { id: 'rex', name: 'Rex', topics: ['bread', 'baking'] },
    { id: 'ivy', name: 'Ivy', topics: ['plants', 'gardens'] },
  ],
});
let humanMessages = 0;
let delivered = 0;
t.runtime.outcomes$.subscribe((o) => {
  if (o.sent) delivered++;
});
let seq = 0;
const texts = [
  (name: string) => `${name}, what do you think about comets?`,
  (name: string) => `${name}, any espresso tips today?`,
  () => 'anyone here know about sourdough baking?',
  () => 'lovely weather for the gardens',
  () => 'thanks, that helps a lot',
  (name: string) => `${name}, goodbye for now`,
];
const names: Record<string, string> = { nova: 'Nova', milo: 'Milo', rex: 'Rex', ivy: 'Ivy' };

function minuteOfTraffic(): void {
  for (const channel of channelRefs) {
    if (random() >= rate) continue;
    const person = Math.floor(random() * people);
    const by = { id: `p${person}`, name: `Person ${person}` };
    const roll = random();
    if (roll < 0.03) {
      t.runtime.send({
        type: 'avatar.summon',
        channel,
        avatarId: pick(visitors),
        by,
        messageId: `s${++seq}`,
      });
      continue;
    }
    if (roll < 0.05) {
      t.runtime.send({ type: 'avatar.dismiss', channel, avatarId: pick(visitors) });
      continue;
    }
    const target = names[pick([...residents, ...visitors])] as string;
    t.runtime.send({
      type: 'channel.message',
      channel,
      messageId: `m${++seq}`,
      author: { kind: 'human', ...by },
      text: pick(texts)(target),
    });
    humanMessages++;
  }
}

const samples: { hour: number; messages: number; heap: number }[] = [];
const started = performance.now();
const mb = (bytes: number) => (bytes / 1_048_576).toFixed(1);
process.stdout.write(
  `soak: ${channels} channels, ${hours} simulated hours, ${rate} messages per channel-minute, ${people} people, memory store\n`,
);
process.stdout.write('hour  messages (human + avatar)   heap after GC   wall s\n');
samples.push({ hour: 0, messages: 0, heap: heapAfterGc() });
let hour = 0;
for (; hour < hours; hour++) {
  for (let minute = 0; minute < 60; minute++) {
    minuteOfTraffic();
    await t.advance(60_000);
  }
  const messages = humanMessages + delivered;
  if (process.env.SOAK_DIAG) {
    const sizes: string[] = [];
    for (const collection of ['channels', 'relationships', 'channel-leases', 'quarantine']) {
      const docs = await t.store.documents.list(collection, { limit: 100_000 });
      sizes.push(`${collection} ${docs.length} docs ${JSON.stringify(docs.map((d) => d.value)).length} B`);
    }
    process.stdout.write(`      ${sizes.join(', ')}\n`);
  }
  const heap = heapAfterGc();
  samples.push({ hour: hour + 1, messages, heap });
  const wall = (performance.now() - started) / 1000;
  process.stdout.write(
    `${`${String(hour + 1).padStart(4)}  ${String(messages).padStart(8)} (${humanMessages} + ${delivered})`.padEnd(
      36,
    )}${mb(heap).padStart(8)} MB   ${wall.toFixed(0).padStart(6)}\n`,
  );
  if (wall > maxSeconds) {
    process.stdout.write(`stopping: past --max-seconds ${maxSeconds}\n`);
    hour++;
    break;
  }
}
await t.stop();

/** Least-squares slope of heap over messages. */
function slope(points: readonly { messages: number; heap: number }[]): number {
  const n = points.length;
  const mx = points.reduce((s, p) => s + p.messages, 0) / n;
  const my = points.reduce((s, p) => s + p.heap, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.messages - mx) * (p.heap - my);
    den += (p.messages - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}
const tail = samples.filter((s) => s.hour >= from);
const last = samples.at(-1);
if (tail.length < 3 || !last) {
  process.stdout.write(`too few hours after hour ${from} for a slope (ran ${hour})\n`);
  process.exit(1);
}
const perMessage = slope(tail);
const target = 1;
process.stdout.write(
  `\nheap ${mb(samples[0]?.heap ?? 0)} MB at the start, ${mb(tail[0]?.heap ?? 0)} MB at hour ${from}, ${mb(last.heap)} MB at hour ${last.hour}\n` +
    `slope from hour ${from} to ${last.hour}: ${perMessage.toFixed(3)} bytes per message over ${last.messages - (tail[0]?.messages ?? 0)} messages` +
    (quick
      ? ' (quick run: too short for the slope to mean anything)\n'
      : ` (target <= ${target}) ${perMessage <= target ? '✓' : '✗'}\n`),
);
const wallSeconds = (performance.now() - started) / 1000;
printSummary('soak', [
  { name: `heap slope from hour ${from} to ${last.hour}`, value: perMessage, unit: 'B/message' },
  {
    name: `messages in ${last.hour} simulated hours, ${channels} channels`,
    value: last.messages,
    unit: 'messages',
  },
  { name: 'wall time per simulated hour', value: wallSeconds / last.hour, unit: 's' },
]);
