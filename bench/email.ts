/**
 * Email benchmark: seed 002's flow through Troupe's email assistant — triage, the notify
 * interrupt, the response agent's draft, its review, the send, the memory updates — on synthetic
 * emails with an instant mock model and the same answers a person gives every time (a notify:
 * every other one ignored, the rest answered with feedback; drafts accepted). Runs on the memory
 * store and on a durable SQLite store, and prints emails/s, µs per email and the heap retained per
 * finished email: over the whole run (as the peer scripts measure it, fixed costs such as compiled
 * code included) and over the second half of the emails (what each email keeps).
 *
 * With `--peer <dir>` (a folder holding `langgraph.mjs` and `xstate-bare.mjs` that take an email
 * count and print one JSON line, with their dependencies installed), runs them in the same
 * invocation on the same email mix and prints the ratios.
 *
 *   npm run bench:email                       # 2,000 emails
 *   npm run bench:email -- --emails 5000 --peer <dir>
 *   npm run bench:email -- --peer <dir> --rounds 3   # each round runs all; median of the ratios
 *   npm run bench:email -- --soak 100000     # that many emails through triage on SQLite, heap sampled
 *   npm run bench:email -- --quick           # 200 emails (seconds)
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { SimulatedClock } from '../src/actors/clock.js';
import { EmailAssistant } from '../src/actors/email/emailAssistant.js';
import { createMemoryStore } from '../src/adapters/store/memory/memoryStore.js';
import { openSqliteStore } from '../src/adapters/store/sqlite/sqliteStore.js';
import type { AgentModel } from '../src/ports/agentModel.js';
import type { Calendar, Mailbox } from '../src/ports/mailbox.js';
import type { ObjectModel } from '../src/ports/objectModel.js';
import type { TroupeStore } from '../src/ports/store.js';
import { intArg } from './support/args.js';
import { keep, settledHeap } from './support/heap.js';
import { printSummary } from './support/summary.js';

const { values: args } = parseArgs({
  options: {
    emails: { type: 'string' },
    peer: { type: 'string' },
    soak: { type: 'string' },
    rounds: { type: 'string' },
    quick: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});
if (args.help) {
  process.stdout.write(
    'Usage: npm run bench:email -- [--emails N (2000; --quick: 200)] [--peer <dir>] [--rounds K (1)] [--soak N] [--quick]\n',
  );
  process.exit(0);
}
const N = intArg(args.emails, args.quick ? 200 : 2_000, 'emails');

/**
 * A string in one piece. `repeat` and template literals make trees of parts, which V8 joins into
 * a new string the first time the text is read (here: once the email is processed); the inputs
 * are made whole before the heap is first measured, so what they take is not counted as what the
 * assistant keeps (about 0.24 KB per email otherwise).
 */
const whole = (text: string): string => JSON.parse(JSON.stringify(text)) as string;

/** The peer's email mix: 8 respond : 6 notify : 2 ignore, the class in the subject. */
const kinds = ['respond', 'notify', 'respond', 'notify', 'respond', 'ignore', 'respond', 'notify'];
const mix = [...kinds, 'respond', 'notify', 'respond', 'notify', 'respond', 'ignore', 'respond', 'notify'];
function makeEmails(n: number) {
  return Array.from({ length: n }, (_, i) => ({
    id: whole(`m${i}`),
    from: whole(`sender${i % 50}@example.com`),
    to: 'me@example.com',
    subject: whole(`${mix[i % mix.length]}: subject ${i}`),
    body: whole(`Body of email ${i}. `.repeat(20)),
  }));
}

let notes = 0;
/**
 * The profile with one more learned line at its end, as the update prompt asks of a model
 * (targeted additions; nothing dropped). The assistant keeps it under its size limit by compacting
 * it (a version of its own) when it nears the limit, as it would a real model's profile.
 */
function notedProfile(profile: string): string {
  notes += 1;
  return `${profile}\n- noted ${notes}`;
}

/** The instant mock model: triage from the subject, memory as profile + note. */
const mockModel: ObjectModel = {
  id: 'mock:instant',
  async generateObject(request) {
    const content = request.prompt.messages[0]?.content ?? '';
    if (request.schemaName === 'triage_decision') {
      const kind = /## Email: (\w+):/u.exec(content)?.[1] ?? 'notify';
      return request.schema.parse({ reasoning: 'from the subject', classification: kind });
    }
    const profile = /<profile>\n([\s\S]*?)\n<\/profile>/u.exec(content)?.[1] ?? '';
    return request.schema.parse({ user_preferences: notedProfile(profile), summary: 'noted' });
  },
};

/** The instant mock agent: a draft, then done once a call was carried out (its result is in the history). */
const mockAgentModel: AgentModel = {
  id: 'mock:instant',
  async nextToolCall(request) {
    if (request.messages.some((m) => m.role === 'tool'))
      return { toolCallId: 'done', toolName: 'Done', input: { done: true } };
    const first = request.messages[0]?.content;
    const content = typeof first === 'string' ? first : '';
    const from = /\*\*From\*\*: (\S+)/u.exec(content)?.[1] ?? 'someone@example.com';
    const subject = /## Email: (.*)/u.exec(content)?.[1] ?? '';
    return {
      toolCallId: 'draft',
      toolName: 'send_email_tool',
      input: { to: from, subject: `Re: ${subject}`, content: 'Thanks, will do.' },
    };
  },
};

/**
 * The mailbox and calendar answer at once and keep nothing, as the peer's send node does (it sets
 * `sent: true`): what is measured is the orchestration, not a mail server. (The local mailbox,
 * which stands in for Gmail in `troupe email`, writes each reply and label to the store.)
 */
const instantMailbox: Mailbox = {
  id: 'bench',
  sendReply: async (_reply, key) => ({ messageId: `<${key}@bench.invalid>` }),
  close: async () => {},
};
const instantCalendar: Calendar = {
  availability: async (day, timeZone) => ({
    day,
    time_zone: timeZone,
    free: [{ start: '09:00', end: '17:00' }],
  }),
  invite: async (_meeting, key) => ({ eventId: key }),
};

interface Figures {
  impl: string;
  emails: number;
  ms: number;
  emails_per_s: number;
  us_per_email: number;
  heap_kb_per_email_retained: number;
  /** Heap kept by the second half of the emails, per email (fixed costs such as compiled code left out). */
  heap_kb_per_email_second_half?: number;
}

async function runTroupe(name: string, store: TroupeStore): Promise<Figures> {
  const clock = new SimulatedClock(Date.parse('2026-11-25T09:00:00Z'));
  const assistant = new EmailAssistant({
    store,
    mailbox: instantMailbox,
    calendar: instantCalendar,
    clock,
    model: mockModel,
    agentModel: mockAgentModel,
    userName: 'Sam',
    timeZone: 'UTC',
  });
  const emails = makeEmails(N);
  const heap0 = settledHeap();
  let heapHalf = Number.NaN;
  let pausedMs = 0;
  const t0 = performance.now();
  for (const [index, email] of emails.entries()) {
    if (index === N >> 1) {
      const p0 = performance.now();
      heapHalf = settledHeap();
      pausedMs += performance.now() - p0;
    }
    // As a caller does: each call returns the email's record, naming the interrupt it waits on.
    let record = await assistant.receive(email);
    while (!(record instanceof Error) && record.interruptId) {
      const answer =
        record.state.value === 'notifying'
          ? Number(email.id.slice(1)) % 2
            ? { type: 'ignore' }
            : { type: 'response', args: 'please reply' }
          : { type: 'accept' };
      ({ record } = await assistant.answer(record.interruptId, answer));
    }
  }
  const ms = performance.now() - t0 - pausedMs;
  const heap1 = settledHeap();
  // The input emails were made before the first measurement: kept reachable up to the last, or
  // V8 frees them before it (nothing uses them after the loop) and their ~650 bytes each would
  // be subtracted from what the assistant keeps.
  keep(emails);
  return {
    impl: name,
    emails: N,
    ms: Math.round(ms),
    emails_per_s: Math.round(N / (ms / 1000)),
    us_per_email: Math.round((ms * 1000) / N),
    heap_kb_per_email_retained: Math.round(((heap1 - heap0) / 1024 / N) * 10) / 10,
    heap_kb_per_email_second_half: Math.round(((heap1 - heapHalf) / 1024 / (N - (N >> 1))) * 10) / 10,
  };
}

function runPeer(dir: string, script: string): Figures | undefined {
  try {
    const out = execFileSync(process.execPath, ['--expose-gc', join(dir, script), String(N)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const line = out.trim().split('\n').at(-1) ?? '';
    const parsed = JSON.parse(line) as Figures;
    return { ...parsed, impl: parsed.impl ?? script };
  } catch {
    return undefined;
  }
}

if (args.soak !== undefined) {
  await soak(intArg(args.soak, 100_000, 'soak'));
  process.exit(0);
}
const ROUNDS = intArg(args.rounds, 1, 'rounds');
/** The median of a non-empty list. */
const medianOf = (list: readonly number[]) => {
  const sorted = [...list].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};
const row = (f: Figures) =>
  `${f.impl.padEnd(40)} ${String(f.emails).padStart(7)} ${String(f.emails_per_s).padStart(9)} ${String(f.us_per_email).padStart(9)} ${String(f.heap_kb_per_email_retained ?? '—').padStart(10)} ${String(f.heap_kb_per_email_second_half ?? '—').padStart(12)}`;
const lines = [
  `bench:email — ${N} emails (8 respond : 6 notify : 2 ignore), instant mock model, mailbox and calendar, the same answers; node ${process.version}`,
];
/** Per Troupe run, its ratio to LangGraph.js in each round (taken within the round). */
const ratios = new Map<string, number[]>();
/** Per Troupe run, its µs per email in each round. */
const usPerEmail = new Map<string, number[]>();
for (let round = 1; round <= ROUNDS; round++) {
  const results: Figures[] = [];
  results.push(await runTroupe('troupe (memory store)', createMemoryStore()));
  const dir = mkdtempSync(join(tmpdir(), 'troupe-bench-email-'));
  try {
    const sqlite = await openSqliteStore({ path: join(dir, 'bench.db') });
    results.push(await runTroupe('troupe (SQLite, durable)', sqlite));
    await sqlite.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const peers: Figures[] = [];
  if (args.peer) {
    for (const script of ['langgraph.mjs', 'xstate-bare.mjs']) {
      const figures = runPeer(args.peer, script);
      if (figures) peers.push(figures);
      else process.stdout.write(`peer ${script} did not run (npm ci in ${args.peer}?)\n`);
    }
  }
  lines.push(
    '',
    ...(ROUNDS > 1 ? [`round ${round} of ${ROUNDS}`] : []),
    `${'run'.padEnd(40)} ${'emails'.padStart(7)} ${'emails/s'.padStart(9)} ${'µs/email'.padStart(9)} ${'KB/email'.padStart(10)} ${'2nd half KB'.padStart(12)}`,
    ...[...results, ...peers].map(row),
  );
  for (const r of results) usPerEmail.set(r.impl, [...(usPerEmail.get(r.impl) ?? []), r.us_per_email]);
  const langgraph = peers.find((p) => p.impl.includes('langgraph'));
  if (langgraph) {
    lines.push('');
    for (const r of results) {
      const ratio = langgraph.us_per_email / r.us_per_email;
      ratios.set(r.impl, [...(ratios.get(r.impl) ?? []), ratio]);
      lines.push(`${r.impl}: ${ratio.toFixed(1)}x less orchestration per email than LangGraph.js`);
    }
  }
}
if (ROUNDS > 1 && ratios.size > 0) {
  lines.push('', `over ${ROUNDS} rounds (ratios taken within each round):`);
  for (const [impl, list] of ratios) {
    const sorted = [...list].sort((a, b) => a - b);
    const median = medianOf(list);
    lines.push(
      `${impl}: median ${median.toFixed(1)}x, lowest ${(sorted[0] as number).toFixed(1)}x, highest ${(sorted.at(-1) as number).toFixed(1)}x`,
    );
  }
}
process.stdout.write(`${lines.join('\n')}\n`);
printSummary(
  'email',
  [...usPerEmail].map(([impl, list]) => ({
    name: `${impl}, ${N} emails${ROUNDS > 1 ? ` (median of ${ROUNDS} rounds)` : ''}`,
    value: medianOf(list),
    unit: 'µs/email',
    ...(ratios.has(impl)
      ? { ratio: medianOf(ratios.get(impl) ?? []), reference: 'LangGraph.js µs/email over ours' }
      : {}),
  })),
);

/**
 * `--soak N`: N emails through triage on a durable SQLite store (what waits for the human waits
 * in the store, not in the heap), the heap sampled every tenth. The process should hold nothing
 * per email: the slope over the second half is what each email leaves in the heap.
 */
async function soak(n: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'troupe-bench-email-soak-'));
  try {
    const store = await openSqliteStore({ path: join(dir, 'soak.db') });
    const clock = new SimulatedClock(Date.parse('2026-11-25T09:00:00Z'));
    const assistant = new EmailAssistant({
      store,
      mailbox: instantMailbox,
      calendar: instantCalendar,
      clock,
      model: mockModel,
      agentModel: mockAgentModel,
      userName: 'Sam',
      timeZone: 'UTC',
    });
    const step = Math.max(1, Math.floor(n / 10));
    const samples: { emails: number; heapMb: number }[] = [];
    const t0 = performance.now();
    let batch = makeEmails(0);
    for (let i = 0; i < n; i++) {
      if (i % 1000 === 0) batch = makeBatch(i, Math.min(1000, n - i));
      await assistant.receive(batch[i % 1000]);
      if ((i + 1) % step === 0) samples.push({ emails: i + 1, heapMb: settledHeap() / 2 ** 20 });
    }
    const ms = performance.now() - t0;
    await store.close();
    const half = samples.slice(Math.floor(samples.length / 2));
    const [a, b] = [half[0], half.at(-1)];
    const slope =
      a && b && b.emails > a.emails ? ((b.heapMb - a.heapMb) * 2 ** 20) / (b.emails - a.emails) : 0;
    process.stdout.write(
      `${[
        `bench:email --soak — ${n} emails through triage on SQLite (durable), instant mock model, mailbox and calendar; node ${process.version}`,
        `${Math.round(n / (ms / 1000))} emails/s, ${Math.round((ms * 1000) / n)} µs per email`,
        `heap after each tenth (MB): ${samples.map((s) => s.heapMb.toFixed(1)).join(' ')}`,
        `heap growth over the second half: ${slope.toFixed(1)} bytes per email`,
      ].join('\n')}\n`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `count` emails of the mix from number `from` on (made a thousand at a time, not all at once). */
function makeBatch(from: number, count: number) {
  return Array.from({ length: count }, (_, j) => {
    const i = from + j;
    return {
      id: `m${i}`,
      from: `sender${i % 50}@example.com`,
      to: 'me@example.com',
      subject: `${mix[i % mix.length]}: subject ${i}`,
      body: `Body of email ${i}. `.repeat(20),
    };
  });
}
