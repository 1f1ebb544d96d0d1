import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createEntityLookup, type EntityLookupInput } from '../../../src/adapters/sql/entityLookup.js';
import { erpConfigFromEnv, erpDatabaseFromEnv, erpSettings } from '../../../src/adapters/sql/erpFromEnv.js';
import { escapeLike, type Queryable, quoteIdent } from '../../../src/adapters/sql/sqlSupport.js';
import { ConfigError } from '../../../src/config/configError.js';
import { shownDefault } from '../../../src/config/settings.js';
import { capturingLogger } from '../../support/erpSpy.js';

const vendorColumns = [
  ['vendor_id', 'integer'],
  ['vendor_name', 'text'],
  ['city', 'text'],
  ['contact_person', 'text'],
  ['telephone_number', 'text'],
  ['email', 'text'],
  ['status', 'text'],
].map(([column_name, data_type]) => ({ table_name: 'vendors', column_name, data_type }));

const poColumns = [
  ['purchase_order_id', 'integer'],
  ['purchase_number', 'text'],
  ['vendor_id', 'integer'],
  ['status', 'text'],
  ['order_date', 'date'],
  ['total_amount', 'numeric'],
].map(([column_name, data_type]) => ({ table_name: 'purchase_orders', column_name, data_type }));

/** A stand-in for `pg`'s Pool: records every statement and answers like a tiny ERP would. */
function fakePool(options: { fuzzyRows?: number } = {}) {
  const calls: { text: string; params: unknown[] }[] = [];
  const db: Queryable = {
    async query(text, params = []) {
      calls.push({ text, params });
      if (text.includes('information_schema.columns')) {
        const tables = params[1] as string[];
        return {
          rows: tables.includes('vendors')
            ? vendorColumns
            : tables.includes('purchase_orders')
              ? poColumns
              : [],
        };
      }
      if (text.includes('pg_extension')) return { rows: [{ schema: 'public' }] };
      if (text.includes(' ilike ')) {
        const rows = Array.from({ length: options.fuzzyRows ?? 2 }, (_, i) => ({
          vendor_id: i + 1,
          vendor_name: `Vendor ${i + 1}`,
          city: 'Calgary',
          contact_person: null,
          telephone_number: null,
          email: null,
          status: 'active',
          __troupe_total: 40,
        }));
        return { rows };
      }
      return { rows: [] };
    },
  };
  return { db, calls };
}

function failingDb(error: unknown): Queryable & { calls: number } {
  const db = {
    calls: 0,
    query: async () => {
      db.calls += 1;
      throw error;
    },
  };
  return db;
}

const hostileName = `Zq'"; DROP TABLE vendors; -- %_\\ OR 1=1`;

describe('through pg’s API shape', () => {
  it('puts every user value in params and none in the SQL text', async () => {
    const { db, calls } = fakePool();
    const lookup = createEntityLookup({ db });
    const envelope = await lookup.lookup({
      entity_type: 'vendor',
      entity_name: hostileName,
      filters: [{ field: 'city', value: "Calg'ary; --" }],
    });
    expect(envelope).toMatchObject({
      type: 'disambiguation',
      match: 'fuzzy',
      candidates_total: 40,
      attempts: { exact: true, fuzzy: true, schema_refreshed: false },
    });
    expect(envelope.candidates?.[0]).toEqual({
      id: 1,
      display_name: 'Vendor 1',
      city: 'Calgary',
      status: 'active',
    });
    const lookups = calls.filter((c) => c.text.includes('from "vendors"'));
    expect(lookups).toHaveLength(2);
    const [exact, fuzzy] = lookups;
    for (const call of lookups) {
      for (const fragment of ['Zq', 'DROP', "Calg'ary", '1=1']) expect(call.text).not.toContain(fragment);
      expect(call.params).toContain("Calg'ary; --");
    }
    expect(exact?.params).toContain(hostileName);
    expect(exact?.text).toContain('lower("vendor_name") = lower($1)');
    // Each word is its own escaped pattern; the whole name ranks by similarity.
    expect(fuzzy?.params).toEqual(
      expect.arrayContaining([`%Zq'";%`, '%DROP%', `%${escapeLike('%_\\')}%`, hostileName]),
    );
    expect(fuzzy?.text).toContain(`"vendor_name" ilike $1 escape '\\'`);
    expect(fuzzy?.text).toContain('"public".similarity("vendor_name", $');
  });

  it('passes order numbers and filters as params', async () => {
    const { db, calls } = fakePool();
    const envelope = await createEntityLookup({ db }).lookup({
      entity_type: 'po',
      order_number: 'po-1001',
      filters: { status: 'open' },
    });
    expect(envelope).toMatchObject({ type: 'empty', attempts: { exact: true, fuzzy: false } });
    const select = calls.find((c) => c.text.includes('from "purchase_orders"'));
    expect(select?.params).toEqual(['PO-1001', 'open']);
    expect(select?.text).toContain('upper("purchase_number") = upper($1)');
    expect(select?.text).toContain('lower(cast("status" as text)) = lower($2)');
    expect(select?.text).toContain('cast("order_date" as text) as "order_date"');
    expect(select?.text).not.toMatch(/PO-1001|'open'/u);
  });

  it('quotes identifiers', () => {
    expect(quoteIdent('vendor_name')).toBe('"vendor_name"');
    expect(quoteIdent('we"ird')).toBe('"we""ird"');
    expect(() => quoteIdent('')).toThrow(TypeError);
    expect(escapeLike('50%_\\x')).toBe('50\\%\\_\\\\x');
  });
});

describe('database failures', () => {
  it('a refused connection is a retryable DATABASE_ERROR, never a throw', async () => {
    const { logger, lines } = capturingLogger();
    const refused = Object.assign(new Error('connect ECONNREFUSED 10.0.0.7:5432'), { code: 'ECONNREFUSED' });
    const db = failingDb(refused);
    const envelope = await createEntityLookup({ db, logger }).lookup({
      entity_type: 'vendor',
      entity_name: 'Parts',
    });
    expect(envelope).toEqual({
      type: 'error',
      source: 'database',
      query: { entity_type: 'vendor', entity_name: 'Parts' },
      attempts: { exact: true, fuzzy: false, schema_refreshed: false },
      error: {
        code: 'DATABASE_ERROR',
        message: "The database is unavailable or busy, so vendors couldn't be looked up; try again shortly.",
        retryable: true,
      },
    });
    expect(JSON.stringify(envelope)).not.toContain('10.0.0.7');
    expect(lines.some((l) => l.level === 40 && String(l.error).includes('ECONNREFUSED'))).toBe(true);
  });

  it.each([
    ['57P01', true],
    ['08006', true],
    ['53300', true],
    ['57014', true],
    ['XX000', false],
    ['22P02', false],
  ])('SQLSTATE %s is a DATABASE_ERROR (retryable: %s)', async (code, retryable) => {
    const error = Object.assign(new Error(`boom ${code} secret_table`), { code });
    const envelope = await createEntityLookup({ db: failingDb(error) }).lookup({
      entity_type: 'customer',
      entity_name: 'Tundra',
    });
    expect(envelope.error).toMatchObject({ code: 'DATABASE_ERROR', retryable });
    expect(JSON.stringify(envelope)).not.toContain('secret_table');
  });

  it('a connection error inside an AggregateError or without a code is still retryable', async () => {
    const aggregate = new AggregateError(
      [Object.assign(new Error('refused'), { code: 'ECONNREFUSED' })],
      'x',
    );
    const terminated = new Error('Connection terminated unexpectedly');
    for (const error of [aggregate, terminated]) {
      const envelope = await createEntityLookup({ db: failingDb(error) }).lookup({
        entity_type: 'vendor',
        entity_name: 'x',
      });
      expect(envelope.error).toMatchObject({ code: 'DATABASE_ERROR', retryable: true });
    }
  });

  it('a synchronous throw and a non-Error rejection become envelopes too', async () => {
    const sync: Queryable = {
      query: () => {
        throw new TypeError('driver bug');
      },
    };
    const odd = failingDb('a string');
    for (const db of [sync, odd]) {
      const envelope = await createEntityLookup({ db }).lookup({
        entity_type: 'vendor',
        entity_name: 'Parts',
      });
      expect(envelope.error).toMatchObject({ code: 'DATABASE_ERROR', retryable: false });
    }
  });

  it('a real pg Pool to a closed port reports a retryable DATABASE_ERROR', async () => {
    const pool = new pg.Pool({
      connectionString: 'postgres://reader:pw@127.0.0.1:1/erp',
      connectionTimeoutMillis: 2000,
    });
    try {
      const envelope = await createEntityLookup({ db: pool }).lookup({
        entity_type: 'vendor',
        entity_name: 'Parts',
      });
      expect(envelope).toMatchObject({ type: 'error', error: { code: 'DATABASE_ERROR', retryable: true } });
      expect(JSON.stringify(envelope)).not.toContain('pw');
    } finally {
      await pool.end();
    }
  });
});

describe('input validation', () => {
  const invalid: [unknown, string][] = [
    [undefined, 'input'],
    ['vendor Parts', 'input'],
    [{}, 'entity_type'],
    [{ entity_type: '  ' }, 'entity_type'],
    [{ entity_type: 'spaceship', entity_name: 'x' }, 'entity_type'],
    [{ entity_type: 'vendor' }, 'entity_name'],
    [{ entity_type: 'vendor', entity_name: 42 }, 'entity_name'],
    [{ entity_type: 'vendor', entity_name: '   ' }, 'entity_name'],
    [{ entity_type: 'vendor', entity_name: 'a'.repeat(201) }, 'entity_name'],
    [{ entity_type: 'vendor', entity_name: 'nul\u0000byte' }, 'entity_name'],
    [{ entity_type: 'vendor', order_number: 'PO-1001' }, 'order_number'],
    [{ entity_type: 'po', filters: 'status=open' }, 'filters'],
    [{ entity_type: 'po', filters: [{ field: 'status' }] }, 'filters.0.value'],
    [{ entity_type: 'po', filters: { colour: 'red' } }, 'filters.0.field'],
  ];

  it.each(invalid)('%j → INVALID_INPUT naming %s', async (input, field) => {
    const { db, calls } = fakePool();
    const envelope = await createEntityLookup({ db }).lookup(input as EntityLookupInput);
    expect(envelope).toMatchObject({
      type: 'error',
      source: 'database',
      attempts: { exact: false, fuzzy: false, schema_refreshed: false },
      error: { code: 'INVALID_INPUT', retryable: false },
    });
    expect(envelope.error?.message.startsWith(`${field}:`)).toBe(true);
    expect(typeof envelope.query.entity_type).toBe('string');
    expect(calls).toHaveLength(0);
  });

  it('treats null optional fields as absent', async () => {
    const { db } = fakePool();
    const envelope = await createEntityLookup({ db }).lookup({
      entity_type: 'vendor',
      entity_name: 'Parts',
      order_number: null,
      filters: null,
    });
    expect(envelope.type).toBe('disambiguation');
    expect(envelope.query).toEqual({ entity_type: 'vendor', entity_name: 'Parts' });
  });

  it('rejects a malformed mapping when the lookup is created', () => {
    const { db } = fakePool();
    expect(() =>
      createEntityLookup({ db, entities: { widget: { label: 'widgets', table: '', id: 'id', search: [] } } }),
    ).toThrow(/widget\.table.*widget\.search/su);
  });
});

describe('erpDatabaseFromEnv', () => {
  it('opens the demo ERP when ERP_DATABASE_URL is unset', async () => {
    const demo = { kind: 'demo' as const, db: fakePool().db, close: async () => {} };
    const opened = await erpDatabaseFromEnv({}, { openers: { demo: async () => demo } });
    expect(opened).toBe(demo);
  });

  it('opens a lazily connecting pg Pool for ERP_DATABASE_URL', async () => {
    const erp = await erpDatabaseFromEnv({
      ERP_DATABASE_URL: 'postgres://reader:pw@127.0.0.1:1/erp',
      ERP_STATEMENT_TIMEOUT_MS: '1500',
    });
    try {
      expect(erp.kind).toBe('postgres');
      expect(erp.db).toBeInstanceOf(pg.Pool);
      const envelope = await createEntityLookup({ db: erp.db }).lookup({
        entity_type: 'vendor',
        entity_name: 'x',
      });
      expect(envelope.error).toMatchObject({ code: 'DATABASE_ERROR', retryable: true });
    } finally {
      await erp.close();
    }
  });

  it('validates settings without echoing the URL, and documents every setting', () => {
    expect(erpConfigFromEnv({})).toEqual({ url: undefined, poolSize: 4, statementTimeoutMs: 5000 });
    try {
      erpConfigFromEnv({ ERP_DATABASE_URL: 'mysql://u:hunter2@h/db', ERP_DATABASE_POOL_SIZE: '0' });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).problems.map((p) => p.variable)).toEqual([
        'ERP_DATABASE_URL',
        'ERP_DATABASE_POOL_SIZE',
      ]);
      expect(String(error)).not.toContain('hunter2');
    }
    for (const setting of Object.values(erpSettings)) {
      expect(shownDefault(setting).length).toBeGreaterThan(0);
      expect(setting.doc.length).toBeGreaterThan(20);
    }
  });
});
