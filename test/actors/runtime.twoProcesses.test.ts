import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeMongoServer, startFakeMongoServer } from '../support/fakeMongoServer.js';

const CHILD = fileURLToPath(new URL('../support/twoWriterChild.ts', import.meta.url));
const PER_PROCESS = 40;
const PER_PROCESS_KILLED = 20;

interface Line {
  type: 'sent' | 'resent' | 'error' | 'asked' | 'answered-all' | 'done' | 'timeout';
  key?: string;
  text?: string;
  replyTo?: string;
  code?: string;
  refused?: number;
  messageId?: string;
  handedOver?: boolean;
}

function start(dir: string, name: string, count: number, mongoUri?: string) {
  const args = [CHILD, dir, name, String(count), ...(mongoUri ? [mongoUri] : [])];
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', ...args], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const state = { exited: false };
  const exit = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code) => {
      state.exited = true;
      resolve(code);
    });
  });
  return { child, exit, state };
}

const read = (dir: string, name: string): Line[] => {
  const file = join(dir, `${name}.jsonl`);
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Line);
};

/** The last lines each child wrote (what a failed run was doing when it gave up). */
const tails = (dir: string) =>
  ['a', 'b'].map((name) => `${name}: ${JSON.stringify(read(dir, name).slice(-6))}`).join('\n');

/** Waits for the child processes to get somewhere (polling their files; the processes set the pace). */
async function waitForChildren(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** The messages the replies answer, in the order they went out (A's log first: A holds the channel). */
const repliesTo = (lines: Line[]) => lines.filter((l) => l.type === 'sent').map((l) => l.replyTo ?? '?');
const indexes = (ids: string[], sender: string) =>
  ids.filter((id) => id.startsWith(`${sender}-`)).map((id) => Number(id.slice(sender.length + 1)));
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

/** Two real processes on one store: the checks are the same whatever the store. */
function describeTwoProcesses(label: string, mongoUri?: () => string) {
  describe(`two processes on ${label}`, () => {
    const dirs: string[] = [];
    const newDir = () => {
      const dir = mkdtempSync(join(tmpdir(), 'troupe-two-'));
      dirs.push(dir);
      return dir;
    };
    afterAll(() => {
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    });

    it('answer all 2 × 40 messages to one channel once each, in each sender’s order, refusing none', async () => {
      const dir = newDir();
      const uri = mongoUri?.();
      const a = start(dir, 'a', PER_PROCESS, uri);
      const b = start(dir, 'b', PER_PROCESS, uri);
      const codes = await Promise.all([a.exit, b.exit]);
      // A child that gave up says what it waited for last: show both logs' ends.
      if (codes.some((c) => c !== 0)) console.error(tails(dir));
      expect(codes).toEqual([0, 0]);
      const lines = { a: read(dir, 'a'), b: read(dir, 'b') };
      for (const name of ['a', 'b'] as const) expect(lines[name].at(-1)?.type).toBe('done');

      const sent = [...lines.a, ...lines.b].filter((l) => l.type === 'sent');
      // No idempotency key went out twice, from one process or both.
      const keys = sent.map((s) => s.key);
      expect(new Set(keys).size).toBe(keys.length);
      // Every message answered, once.
      const replies = [...repliesTo(lines.a), ...repliesTo(lines.b)];
      expect(replies.length).toBe(2 * PER_PROCESS);
      expect(new Set(replies).size).toBe(2 * PER_PROCESS);
      // Nothing refused: the process without the channel handed its messages over.
      expect([...lines.a, ...lines.b].filter((l) => l.type === 'error')).toEqual([]);
      const handedOver = [...lines.a, ...lines.b].filter((l) => l.type === 'asked' && l.handedOver);
      expect(handedOver.length).toBeGreaterThan(PER_PROCESS / 2);
      // Each sender's messages answered in the order sent (one process answered them all).
      for (const log of [lines.a, lines.b])
        for (const sender of ['a', 'b']) {
          const order = indexes(repliesTo(log), sender);
          expect(order).toEqual([...order].sort((x, y) => x - y));
        }
    });

    it('with the channel’s holder killed mid-way, the other takes the channel and answers the rest', async () => {
      const dir = newDir();
      const uri = mongoUri?.();
      const a = start(dir, 'a', PER_PROCESS_KILLED, uri);
      // A takes the channel first; B's messages are then handed over to it.
      await waitForChildren(() => a.state.exited || repliesTo(read(dir, 'a')).length > 0);
      const b = start(dir, 'b', PER_PROCESS_KILLED, uri);
      await waitForChildren(
        () => a.state.exited || b.state.exited || indexes(repliesTo(read(dir, 'a')), 'b').length >= 5,
      );
      expect([a.state.exited, b.state.exited]).toEqual([false, false]);
      a.child.kill('SIGKILL');
      await a.exit;
      writeFileSync(join(dir, 'a.killed'), '');
      expect(await b.exit).toBe(0);
      const lines = { a: read(dir, 'a'), b: read(dir, 'b') };
      expect(lines.b.at(-1)?.type).toBe('done');
      // Every message of B answered once: by A until it died, by B after it took the channel over.
      const byA = indexes(repliesTo(lines.a), 'b');
      const byB = indexes(repliesTo(lines.b), 'b');
      expect(byA.length).toBeGreaterThanOrEqual(5);
      expect(byB.length).toBeGreaterThan(0);
      expect([...byA, ...byB]).toEqual(range(PER_PROCESS_KILLED));
      // Nothing refused, no key sent twice.
      expect(lines.b.filter((l) => l.type === 'error')).toEqual([]);
      const keys = [...lines.a, ...lines.b].filter((l) => l.type === 'sent').map((l) => l.key);
      expect(new Set(keys).size).toBe(keys.length);
      // A reply A sent but had not settled when it was killed is resent by B under its own key
      // (the platform drops it), never as a new reply.
      const sentByA = lines.a.filter((l) => l.type === 'sent').map((l) => l.key);
      for (const resent of lines.b.filter((l) => l.type === 'resent')) expect(sentByA).toContain(resent.key);
    });
  });
}

describeTwoProcesses('one SQLite file');

describe('MongoDB (the fake replica set, shared over TCP)', () => {
  let server: FakeMongoServer;
  beforeAll(async () => {
    // A process killed mid-transaction holds its documents until the server reaps the transaction:
    // a short `transactionLifetimeLimitSeconds`, so the survivor waits seconds, not a minute.
    server = await startFakeMongoServer({ replicaSet: 'rs0', transactionLifetimeLimitMs: 3_000 });
  });
  afterAll(async () => {
    await server?.close();
  });
  describeTwoProcesses('one MongoDB database', () => server.uri);
});
