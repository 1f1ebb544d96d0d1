import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createMemoryStore } from '../../../src/adapters/store/memory/memoryStore.js';
import {
  defaultDataDir,
  openDefaultStore,
  type StoreOpeners,
  storeKindFromEnv,
  storeSettings,
} from '../../../src/adapters/store/storeFromEnv.js';
import { shownDefault } from '../../../src/config/settings.js';
import type { TroupeStore } from '../../../src/ports/store.js';

const dir = mkdtempSync(join(tmpdir(), 'troupe-fromenv-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Openers that record what they were asked and hand back memory stores. */
function spies() {
  const fake = (kind: string) => ({ ...createMemoryStore(), kind }) as TroupeStore;
  return {
    memory: vi.fn<StoreOpeners['memory']>(() => fake('memory')),
    sqlite: vi.fn<StoreOpeners['sqlite']>(async () => fake('sqlite')),
    mongodb: vi.fn<StoreOpeners['mongodb']>(async () => fake('mongodb')),
  };
}

describe('defaultDataDir', () => {
  it('is TROUPE_DATA_DIR, else ./.troupe', () => {
    expect(defaultDataDir({})).toBe('./.troupe');
    expect(defaultDataDir({ TROUPE_DATA_DIR: '/var/lib/troupe' })).toBe('/var/lib/troupe');
    expect(defaultDataDir({ TROUPE_DATA_DIR: '  ' })).toBe('./.troupe');
  });
});

describe('openDefaultStore', () => {
  it('opens SQLite at <data dir>/troupe.db by default', async () => {
    const openers = spies();
    const store = await openDefaultStore({ TROUPE_DATA_DIR: '/data/t' }, { openers });
    expect(store.kind).toBe('sqlite');
    expect(openers.sqlite).toHaveBeenCalledWith({ path: join('/data/t', 'troupe.db') });
    expect(openers.mongodb).not.toHaveBeenCalled();
    expect(openers.memory).not.toHaveBeenCalled();
  });

  it('passes TROUPE_SQLITE_BUSY_TIMEOUT_MS to SQLite, and refuses one that is not a whole number of ms', async () => {
    const openers = spies();
    await openDefaultStore(
      { TROUPE_DATA_DIR: '/data/t', TROUPE_SQLITE_BUSY_TIMEOUT_MS: ' 250 ' },
      { openers },
    );
    expect(openers.sqlite).toHaveBeenCalledWith({ path: join('/data/t', 'troupe.db'), busyTimeoutMs: 250 });
    for (const bad of ['soon', '-1', '1.5', '600001'])
      await expect(
        openDefaultStore({ TROUPE_SQLITE_BUSY_TIMEOUT_MS: bad }, { openers: spies() }),
      ).rejects.toMatchObject({
        code: 'TROUPE_CONFIG_INVALID',
        message: expect.stringContaining(`TROUPE_SQLITE_BUSY_TIMEOUT_MS=${JSON.stringify(bad)}`),
      });
  });

  it('really opens a SQLite file under TROUPE_DATA_DIR, creating the directory', async () => {
    const dataDir = join(dir, 'fresh', 'data');
    const store = await openDefaultStore({ TROUPE_DATA_DIR: dataDir });
    expect(store.kind).toBe('sqlite');
    await store.documents.put('c', 'k', 1);
    await store.close();
    const again = await openDefaultStore({ TROUPE_DATA_DIR: dataDir });
    expect((await again.documents.get('c', 'k'))?.value).toBe(1);
    await again.close();
  });

  it('routes to MongoDB when MONGODB_URI is set, passing the database name', async () => {
    const openers = spies();
    const store = await openDefaultStore(
      {
        MONGODB_URI: 'mongodb://user:secret@db.example:27017',
        MONGODB_DATABASE: 'troupe_prod',
        TROUPE_DATA_DIR: '/x',
      },
      { openers },
    );
    expect(store.kind).toBe('mongodb');
    expect(openers.mongodb).toHaveBeenCalledWith({
      uri: 'mongodb://user:secret@db.example:27017',
      database: 'troupe_prod',
    });
    expect(openers.sqlite).not.toHaveBeenCalled();
  });

  it('selects the memory store with TROUPE_STORE=memory, even with MONGODB_URI set', async () => {
    const openers = spies();
    const store = await openDefaultStore({ TROUPE_STORE: 'Memory', MONGODB_URI: 'mongodb://h' }, { openers });
    expect(store.kind).toBe('memory');
    expect(openers.mongodb).not.toHaveBeenCalled();
    const real = await openDefaultStore({ TROUPE_STORE: 'memory' });
    expect(real.kind).toBe('memory');
    await real.close();
  });

  it('lets TROUPE_STORE=sqlite win over MONGODB_URI', async () => {
    const openers = spies();
    await openDefaultStore({ TROUPE_STORE: 'sqlite', MONGODB_URI: 'mongodb://h' }, { openers });
    expect(openers.sqlite).toHaveBeenCalledOnce();
    expect(openers.mongodb).not.toHaveBeenCalled();
  });

  it('refuses an unknown TROUPE_STORE, and mongodb without a URI, with TROUPE_CONFIG_INVALID', async () => {
    const openers = spies();
    await expect(openDefaultStore({ TROUPE_STORE: 'postgres' }, { openers })).rejects.toMatchObject({
      code: 'TROUPE_CONFIG_INVALID',
      message: expect.stringContaining('TROUPE_STORE'),
    });
    expect(() => storeKindFromEnv({ TROUPE_STORE: 'mongodb' })).toThrow(/MONGODB_URI/);
    expect(openers.sqlite).not.toHaveBeenCalled();
  });

  it('never logs the MongoDB URI', async () => {
    const lines: unknown[] = [];
    const logger = { info: (...args: unknown[]) => lines.push(args) } as never;
    await openDefaultStore({ MONGODB_URI: 'mongodb://user:hunter2@h' }, { openers: spies(), logger });
    expect(JSON.stringify(lines)).not.toContain('hunter2');
  });
});

describe('storeSettings', () => {
  it('documents every variable the store reads', () => {
    expect(Object.keys(storeSettings)).toEqual([
      'TROUPE_STORE',
      'TROUPE_DATA_DIR',
      'TROUPE_SQLITE_BUSY_TIMEOUT_MS',
      'MONGODB_URI',
      'MONGODB_DATABASE',
    ]);
    for (const setting of Object.values(storeSettings)) {
      expect(shownDefault(setting).length).toBeGreaterThan(0);
      expect(setting.doc.length).toBeGreaterThan(0);
    }
  });
});
