/**
 * On a store that keeps writes in order (SQLite), a channel's history lines ride its turn ledger:
 * they are written when the ledger is folded into a snapshot, all together, and a restart reads
 * the ones not written yet back from the ledger. Prompts see every line either way.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createScriptedModel } from '../../src/adapters/llm/scriptedModel.js';
import { openSqliteStore } from '../../src/adapters/store/sqlite/sqliteStore.js';
import type { TroupeStore } from '../../src/ports/store.js';
import { createTestRuntime, mockModel } from '../../src/testing/index.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function sqliteStore(): Promise<TroupeStore> {
  const dir = mkdtempSync(join(tmpdir(), 'troupe-history-ledger-'));
  dirs.push(dir);
  return openSqliteStore({ path: join(dir, 'troupe.db') });
}

/** The offline model's replies, every prompt kept. */
function promptedModel() {
  const scripted = createScriptedModel();
  return mockModel((request) => scripted.generateTurn(request), { local: true });
}

const avatars = [{ id: 'nova', name: 'Nova', residentIn: ['test:room'] }];
const persistence = { durable: true, leaseTtlMs: 1_000 };
const config = { summonProactiveEnabled: false };

describe('history lines that ride the turn ledger', () => {
  it('are read by prompts before they are stored, and stored once, in order, when the ledger folds', async () => {
    const store = await sqliteStore();
    const model = promptedModel();
    const t = createTestRuntime({ avatars, store, persistence, config, model });
    await t.say('Nova, what do you think of comets?', { messageId: 'm1' });
    await t.advance(60_000);
    const firstReply = t.transport.sent.at(-1)?.text ?? '';
    expect(firstReply).not.toBe('');
    // The channel's first write was a snapshot (with the message's line); the reply's line is in
    // its ledger, not stored yet.
    const early = await store.history.recent('test:room', 50);
    expect(early.map((line) => line.text)).toEqual(['Nova, what do you think of comets?']);

    model.calls.length = 0;
    await t.say('Nova, and of tides?', { messageId: 'm2' });
    await t.advance(60_000);
    const prompt = JSON.stringify(model.calls[0]?.prompt.messages ?? []);
    expect(prompt).toContain('what do you think of comets?');
    expect(prompt).toContain(firstReply);
    expect(prompt).toContain('and of tides?');

    await t.stop();
    const stored = await store.history.recent('test:room', 50);
    const texts = stored.map((line) => line.text);
    expect(texts[0]).toBe('Nova, what do you think of comets?');
    expect(texts[1]).toBe(firstReply);
    expect(texts).toContain('Nova, and of tides?');
    expect(new Set(stored.map((line) => line.messageId)).size).toBe(stored.length);
    expect(stored.every((line) => line.channelId === 'test:room')).toBe(true);
    expect(stored[1]?.author).toEqual({ kind: 'avatar', id: 'nova', name: 'Nova' });
    await store.close();
  });

  it('come back from the ledger after a crash, and are stored once', async () => {
    const store = await sqliteStore();
    const crashed = createTestRuntime({ avatars, store, persistence, config });
    await crashed.say('Nova, what do you think of comets?', { messageId: 'm1' });
    await crashed.advance(60_000);
    const said = crashed.transport.sent.map((m) => m.text);
    expect(said.length).toBeGreaterThan(0);
    // The process dies here: crashed is abandoned, its replies' lines not stored yet.
    const early = await store.history.recent('test:room', 50);
    expect(early.map((line) => line.text)).toEqual(['Nova, what do you think of comets?']);

    const model = promptedModel();
    const restarted = createTestRuntime({
      avatars,
      store,
      persistence,
      config,
      model,
      startAt: crashed.clock.now() + 2_000,
    });
    await restarted.say('Nova, and of tides?', { messageId: 'm2' });
    await restarted.advance(60_000);
    const prompt = JSON.stringify(model.calls[0]?.prompt.messages ?? []);
    expect(prompt).toContain('what do you think of comets?');
    for (const text of said) expect(prompt).toContain(text);

    await restarted.stop();
    const stored = await store.history.recent('test:room', 50);
    // Each line once (the test transport of each process numbers its messages from 1 again).
    const restartedSaid = restarted.transport.sent.map((m) => m.text);
    expect(stored.map((line) => line.text)).toEqual([
      'Nova, what do you think of comets?',
      ...said,
      'Nova, and of tides?',
      ...restartedSaid,
    ]);
    await store.close();
  });
});
