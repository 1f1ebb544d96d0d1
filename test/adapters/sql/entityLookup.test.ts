import type { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asRole } from '../../../src/adapters/sql/asRole.js';
import { createDemoErp, demoErpReaderRole } from '../../../src/adapters/sql/demoErp.js';
import { createEntityLookup, type EntityLookup } from '../../../src/adapters/sql/entityLookup.js';
import { defaultEntityMappings } from '../../../src/adapters/sql/entityMappings.js';
import { parseEnvelope, type ToolResultEnvelope } from '../../../src/composer/envelope.js';
import { capturingLogger, spyOn } from '../../support/erpSpy.js';

// One embedded PostgreSQL for the whole file: each instance takes seconds to start.
let db: PGlite;
let lookup: EntityLookup;

beforeAll(async () => {
  db = await createDemoErp();
  lookup = createEntityLookup({ db });
});

afterAll(async () => {
  await db?.close();
});

const names = (envelope: ToolResultEnvelope) => (envelope.candidates ?? []).map((c) => c.display_name);

async function vendorCount(): Promise<number> {
  const { rows } = await db.query<{ n: number }>('select cast(count(*) as integer) as n from vendors');
  return rows[0]?.n ?? -1;
}

describe('exact matches', () => {
  it('re-runs by id (a picked disambiguation candidate) to a success', async () => {
    const envelope = await lookup.lookup({ entity_type: 'vendor', id: 77 });
    expect(envelope).toMatchObject({ type: 'success', match: 'exact', total_rows: 1, query: { id: 77 } });
    expect(envelope.rows?.[0]).toMatchObject({ vendor_id: 77, vendor_name: 'Parts 4 Trucks Incorporated' });
    expect(await lookup.lookup({ entity_type: 'vendor', id: '42' })).toMatchObject({ type: 'success' });
    expect(await lookup.lookup({ entity_type: 'vendor', id: 99_999 })).toMatchObject({ type: 'empty' });
  });

  it('finds a vendor by name in another case and returns the stored name', async () => {
    const envelope = await lookup.lookup({ entity_type: 'vendor', entity_name: '  parts FOR truck INC ' });
    expect(envelope).toMatchObject({
      type: 'success',
      source: 'database',
      match: 'exact',
      query: { entity_type: 'vendor', entity_name: 'parts FOR truck INC' },
      total_rows: 1,
      attempts: { exact: true, fuzzy: false, schema_refreshed: false },
    });
    expect(envelope.rows).toEqual([
      {
        vendor_id: 42,
        vendor_name: 'Parts for Truck Inc',
        city: 'Calgary',
        contact_person: 'Mira Patel',
        telephone_number: '555-0100',
        email: 'sales@partsfortruck.example',
        status: 'active',
      },
    ]);
    expect(envelope.candidates).toBeUndefined();
    expect(envelope.error).toBeUndefined();
  });

  it('offers numbered choices when two records match the name exactly (any case), never a guess', async () => {
    await db.query(
      `insert into vendors (vendor_id, vendor_name, city, status) values
         (9001, 'Northwind Supply', 'Calgary', 'active'), (9002, 'NORTHWIND SUPPLY', 'Edmonton', 'inactive')`,
    );
    try {
      const envelope = await lookup.lookup({ entity_type: 'vendor', entity_name: 'northwind supply' });
      expect(envelope).toMatchObject({
        type: 'disambiguation',
        match: 'exact',
        candidates_total: 2,
        attempts: { exact: true, fuzzy: false, schema_refreshed: false },
      });
      expect(envelope.candidates).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ id: 9001, display_name: 'Northwind Supply', city: 'Calgary' }),
          expect.objectContaining({ id: 9002, display_name: 'NORTHWIND SUPPLY', city: 'Edmonton' }),
        ]),
      );
      expect(envelope.rows).toBeUndefined();
    } finally {
      await db.query('delete from vendors where vendor_id in (9001, 9002)');
    }
  });

  it('accepts entity type aliases', async () => {
    for (const entity_type of ['vendors', 'Supplier', 'SUPPLIERS']) {
      const envelope = await lookup.lookup({ entity_type, entity_name: 'Truck Parts Depot' });
      expect(envelope).toMatchObject({ type: 'success', query: { entity_type: 'vendor' } });
    }
    const customer = await lookup.lookup({ entity_type: 'customers', entity_name: 'tundra haulage' });
    expect(customer.rows?.[0]).toMatchObject({ customer_id: 510, customer_name: 'Tundra Haulage' });
    const part = await lookup.lookup({ entity_type: 'part', entity_name: 'brk-2201' });
    expect(part).toMatchObject({
      type: 'success',
      match: 'exact',
      rows: [{ part_id: 1, unit_price: '84.50' }],
    });
  });

  it('finds PO-1001 exactly and never PO-10010', async () => {
    const envelope = await lookup.lookup({ entity_type: 'purchase_order', order_number: 'PO-1001' });
    expect(envelope).toMatchObject({
      type: 'success',
      match: 'exact',
      total_rows: 1,
      attempts: { exact: true, fuzzy: false, schema_refreshed: false },
    });
    expect(envelope.rows).toEqual([
      {
        purchase_order_id: 1,
        purchase_number: 'PO-1001',
        vendor_id: 42,
        status: 'open',
        order_date: '2025-01-06',
        total_amount: '1690.00',
      },
    ]);
    expect(JSON.stringify(envelope)).not.toContain('PO-10010');
    const trap = await lookup.lookup({ entity_type: 'po', order_number: 'PO-10010' });
    expect(trap.rows?.map((r) => r.purchase_number)).toEqual(['PO-10010']);
  });

  it('normalises order numbers: case, spaces, # and a bare number', async () => {
    for (const order_number of ['po-1001', ' Po - 1001 ', 'PO 1001', 'po#1001', '1001']) {
      const envelope = await lookup.lookup({ entity_type: 'po', order_number });
      expect(envelope.query.order_number).toBe('PO-1001');
      expect(envelope.rows?.map((r) => r.purchase_number)).toEqual(['PO-1001']);
    }
  });

  it('never matches an order number as a substring, and never tries fuzzy for one', async () => {
    const envelope = await lookup.lookup({ entity_type: 'order', order_number: 'PO-100' });
    expect(envelope).toMatchObject({
      type: 'empty',
      query: { entity_type: 'purchase_order', order_number: 'PO-100' },
      attempts: { exact: true, fuzzy: false, schema_refreshed: false },
    });
  });

  it('finds a name with an apostrophe exactly', async () => {
    const envelope = await lookup.lookup({ entity_type: 'vendor', entity_name: "o'brien HYDRAULICS" });
    expect(envelope).toMatchObject({
      type: 'success',
      match: 'exact',
      rows: [{ vendor_id: 104, vendor_name: "O'Brien Hydraulics", contact_person: "Kieran O'Brien" }],
    });
  });

  it('finds an inactive vendor and shows its status', async () => {
    const exact = await lookup.lookup({ entity_type: 'vendor', entity_name: 'Chinook Welding Supply' });
    expect(exact).toMatchObject({ type: 'success', rows: [{ vendor_id: 112, status: 'inactive' }] });
    const fuzzy = await lookup.lookup({ entity_type: 'vendor', entity_name: 'supply' });
    expect(fuzzy.type).toBe('disambiguation');
    expect(fuzzy.candidates).toContainEqual(
      expect.objectContaining({ id: 112, display_name: 'Chinook Welding Supply', status: 'inactive' }),
    );
  });
});

describe('fuzzy matches', () => {
  it('"Parts" lists both near-duplicates with their context and a total', async () => {
    const envelope = await lookup.lookup({ entity_type: 'vendor', entity_name: 'Parts' });
    expect(envelope).toMatchObject({
      type: 'disambiguation',
      match: 'fuzzy',
      candidates_total: 3,
      attempts: { exact: true, fuzzy: true, schema_refreshed: false },
    });
    expect(envelope.candidates).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: 42, display_name: 'Parts for Truck Inc', city: 'Calgary' }),
        expect.objectContaining({ id: 77, display_name: 'Parts 4 Trucks Incorporated', city: 'Edmonton' }),
        expect.objectContaining({ id: 103, display_name: 'Truck Parts Depot', city: 'Red Deer' }),
      ]),
    );
    expect(envelope.rows).toBeUndefined();
  });

  it('ranks "Truck" by trigram similarity', async () => {
    const spied = spyOn(db);
    const envelope = await createEntityLookup({ db: spied }).lookup({
      entity_type: 'vendor',
      entity_name: 'Truck',
    });
    expect(envelope.type).toBe('disambiguation');
    const { rows } = await db.query<{ vendor_name: string }>(
      `select vendor_name from vendors where vendor_name ilike '%truck%'
       order by similarity(vendor_name, 'Truck') desc`,
    );
    expect(names(envelope)).toEqual(rows.map((r) => r.vendor_name));
    expect(names(envelope)).toEqual([
      'Truck Parts Depot',
      'Parts for Truck Inc',
      'Parts 4 Trucks Incorporated',
    ]);
    expect(spied.statements.some((s) => s.text.includes('pg_extension'))).toBe(true);
    expect(spied.statements.some((s) => s.text.includes('similarity('))).toBe(true);
  });

  it('detects pg_trgm once per lookup', async () => {
    const spied = spyOn(db);
    const own = createEntityLookup({ db: spied });
    await own.lookup({ entity_type: 'vendor', entity_name: 'Truck' });
    await own.lookup({ entity_type: 'vendor', entity_name: 'Parts' });
    expect(spied.statements.filter((s) => s.text.includes('pg_extension'))).toHaveLength(1);
  });

  it('requires every word: "brake pads" finds both pads, "Acme Parts" finds nothing', async () => {
    const pads = await lookup.lookup({ entity_type: 'part', entity_name: 'brake  PADS' });
    expect(pads).toMatchObject({ type: 'disambiguation', candidates_total: 2 });
    expect(pads.candidates?.map((c) => c.id).sort()).toEqual([1, 2]);
    const acme = await lookup.lookup({ entity_type: 'vendor', entity_name: 'Acme Parts' });
    expect(acme).toEqual({
      type: 'empty',
      source: 'database',
      query: { entity_type: 'vendor', entity_name: 'Acme Parts' },
      attempts: { exact: true, fuzzy: true, schema_refreshed: false },
    });
  });

  it('one fuzzy hit is a success', async () => {
    const envelope = await lookup.lookup({ entity_type: 'vendor', entity_name: 'hydraul' });
    expect(envelope).toMatchObject({
      type: 'success',
      match: 'fuzzy',
      total_rows: 1,
      rows: [{ vendor_id: 104 }],
      attempts: { exact: true, fuzzy: true },
    });
  });

  it('skips fuzzy for names shorter than three characters', async () => {
    const envelope = await lookup.lookup({ entity_type: 'vendor', entity_name: 'ab' });
    expect(envelope).toMatchObject({
      type: 'empty',
      attempts: { exact: true, fuzzy: false, schema_refreshed: false },
    });
    const spaced = await lookup.lookup({ entity_type: 'vendor', entity_name: '  in  ' });
    expect(spaced).toMatchObject({ type: 'empty', attempts: { exact: true, fuzzy: false } });
  });

  it('caps candidates and reports the full count', async () => {
    const capped = createEntityLookup({ db, candidateLimit: 2 });
    const envelope = await capped.lookup({ entity_type: 'vendor', entity_name: 'Parts' });
    expect(envelope.candidates).toHaveLength(2);
    expect(envelope.candidates_total).toBe(3);
  });

  it('ranks by name length, then alphabetically, without pg_trgm (and survives it being dropped)', async () => {
    const detected = createEntityLookup({ db });
    await detected.lookup({ entity_type: 'vendor', entity_name: 'Truck' }); // pg_trgm detected and cached
    await db.exec('drop extension pg_trgm cascade');
    try {
      const spied = spyOn(db);
      const fresh = createEntityLookup({ db: spied });
      const envelope = await fresh.lookup({ entity_type: 'vendor', entity_name: 'Parts' });
      expect(names(envelope)).toEqual([
        'Truck Parts Depot',
        'Parts for Truck Inc',
        'Parts 4 Trucks Incorporated',
      ]);
      expect(spied.statements.some((s) => s.text.includes('similarity('))).toBe(false);
      const suppliers = await fresh.lookup({ entity_type: 'vendor', entity_name: 'supply' });
      expect(names(suppliers)).toEqual(['Chinook Welding Supply', 'Northern Bearing Supply']);
      // The lookup that saw pg_trgm gets 42883 from similarity() and ranks without it.
      const stale = await detected.lookup({ entity_type: 'vendor', entity_name: 'Truck' });
      expect(stale).toMatchObject({ type: 'disambiguation', candidates_total: 3 });
    } finally {
      await db.exec('create extension pg_trgm');
    }
  });
});

describe('hostile input is data', () => {
  const hostile = [
    "' OR 1=1 --",
    "' OR '1'='1",
    '%',
    '%%%',
    '_',
    '___',
    '"; DROP TABLE vendors; --',
    "'); DROP TABLE vendors; --",
    '\\',
    '\\\\\\',
    '%\\%',
    'Parts%',
    '*',
  ];

  it.each(hostile)('%s finds nothing and drops nothing', async (entity_name) => {
    const envelope = await lookup.lookup({ entity_type: 'vendor', entity_name });
    expect(envelope.type).toBe('empty');
    expect(envelope.query.entity_name).toBe(entity_name.trim());
    expect(await vendorCount()).toBe(15);
  });

  it('matches % literally', async () => {
    const envelope = await lookup.lookup({ entity_type: 'vendor', entity_name: '50%' });
    expect(envelope).toMatchObject({ type: 'success', match: 'fuzzy', rows: [{ vendor_id: 114 }] });
  });

  it('treats hostile filters and order numbers as data', async () => {
    const order = await lookup.lookup({ entity_type: 'po', order_number: "PO-1001' OR '1'='1" });
    expect(order.type).toBe('empty');
    const filtered = await lookup.lookup({
      entity_type: 'po',
      filters: [{ field: 'status', value: "open' OR 1=1 --" }],
    });
    expect(filtered.type).toBe('empty');
    const { rows } = await db.query<{ n: number }>(
      `select cast(count(*) as integer) as n from information_schema.tables
       where table_schema = 'public' and table_name in ('vendors', 'customers', 'parts', 'purchase_orders')`,
    );
    expect(rows[0]?.n).toBe(4);
  });
});

describe('filters', () => {
  it('lists purchase orders with status open', async () => {
    const envelope = await lookup.lookup({
      entity_type: 'po',
      filters: [{ field: 'status', value: 'open' }],
    });
    expect(envelope).toMatchObject({
      type: 'success',
      match: 'exact',
      total_rows: 5,
      query: { entity_type: 'purchase_order', filters: [{ field: 'status', value: 'open' }] },
    });
    expect(envelope.rows?.every((r) => r.status === 'open')).toBe(true);
    expect(envelope.rows?.map((r) => r.purchase_number).sort()).toEqual([
      'PO-1001',
      'PO-10010',
      'PO-1003',
      'PO-1005',
      'PO-1008',
    ]);
  });

  it('accepts the object shorthand, any case, and numbers', async () => {
    const envelope = await lookup.lookup({ entity_type: 'po', filters: { status: 'OPEN', vendor_id: 42 } });
    expect(envelope).toMatchObject({
      type: 'success',
      rows: [{ purchase_number: 'PO-1001' }],
      query: {
        filters: [
          { field: 'status', value: 'OPEN' },
          { field: 'vendor_id', value: 42 },
        ],
      },
    });
  });

  it('narrows a name search', async () => {
    const envelope = await lookup.lookup({
      entity_type: 'vendor',
      entity_name: 'Parts',
      filters: [{ field: 'city', value: 'calgary' }],
    });
    expect(envelope).toMatchObject({ type: 'success', match: 'fuzzy', rows: [{ vendor_id: 42 }] });
    const inactive = await lookup.lookup({ entity_type: 'vendor', filters: { status: 'inactive' } });
    expect(inactive.rows?.map((r) => r.vendor_name)).toEqual(['Chinook Welding Supply']);
  });

  it('rejects a field that is not whitelisted', async () => {
    const envelope = await lookup.lookup({
      entity_type: 'vendor',
      entity_name: 'Parts',
      filters: [{ field: 'email', value: 'x' }],
    });
    expect(envelope).toMatchObject({
      type: 'error',
      error: { code: 'INVALID_INPUT' },
      attempts: { exact: false, fuzzy: false, schema_refreshed: false },
    });
    expect(envelope.error?.message).toContain('filters.0.field');
    expect(envelope.error?.message).toContain('"email"');
    expect(envelope.error?.message).toContain('status, city');
  });
});

describe('permissions', () => {
  it('reports PERMISSION_DENIED for customers as erp_reader, logging the raw text only', async () => {
    const { logger, lines } = capturingLogger();
    const reader = createEntityLookup({ db: asRole(db, demoErpReaderRole), logger });
    const envelope = await reader.lookup({ entity_type: 'customer', entity_name: 'Tundra Haulage' });
    expect(envelope).toEqual({
      type: 'error',
      source: 'database',
      query: { entity_type: 'customer', entity_name: 'Tundra Haulage' },
      attempts: { exact: true, fuzzy: false, schema_refreshed: false },
      error: { code: 'PERMISSION_DENIED', message: "You don't have access to customers.", retryable: false },
    });
    expect(JSON.stringify(envelope).toLowerCase()).not.toContain('permission denied');
    const warning = lines.find((l) => l.level === 40 && l.sqlstate === '42501');
    expect(String(warning?.error)).toContain('permission denied');
  });

  it('lets erp_reader read vendors, and leaves the session role alone', async () => {
    const reader = createEntityLookup({ db: asRole(db, demoErpReaderRole) });
    const envelope = await reader.lookup({ entity_type: 'vendor', entity_name: 'Truck' });
    expect(envelope).toMatchObject({ type: 'disambiguation', candidates_total: 3 });
    const { rows } = await db.query<{ current_user: string }>('select current_user');
    expect(rows[0]?.current_user).toBe('postgres');
  });
});

describe('schema drift', () => {
  it('refreshes the schema and retries when vendor_name is renamed to name', async () => {
    const spied = spyOn(db);
    const drifting = createEntityLookup({
      db: spied,
      entities: { vendor: { ...defaultEntityMappings.vendor, search: [['vendor_name', 'name']] } },
    });
    await drifting.lookup({ entity_type: 'vendor', entity_name: 'Truck Parts Depot' }); // schema cached
    await db.exec('alter table vendors rename column vendor_name to name');
    try {
      spied.statements.length = 0;
      const envelope = await drifting.lookup({ entity_type: 'vendor', entity_name: 'truck parts depot' });
      expect(spied.statements.map((s) => s.failedWith).filter(Boolean)).toEqual(['42703']);
      expect(spied.statements.some((s) => s.text.includes('information_schema.columns'))).toBe(true);
      expect(envelope).toMatchObject({
        type: 'success',
        match: 'exact',
        attempts: { exact: true, fuzzy: false, schema_refreshed: true },
        // Rows keep the mapping's key whichever alternate the table has.
        rows: [{ vendor_id: 103, vendor_name: 'Truck Parts Depot' }],
      });
      const fuzzy = await drifting.lookup({ entity_type: 'vendor', entity_name: 'Truck' });
      expect(fuzzy).toMatchObject({
        type: 'disambiguation',
        attempts: { exact: true, fuzzy: true, schema_refreshed: false },
      });
      expect(names(fuzzy)).toContain('Parts for Truck Inc');
    } finally {
      await db.exec('alter table vendors rename column name to vendor_name');
    }
  });

  it('reports SCHEMA_MISMATCH when no alternate column exists', async () => {
    const { logger, lines } = capturingLogger();
    const drifting = createEntityLookup({ db, logger });
    await drifting.lookup({ entity_type: 'vendor', entity_name: 'Truck Parts Depot' });
    await db.exec('alter table vendors rename column vendor_name to company');
    try {
      const envelope = await drifting.lookup({ entity_type: 'vendor', entity_name: 'Truck Parts Depot' });
      expect(envelope).toMatchObject({
        type: 'error',
        attempts: { exact: true, fuzzy: false, schema_refreshed: true },
        error: { code: 'SCHEMA_MISMATCH', retryable: false },
      });
      expect(envelope.error?.message).toContain('vendors');
      expect(envelope.error?.message).toContain('the table or column the lookup needs is missing');
      expect(JSON.stringify(envelope)).not.toMatch(/does not exist|vendor_name|company/u);
      expect(lines.some((l) => l.sqlstate === '42703')).toBe(true);
    } finally {
      await db.exec('alter table vendors rename column company to vendor_name');
    }
  });

  it('reports SCHEMA_MISMATCH when the table is renamed', async () => {
    const spied = spyOn(db);
    const drifting = createEntityLookup({ db: spied });
    await drifting.lookup({ entity_type: 'vendor', entity_name: 'Truck Parts Depot' });
    await db.exec('alter table vendors rename to vendors_archive');
    try {
      const envelope = await drifting.lookup({ entity_type: 'vendor', entity_name: 'Truck Parts Depot' });
      expect(envelope).toMatchObject({
        type: 'error',
        attempts: { exact: true, fuzzy: false, schema_refreshed: true },
        error: { code: 'SCHEMA_MISMATCH' },
      });
      expect(spied.statements.map((s) => s.failedWith).filter(Boolean)).toEqual(['42P01']);
      expect(JSON.stringify(envelope)).not.toMatch(/relation|does not exist/u);
    } finally {
      await db.exec('alter table vendors_archive rename to vendors');
    }
    const healed = await drifting.lookup({ entity_type: 'vendor', entity_name: 'Truck Parts Depot' });
    expect(healed).toMatchObject({ type: 'success', attempts: { schema_refreshed: true } });
  });

  it('finds the table under an alternate name without an error', async () => {
    await db.exec('alter table parts rename to part');
    try {
      const spied = spyOn(db);
      const envelope = await createEntityLookup({ db: spied }).lookup({
        entity_type: 'part',
        entity_name: 'BRK-3100',
      });
      expect(envelope).toMatchObject({ type: 'success', attempts: { schema_refreshed: false } });
      expect(spied.statements.every((s) => s.failedWith === undefined)).toBe(true);
    } finally {
      await db.exec('alter table part rename to parts');
    }
  });
});

describe('envelopes', () => {
  it('every outcome passes the composer’s envelope schema unchanged', async () => {
    const reader = createEntityLookup({ db: asRole(db, demoErpReaderRole) });
    const envelopes = [
      await lookup.lookup({ entity_type: 'vendor', entity_name: 'Parts for Truck Inc' }),
      await lookup.lookup({ entity_type: 'vendor', entity_name: 'Parts' }),
      await lookup.lookup({ entity_type: 'vendor', entity_name: 'Acme Parts' }),
      await lookup.lookup({ entity_type: 'po', order_number: 'po-1001' }),
      await lookup.lookup({ entity_type: 'po', filters: { status: 'open' } }),
      await lookup.lookup({ entity_type: 'part', entity_name: 'brake pads' }),
      await lookup.lookup({ entity_type: 'vendor', filters: [{ field: 'email', value: 'x' }] }),
      await lookup.lookup({} as never),
      await reader.lookup({ entity_type: 'customer', entity_name: 'Tundra Haulage' }),
    ];
    expect(envelopes.map((e) => e.type)).toEqual([
      'success',
      'disambiguation',
      'empty',
      'success',
      'success',
      'disambiguation',
      'error',
      'error',
      'error',
    ]);
    for (const envelope of envelopes) {
      const parsed = parseEnvelope(envelope);
      expect(parsed.ok ? parsed.envelope : parsed.error.message).toEqual(envelope);
      // What reaches the composer is plain JSON.
      expect(JSON.parse(JSON.stringify(envelope))).toEqual(envelope);
    }
  });
});
