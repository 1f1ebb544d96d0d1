import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeMongoServer, startFakeMongoServer } from '../support/fakeMongoServer.js';

const CHILD = fileURLToPath(new URL('../support/twoWriterChild.ts', import.meta.url));
const PER_PROCESS = 40;

interface Line {
  type: 'sent' | 'error' | 'asked' | 'done';
  key?: string;
  text?: string;
  replyTo?: string;
  code?: string;
  refused?: number;
  messageId?: string;
}

function run(dir: string, name: string, mongoUri?: string): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const args = [CHILD, dir, name, String(PER_PROCESS), ...(mongoUri ? [mongoUri] : [])];
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    child.on('error', reject);
    child.on('exit', (code) => resolve(code));
  });
}

const read = (dir: string, name: string): Line[] =>
  readFileSync(join(dir, `${name}.jsonl`), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Line);

/** Two real processes on one store: the checks are the same whatever the store. */
function describeTwoProcesses(label: string, mongoUri?: () => string) {
  describe(`two processes on ${label}`, () => {
    const dir = mkdtempSync(join(tmpdir(), 'troupe-two-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('answer each message at most once, never share an idempotency key, and say what they refused', async () => {
      const uri = mongoUri?.();
      const exits = await Promise.all([run(dir, 'a', uri), run(dir, 'b', uri)]);
      expect(exits).toEqual([0, 0]);
      const lines = { a: read(dir, 'a'), b: read(dir, 'b') };
      for (const name of ['a', 'b'] as const) expect(lines[name].at(-1)?.type).toBe('done');

      const sent = [...lines.a, ...lines.b].filter((l) => l.type === 'sent');
      // One reply per message at most (the reply is threaded to the message it answers).
      const repliesPer = new Map<string, number>();
      for (const s of sent) repliesPer.set(s.replyTo ?? '?', (repliesPer.get(s.replyTo ?? '?') ?? 0) + 1);
      expect([...repliesPer.entries()].filter(([, n]) => n > 1)).toEqual([]);
      // No idempotency key went out twice, from one process or both.
      const keys = sent.map((s) => s.key);
      expect(new Set(keys).size).toBe(keys.length);
      // Every message was either answered or refused with TROUPE_CHANNEL_OWNED, and counted.
      const refused = [...lines.a, ...lines.b]
        .filter((l) => l.type === 'error' && l.code === 'TROUPE_CHANNEL_OWNED')
        .reduce((n, l) => n + (l.refused ?? 0), 0);
      expect(sent.length + refused).toBe(2 * PER_PROCESS);
      expect(sent.length).toBeGreaterThanOrEqual(PER_PROCESS);
    });
  });
}

describeTwoProcesses('one SQLite file');

describe('MongoDB (the fake replica set, shared over TCP)', () => {
  let server: FakeMongoServer;
  beforeAll(async () => {
    server = await startFakeMongoServer({ replicaSet: 'rs0' });
  });
  afterAll(async () => {
    await server?.close();
  });
  describeTwoProcesses('one MongoDB database', () => server.uri);
});
