/**
 * The crash test: a runtime on a SQLite file, in a child process, is killed with SIGKILL at a
 * seeded moment while it plays a script of inbound events (sometimes killed again while it
 * recovers), then restarted and left to finish. Whatever the moment, afterwards every response
 * was delivered exactly once, no summon turn was lost or spent twice, every thread ended by its
 * deadline, and the store opens cleanly. See test/support/crashChild.ts for the child and
 * test/support/crashAnalysis.ts for the checks. `CRASH_FROM=37 CRASH_N=5 npx vitest run
 * test/actors/crash.test.ts` runs seeds 38 to 42 only; `CRASH_N=200` runs more than CI's 48.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyseCrashRun, type CrashReport } from '../support/crashAnalysis.js';
import { between, crashPersistence, hash, prng } from '../support/crashScenario.js';

const SEEDS = Array.from(
  { length: Number(process.env.CRASH_N ?? 48) },
  (_, i) => i + 1 + Number(process.env.CRASH_FROM ?? 0),
);
/** Seeds run side by side: the children mostly wait on timers, so two cores carry four. */
const CONCURRENCY = 4;
const CHILD = fileURLToPath(new URL('../support/crashChild.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** When a seed's runs are killed. */
interface KillPlan {
  /**
   * The first run (`play`) is killed this long after it was spawned (during start-up), after it
   * said it was ready, or after the platform took its n-th message (between taking a message and
   * the outbox noting it).
   */
  first:
    | { from: 'spawn'; afterMs: number }
    | { from: 'ready'; afterMs: number }
    | { from: 'delivery'; n: number; afterMs: number };
  /** The second run (`finish`) is killed too, this long after it is ready; the third finishes. */
  second?: { afterMs: number };
}

function killPlan(seed: number): KillPlan {
  const random = prng(hash(`kill:${seed}`));
  const mode = random();
  // Mostly during the script (about 2.5 s), some during start-up, some in the quiet after it.
  const first: KillPlan['first'] =
    mode < 0.1
      ? { from: 'spawn', afterMs: between(random, 150, 900) }
      : mode < 0.45
        ? { from: 'delivery', n: between(random, 1, 70), afterMs: between(random, 0, 4) }
        : { from: 'ready', afterMs: between(random, 50, 2_600) };
  const second = random() < 0.3 ? { afterMs: between(random, 20, 600) } : undefined;
  return second ? { first, second } : { first };
}

interface Child {
  process: ChildProcess;
  /** Resolves when the child says it is ready (undefined if it exits first). */
  ready: Promise<number | undefined>;
  /** Resolves when the platform took the child's n-th message (undefined if it exits first). */
  delivered(n: number): Promise<number | undefined>;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function startChild(dir: string, seed: number, phase: 'play' | 'finish', run: number): Child {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dir, String(seed), phase], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr?.pipe(createWriteStream(join(dir, `stderr.${run}.txt`)));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  let deliveries = 0;
  const waiting: { n: number; resolve: (at: number | undefined) => void }[] = [];
  let resolveReady: (at: number | undefined) => void = () => undefined;
  const ready = new Promise<number | undefined>((resolve) => {
    resolveReady = resolve;
  });
  let pending = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    pending += chunk.toString();
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      if (line === 'ready') resolveReady(Date.now());
      if (line !== 'delivered') continue;
      deliveries += 1;
      for (const w of waiting) if (w.n === deliveries) w.resolve(Date.now());
    }
  });
  void exit.then(() => {
    resolveReady(undefined);
    for (const w of waiting) w.resolve(undefined);
  });
  return {
    process: child,
    ready,
    exit,
    delivered: (n) =>
      n <= deliveries ? Promise.resolve(Date.now()) : new Promise((resolve) => waiting.push({ n, resolve })),
  };
}

// Real time on purpose: the child runs on the system clock, and the kill must land at a real moment.
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface SeedRun {
  seed: number;
  dir: string;
  plan: KillPlan;
  /** For each kill: ms after the child was ready (undefined: it never was). */
  killedAfterReadyMs: (number | undefined)[];
  exits: string[];
  /** `PRAGMA integrity_check` of the database right after each kill. */
  integrity: string[];
  elapsedMs: number;
}

/** What `PRAGMA integrity_check` says of the database a kill left behind (before anyone reopens it). */
function integrityAfterKill(dir: string): string {
  const path = join(dir, 'troupe.db');
  if (!existsSync(path)) return 'ok'; // killed before the store was created
  try {
    const db = new Database(path, { readonly: true });
    try {
      return String(db.pragma('integrity_check', { simple: true }));
    } finally {
      db.close();
    }
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** Kills a child at once; says how long after it was ready that was (undefined if never ready). */
async function kill(child: Child, readyAt: number | undefined): Promise<number | undefined> {
  const at = Date.now();
  child.process.kill('SIGKILL');
  await child.exit;
  return readyAt === undefined ? undefined : at - readyAt;
}

async function runSeed(seed: number): Promise<SeedRun> {
  const started = Date.now();
  const dir = mkdtempSync(join(tmpdir(), `troupe-crash-${seed}-`));
  const plan = killPlan(seed);
  const killedAfterReadyMs: (number | undefined)[] = [];
  const exits: string[] = [];
  const integrity: string[] = [];
  let run = 0;

  const play = startChild(dir, seed, 'play', run++);
  let readyAt: number | undefined;
  void play.ready.then((at) => {
    readyAt = at;
  });
  const first = plan.first;
  if (first.from === 'spawn') await sleep(first.afterMs);
  else if (first.from === 'ready') {
    if (await play.ready) await sleep(first.afterMs);
  } else {
    // The n-th delivery, or (a short script) a few seconds after start-up, whichever comes first.
    const fallback = play.ready.then((at) => (at === undefined ? undefined : sleep(3_000).then(() => at)));
    if (await Promise.race([play.delivered(first.n), fallback])) await sleep(first.afterMs);
  }
  killedAfterReadyMs.push(await kill(play, readyAt));
  const playExit = await play.exit;
  exits.push(`play:${playExit.signal ?? playExit.code}`);
  integrity.push(integrityAfterKill(dir));

  if (plan.second) {
    const finish = startChild(dir, seed, 'finish', run++);
    const at = await finish.ready;
    if (at !== undefined) await sleep(plan.second.afterMs);
    const done = await Promise.race([finish.exit, sleep(0).then(() => undefined)]);
    if (done) exits.push(`finish:${done.signal ?? done.code}`);
    else {
      killedAfterReadyMs.push(await kill(finish, at));
      exits.push('finish:SIGKILL');
      integrity.push(integrityAfterKill(dir));
    }
  }
  if (!exits.at(-1)?.startsWith('finish:0')) {
    // A guard against a hang, not a speed limit: on a loaded machine a child is only slower.
    const finish = startChild(dir, seed, 'finish', run++);
    const timeout = sleep(150_000).then(() => 'timeout' as const);
    const result = await Promise.race([finish.exit, timeout]);
    if (result === 'timeout') {
      finish.process.kill('SIGKILL');
      exits.push('finish:timeout');
    } else exits.push(`finish:${result.signal ?? result.code}`);
  }
  return { seed, dir, plan, killedAfterReadyMs, exits, integrity, elapsedMs: Date.now() - started };
}

/** Runs `work` for every item, `limit` at a time. */
async function pool<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: limit }, async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) await work(item);
    }),
  );
}

describe('crash test: SIGKILL at seeded moments, restart, finish', () => {
  const runs = new Map<number, { run: SeedRun; report: CrashReport } | { error: unknown }>();
  let started = 0;

  beforeAll(async () => {
    started = Date.now();
    await pool(SEEDS, CONCURRENCY, async (seed) => {
      try {
        const run = await runSeed(seed);
        runs.set(seed, { run, report: await analyseCrashRun(run.dir) });
      } catch (error) {
        runs.set(seed, { error });
      }
    });
    console.log(`crash test: ${SEEDS.length} seeds in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }, 1_200_000);

  afterAll(() => {
    // Keep the directories of failed seeds for a look; remove the others.
    for (const outcome of runs.values())
      if (
        'run' in outcome &&
        outcome.report.violations.length === 0 &&
        outcome.run.exits.at(-1) === 'finish:0'
      )
        rmSync(outcome.run.dir, { recursive: true, force: true });
  });

  it.each(SEEDS)('seed %i: exactly-once delivery, summon turns, thread deadlines, a clean store', (seed) => {
    const outcome = runs.get(seed);
    if (!outcome || 'error' in outcome) throw outcome?.error ?? new Error(`seed ${seed} did not run`);
    const { run, report } = outcome;
    const s = report.stats;
    const kills = run.killedAfterReadyMs.map((ms) =>
      ms === undefined ? 'before ready' : `${ms} ms after ready`,
    );
    const first = run.plan.first;
    const how =
      first.from === 'spawn'
        ? `${first.afterMs} ms after spawn`
        : first.from === 'delivery'
          ? `delivery ${first.n} + ${first.afterMs} ms`
          : `${first.afterMs} ms after ready`;
    console.log(
      `seed ${String(seed).padStart(2)}: flush ${crashPersistence(seed).flushIntervalMs} ms; killed ${kills.join(', then ')} (plan: ${how}); ` +
        `events before kill ${s.cursors.join('/')}; deliveries ${s.deliveries} (${s.responses} responses); ` +
        `resends ${s.resends}; unsettled at restart ${s.unsettledAtRestart.join('/')}; ` +
        `in flight at restart ${s.inFlightAtRestart.join('/')} (${s.regenerated} generated again); ` +
        `lost effects ${s.lostEffects}; ` +
        `threads ${s.threads} (${s.threadsAcrossRestart} across a restart, latest end +${s.maxThreadLatenessMs} ms); ` +
        `summons ${s.summons}, summon turns spent ${s.summonTurnsSpent}; ${(run.elapsedMs / 1000).toFixed(1)} s` +
        (report.violations.length > 0 ? `; kept ${run.dir}` : ''),
    );
    // Every run but the last was killed (none died on its own); the last finished.
    expect(run.exits, `child exits (see ${run.dir})`).toEqual([
      ...run.exits.slice(0, -1).map((e) => e.replace(/:.*/, ':SIGKILL')),
      'finish:0',
    ]);
    expect(run.integrity, 'integrity of the database right after each kill').toEqual(
      run.integrity.map(() => 'ok'),
    );
    expect(report.violations, `see ${run.dir}`).toEqual([]);
  });
});
