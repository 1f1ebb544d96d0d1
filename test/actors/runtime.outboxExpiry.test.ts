/**
 * A durable outbox does not grow for ever: the runtime's hourly sweep deletes replies settled
 * longer ago than the store keeps them, and never one that is not settled.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/adapters/store/sqlite/sqliteStore.js';
import { createTestRuntime } from '../../src/testing/index.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const rows = (path: string) => {
  const db = new Database(path, { readonly: true });
  try {
    return db
      .prepare(
        'SELECT o.key, s.id IS NOT NULL AS settled FROM outbox o LEFT JOIN outbox_settled s ON s.id = o.id',
      )
      .all() as {
      key: string;
      settled: number;
    }[];
  } finally {
    db.close();
  }
};

describe('settled replies in a SQLite outbox', () => {
  it('are deleted by the hourly sweep once older than the retention', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'troupe-outbox-expiry-'));
    dirs.push(dir);
    const path = join(dir, 'troupe.db');
    const store = await openSqliteStore({ path, outboxRetentionMs: 30 * 60_000 });
    const t = createTestRuntime({ avatars: [{ id: 'nova', name: 'Nova' }], store });
    await t.summon('nova');
    await t.say('Nova, are you there?');
    const sent = rows(path);
    expect(sent.length).toBeGreaterThanOrEqual(2);
    expect(sent.every((r) => r.settled === 1)).toBe(true);
    // The sweep runs hourly; by then every one of these was recorded more than 30 minutes ago.
    await t.advance(61 * 60_000);
    const left = rows(path).map((r) => r.key);
    for (const { key } of sent) expect(left).not.toContain(key);
    await t.stop();
  });
});
