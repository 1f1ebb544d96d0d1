/**
 * Fuzzing the entity lookup against the demo ERP (embedded PostgreSQL): a model's tool call may
 * carry any name, order number, id or filter. Whatever it carries, the answer is a valid,
 * typed envelope, no statement fails with a database error (only the reader role's designed
 * permission refusal), user text reaches the database only as a parameter, never inside SQL, and
 * the tables are intact afterwards. `FUZZ_RUNS=5000` runs thousands.
 */
import type { PGlite } from '@electric-sql/pglite';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asRole } from '../../src/adapters/sql/asRole.js';
import { createDemoErp, demoErpReaderRole } from '../../src/adapters/sql/demoErp.js';
import { createEntityLookup } from '../../src/adapters/sql/entityLookup.js';
import { parseEnvelope } from '../../src/composer/envelope.js';
import { spyOn } from '../support/erpSpy.js';
import { fuzzRuns } from '../support/fuzzRuns.js';

// One embedded PostgreSQL for the file: each instance takes seconds to start.
let db: PGlite;

beforeAll(async () => {
  db = await createDemoErp();
});

afterAll(async () => {
  await db?.close();
});

async function count(sql: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(sql);
  return rows[0]?.n ?? -1;
}

/** A marker in fuzzed text: found in a statement's SQL, it means user text was spliced in. */
const canary = 'zqxcanary';

const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 60 }),
  fc.constantFrom(
    "'",
    '"',
    '\\',
    '%',
    '_',
    '--',
    ';',
    '$1',
    '\u0000',
    "E'\\x00'",
    '/*',
    '*/',
    'null',
    '\ud800',
  ),
  fc
    .tuple(fc.constantFrom("'", '"', "');", '%', '\\', ''), fc.string({ maxLength: 20 }))
    .map(([quote, rest]) => `${canary}${quote}${rest} OR 1=1; DROP TABLE vendors; --`),
);
const entityType = fc.constantFrom('vendor', 'customer', 'part', 'po', 'purchase_order', 'supplier');
/** One kind of lookup at a time, as a model would call it, plus fully arbitrary mixtures. */
const lookupInput = fc.oneof(
  fc.record({ entity_type: entityType, entity_name: text }),
  fc.record({ entity_type: fc.constant('po'), order_number: text }),
  fc.record({ entity_type: entityType, id: fc.oneof(text, fc.integer(), fc.double()) }),
  fc.record({
    entity_type: fc.constant('po'),
    filters: fc.array(fc.record({ field: fc.constantFrom('status', 'vendor_id'), value: text }), {
      minLength: 1,
      maxLength: 2,
    }),
  }),
  fc.record(
    {
      entity_type: fc.oneof(entityType, text),
      entity_name: fc.oneof(text, fc.constant(null)),
      order_number: fc.oneof(text, fc.constant(null)),
      id: fc.oneof(text, fc.integer(), fc.double(), fc.constant(null)),
      filters: fc.oneof(
        fc.array(
          fc.record({ field: text, value: fc.oneof(text, fc.integer(), fc.boolean(), fc.constant(null)) }),
          { maxLength: 3 },
        ),
        fc.dictionary(text, fc.oneof(text, fc.integer(), fc.boolean())),
        fc.constant(null),
      ),
    },
    { requiredKeys: ['entity_type'] },
  ),
);

/** Cell values as a tool result may carry them: JSON-able scalars (a date as text). */
function isTypedCell(value: unknown): boolean {
  return (
    value === null ||
    typeof value === 'string' ||
    typeof value === 'boolean' ||
    (typeof value === 'number' && Number.isFinite(value))
  );
}

describe('entity lookup (fuzzed)', () => {
  it('any name, order number, id or filter is data: a typed envelope, no database error, no user text in SQL', async () => {
    const types: Record<string, number> = {};
    await fc.assert(
      fc.asyncProperty(lookupInput, fc.boolean(), async (query, asReader) => {
        const spied = spyOn(asReader ? asRole(db, demoErpReaderRole) : db);
        const envelope = await createEntityLookup({ db: spied }).lookup(query as never);
        const parsed = parseEnvelope(envelope);
        expect(parsed.ok).toBe(true);
        types[envelope.type] = (types[envelope.type] ?? 0) + 1;
        // PERMISSION_DENIED: customers are closed to the demo's reader role; never a database error.
        if (envelope.type === 'error')
          expect(['INVALID_INPUT', 'PERMISSION_DENIED']).toContain(envelope.error?.code);
        for (const row of envelope.rows ?? [])
          for (const cell of Object.values(row)) expect(isTypedCell(cell)).toBe(true);
        for (const candidate of envelope.candidates ?? [])
          expect(['string', 'number']).toContain(typeof candidate.id);
        for (const statement of spied.statements) {
          expect(statement.text.toLowerCase()).not.toContain(canary);
          // 42501: the reader role's designed refusal; any other SQLSTATE is a bug.
          if (statement.failedWith !== undefined) {
            expect(asReader).toBe(true);
            expect(statement.failedWith).toBe('42501');
          }
        }
      }),
      { numRuns: fuzzRuns(60) },
    );
    // Most runs reached the database and came back as an answer, not an input error.
    expect((types.success ?? 0) + (types.empty ?? 0) + (types.disambiguation ?? 0)).toBeGreaterThan(
      (types.error ?? 0) / 2,
    );
    expect(await count('select cast(count(*) as integer) as n from vendors')).toBe(15);
    expect(
      await count(`select cast(count(*) as integer) as n from information_schema.tables
        where table_schema = 'public' and table_name in ('vendors', 'customers', 'parts', 'purchase_orders')`),
    ).toBe(4);
  });
});
