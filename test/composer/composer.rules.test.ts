/**
 * The Answer Composer's rules (seed 001), one test each: the envelope schema, settings read at every
 * composition, table previews, numbered choices, "What I tried", capabilities-driven next steps,
 * error categories without raw database text, telemetry, and replies to malformed envelopes.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type ComposedReply,
  compose,
  composerConfigFrom,
  composerSettings,
  composeTelemetrySchema,
  defaultComposerConfig,
  errorCategoryOf,
  parseEnvelope,
  type ToolResultEnvelope,
} from '../../src/composer/index.js';
import { ConfigError } from '../../src/config/configError.js';
import { isTroupeError } from '../../src/ports/troupeError.js';
import { fuzzRuns } from '../support/fuzzRuns.js';

const attempts = (exact: boolean, fuzzy: boolean, schema_refreshed: boolean) => ({
  exact,
  fuzzy,
  schema_refreshed,
});

function envelope(overrides: Partial<ToolResultEnvelope>): ToolResultEnvelope {
  return {
    type: 'empty',
    source: 'database',
    query: { entity_type: 'vendor', entity_name: 'Acme Parts' },
    attempts: attempts(true, true, false),
    ...overrides,
  };
}

function vendors(n: number): Record<string, unknown>[] {
  return Array.from({ length: n }, (_, i) => ({
    vendor_id: i + 1,
    vendor_name: `Vendor ${i + 1}`,
    city: i % 2 === 0 ? 'Calgary' : 'Edmonton',
  }));
}

function candidates(n: number) {
  return Array.from({ length: n }, (_, i) => ({
    id: i + 1,
    display_name: `Parts ${i + 1}`,
    city: 'Calgary',
  }));
}

// --- The envelope ------------------------------------------------------------------------------

describe('envelope schema', () => {
  it('keeps extra query keys and candidate context, and accepts the optional extras', () => {
    const parsed = parseEnvelope({
      type: 'disambiguation',
      source: 'database',
      query: {
        entity_type: 'part',
        part_identifier: 'BP-100',
        filters: [{ field: 'category', value: 'Brakes' }],
      },
      candidates: [{ id: 'p1', display_name: 'Brake pad', category: 'Brakes', unit_price: 12.5 }],
      candidates_total: 9,
      match: 'fuzzy',
      attempts: attempts(true, true, false),
    });
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(parsed.envelope.query.part_identifier).toBe('BP-100');
    expect(parsed.envelope.candidates?.[0]).toMatchObject({ category: 'Brakes', unit_price: 12.5 });
    expect(parsed.envelope.candidates_total).toBe(9);
    expect(parsed.envelope.match).toBe('fuzzy');
    const withRetryable = parseEnvelope(
      envelope({ type: 'error', error: { code: 'DATABASE_ERROR', message: 'x', retryable: true } }),
    );
    expect(withRetryable.ok && withRetryable.envelope.error?.retryable).toBe(true);
  });

  it('rejects a bad envelope with TROUPE_ENVELOPE_INVALID naming each bad path, never its values', () => {
    const parsed = parseEnvelope({
      type: 'found',
      source: 'database',
      query: { entity_type: 'vendor' },
      candidates: [{ id: 1, display_name: 'ok' }, { id: 2 }],
      attempts: { exact: true, fuzzy: 'SECRET-VALUE', schema_refreshed: false },
    });
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(isTroupeError(parsed.error)).toBe(true);
    expect(parsed.error.code).toBe('TROUPE_ENVELOPE_INVALID');
    expect(parsed.error.message).toContain('type should be one of success, disambiguation, empty, error');
    expect(parsed.error.message).toContain('candidates[1].display_name is missing');
    expect(parsed.error.message).toContain('attempts.fuzzy should be a boolean');
    expect(parsed.error.message).not.toContain('SECRET-VALUE');
    expect(parsed.problems.map((p) => p.path)).toEqual([
      'type',
      'candidates[1].display_name',
      'attempts.fuzzy',
    ]);
  });

  it('checks what each type needs: rows, candidates, error', () => {
    const problems = (input: unknown) => {
      const parsed = parseEnvelope(input);
      return parsed.ok ? [] : parsed.problems.map((p) => p.path);
    };
    expect(problems(envelope({ type: 'success' }))).toEqual(['rows']);
    expect(problems(envelope({ type: 'success', rows: [] }))).toEqual(['rows']);
    expect(problems(envelope({ type: 'disambiguation', candidates: [] }))).toEqual(['candidates']);
    expect(problems(envelope({ type: 'error' }))).toEqual(['error']);
    expect(problems(envelope({ type: 'empty' }))).toEqual([]);
  });
});

// --- Settings ----------------------------------------------------------------------------------

describe('composer settings', () => {
  it('list every variable with its default and a doc line, and default as the seed says', () => {
    expect(Object.keys(composerSettings).sort()).toEqual([
      'AGENT_CAN_CREATE_CUSTOMER',
      'AGENT_CAN_CREATE_PART',
      'AGENT_CAN_CREATE_VENDOR',
      'AI_RESPONSE_DISAMBIG_LIMIT',
      'AI_RESPONSE_TABLE_PREVIEW_LIMIT',
    ]);
    for (const setting of Object.values(composerSettings)) expect(setting.doc.length).toBeGreaterThan(20);
    expect(defaultComposerConfig).toEqual({
      disambiguationLimit: 5,
      tablePreviewLimit: 5,
      canCreateVendor: false,
      canCreateCustomer: false,
      canCreatePart: false,
    });
    expect(composerConfigFrom({})).toEqual(defaultComposerConfig);
  });

  it('parse values from the environment', () => {
    expect(
      composerConfigFrom({
        AI_RESPONSE_DISAMBIG_LIMIT: '3',
        AI_RESPONSE_TABLE_PREVIEW_LIMIT: ' 10 ',
        AGENT_CAN_CREATE_VENDOR: 'true',
        AGENT_CAN_CREATE_CUSTOMER: 'yes',
        AGENT_CAN_CREATE_PART: '0',
      }),
    ).toEqual({
      disambiguationLimit: 3,
      tablePreviewLimit: 10,
      canCreateVendor: true,
      canCreateCustomer: true,
      canCreatePart: false,
    });
  });

  it('reject bad values with a ConfigError naming each variable', () => {
    let thrown: unknown;
    try {
      composerConfigFrom({ AI_RESPONSE_DISAMBIG_LIMIT: 'five', AGENT_CAN_CREATE_PART: 'maybe' });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    const error = thrown as ConfigError;
    expect(error.problems.map((p) => p.variable)).toEqual([
      'AI_RESPONSE_DISAMBIG_LIMIT',
      'AGENT_CAN_CREATE_PART',
    ]);
    expect(error.message).toContain('AI_RESPONSE_DISAMBIG_LIMIT="five"');
    expect(error.message).toContain('AGENT_CAN_CREATE_PART="maybe"');
  });

  it('take effect on the next composition, without a restart', () => {
    const env: Record<string, string | undefined> = {};
    const lookup = envelope({ type: 'empty' });
    const before = compose(lookup, { env });
    expect(before.text).toContain('Vendors → Add New');
    env.AGENT_CAN_CREATE_VENDOR = 'true';
    const after = compose(lookup, { env });
    expect(after.text).toContain('Say “create vendor Acme Parts”.');
    expect(after.text).not.toContain('Vendors → Add New');

    const listing = envelope({ type: 'success', rows: vendors(8), total_rows: 8 });
    const live = { AI_RESPONSE_TABLE_PREVIEW_LIMIT: '2' } as Record<string, string | undefined>;
    expect(compose(listing, { env: () => live }).parts.table?.shown).toBe(2);
    live.AI_RESPONSE_TABLE_PREVIEW_LIMIT = '6';
    expect(compose(listing, { env: () => live }).parts.table?.shown).toBe(6);
  });

  it('read the live process.env when given it', () => {
    const saved = process.env.AI_RESPONSE_DISAMBIG_LIMIT;
    const ambiguous = envelope({ type: 'disambiguation', candidates: candidates(6) });
    try {
      process.env.AI_RESPONSE_DISAMBIG_LIMIT = '2';
      expect(compose(ambiguous, { env: process.env }).parts.choices).toHaveLength(2);
      process.env.AI_RESPONSE_DISAMBIG_LIMIT = '4';
      expect(compose(ambiguous, { env: process.env }).parts.choices).toHaveLength(4);
    } finally {
      if (saved === undefined) delete process.env.AI_RESPONSE_DISAMBIG_LIMIT;
      else process.env.AI_RESPONSE_DISAMBIG_LIMIT = saved;
    }
  });

  it('given directly win over the environment; a bad environment value falls back and is counted', () => {
    const ambiguous = envelope({ type: 'disambiguation', candidates: candidates(6) });
    const direct = compose(ambiguous, {
      env: { AI_RESPONSE_DISAMBIG_LIMIT: '2' },
      config: { disambiguationLimit: 3 },
    });
    expect(direct.parts.choices).toHaveLength(3);
    const bad = compose(ambiguous, { env: { AI_RESPONSE_DISAMBIG_LIMIT: 'lots' } });
    expect(bad.parts.choices).toHaveLength(5);
    expect(bad.counters).toContain('composer_config_invalid');
  });
});

// --- Success -----------------------------------------------------------------------------------

describe('success replies', () => {
  it('name the record by its stored name, not what the user typed', () => {
    const reply = compose(
      envelope({
        type: 'success',
        query: { entity_type: 'supplier', entity_name: 'parts 4 truck' },
        rows: [{ vendor_id: 42, vendor_name: 'Parts for Truck Inc', city: 'Calgary' }],
        total_rows: 1,
        match: 'fuzzy',
      }),
    );
    expect(reply.parts.summary).toBe('Parts for Truck Inc (closest match to “parts 4 truck”) — Calgary');
    const exact = compose(
      envelope({
        type: 'success',
        query: { entity_type: 'vendor', entity_name: 'PARTS FOR TRUCK INC' },
        rows: [{ vendor_id: 42, vendor_name: 'Parts for Truck Inc' }],
        match: 'exact',
      }),
    );
    expect(exact.parts.summary).toBe('I found the vendor Parts for Truck Inc.');
    expect(exact.text).not.toContain('PARTS FOR TRUCK INC');
  });

  it('preview the first N rows over the columns they all share, in the first row’s order', () => {
    const rows = vendors(8);
    rows[1] = { ...rows[1], status: 'active' }; // only in one row: not a common column
    rows[2] = { city: 'Red Deer', vendor_name: 'Vendor 3', vendor_id: 3 }; // other key order
    const reply = compose(envelope({ type: 'success', rows, total_rows: 30 }), {
      config: { tablePreviewLimit: 3 },
    });
    expect(reply.parts.table).toEqual({
      keys: ['vendor_id', 'vendor_name', 'city'],
      columns: ['Vendor ID', 'Vendor name', 'City'],
      rows: [
        ['1', 'Vendor 1', 'Calgary'],
        ['2', 'Vendor 2', 'Edmonton'],
        ['3', 'Vendor 3', 'Red Deer'],
      ],
      shown: 3,
      total: 30,
    });
    expect(reply.parts.summary).toBe('I found 30 vendors matching “Acme Parts”.');
    expect(reply.text).toBe(
      [
        'I found 30 vendors matching “Acme Parts”.',
        '',
        '```',
        'Vendor ID  Vendor name  City',
        '---------  -----------  --------',
        '        1  Vendor 1     Calgary',
        '        2  Vendor 2     Edmonton',
        '        3  Vendor 3     Red Deer',
        '```',
        'Showing 3 of 30.',
      ].join('\n'),
    );
  });

  it('default to AI_RESPONSE_TABLE_PREVIEW_LIMIT=5 and say nothing about more when all rows show', () => {
    expect(compose(envelope({ type: 'success', rows: vendors(9) })).parts.table?.shown).toBe(5);
    expect(compose(envelope({ type: 'success', rows: vendors(9) })).text).toContain('Showing 5 of 9.');
    expect(compose(envelope({ type: 'success', rows: vendors(3) })).text).not.toContain('Showing');
  });

  it('format numbers, dates, booleans and nulls, and clip long cells', () => {
    const reply = compose(
      envelope({
        type: 'success',
        query: { entity_type: 'purchase_order', filters: [{ field: 'status', value: 'open' }] },
        rows: [
          {
            purchase_number: 'PO-1001',
            vendor_id: 12345,
            total_amount: 1234.5,
            quantity: 25000,
            order_date: '2024-03-01T00:00:00.000Z',
            shipped_at: '2024-03-02T14:05:00Z',
            urgent: true,
            notes: null,
            description: `Brake pads ${'and more '.repeat(20)}`,
          },
          {
            purchase_number: 'PO-1002',
            vendor_id: 7,
            total_amount: 80,
            quantity: 1,
            order_date: new Date(Date.UTC(2024, 3, 5)),
            shipped_at: null,
            urgent: false,
            notes: 'line one\nline two',
            description: 'Filters',
          },
        ],
      }),
    );
    const [first, second] = reply.parts.table?.rows ?? [];
    expect(first?.slice(0, 8)).toEqual([
      'PO-1001',
      '12345',
      '1,234.50',
      '25,000',
      '2024-03-01',
      '2024-03-02 14:05 UTC',
      'yes',
      '—',
    ]);
    expect(second?.slice(0, 8)).toEqual([
      'PO-1002',
      '7',
      '80.00',
      '1',
      '2024-04-05',
      '—',
      'no',
      'line one line two',
    ]);
    expect([...(first?.[8] ?? '')].length).toBeLessThanOrEqual(40);
    expect(first?.[8]).toMatch(/…$/u);
    expect(reply.parts.summary).toBe('I found 2 purchase orders with status “open”.');
  });

  it('read a single record as a sentence, then list its fields', () => {
    const reply = compose(
      envelope({
        type: 'success',
        query: { entity_type: 'purchase_order', order_number: 'po-1001' },
        rows: [{ purchase_order_id: 3, purchase_number: 'PO-1001', status: 'open', total_amount: 99.5 }],
        total_rows: 1,
      }),
    );
    expect(reply.text).toBe(
      [
        'Purchase order PO-1001 — status open, total amount 99.50',
        '',
        '- Purchase order ID: 3',
        '- Purchase number: PO-1001',
        '- Status: open',
        '- Total amount: 99.50',
      ].join('\n'),
    );
  });
});

// --- Disambiguation ----------------------------------------------------------------------------

describe('disambiguation replies', () => {
  it('number at most AI_RESPONSE_DISAMBIG_LIMIT options and say how many more exist', () => {
    const reply = compose(
      envelope({
        type: 'disambiguation',
        query: { entity_type: 'vendor', entity_name: 'Parts' },
        candidates: candidates(7),
      }),
    );
    expect(reply.parts.choices?.map((c) => c.number)).toEqual([1, 2, 3, 4, 5]);
    expect(reply.parts.choicesTotal).toBe(7);
    expect(reply.parts.prompt).toBe('Reply with a number, or the exact name.');
    expect(reply.text).toBe(
      [
        'I found 7 vendors matching “Parts” — which one did you mean?',
        '',
        '1. Parts 1 — Calgary',
        '2. Parts 2 — Calgary',
        '3. Parts 3 — Calgary',
        '4. Parts 4 — Calgary',
        '5. Parts 5 — Calgary',
        "(2 more not shown; if yours isn't listed, give me a longer or more specific name.)",
        '',
        'Reply with a number, or the exact name.',
      ].join('\n'),
    );
    expect(reply.telemetry.candidates_count).toBe(7);
  });

  it('count candidates beyond those sent from candidates_total', () => {
    const reply = compose(
      envelope({ type: 'disambiguation', candidates: candidates(2), candidates_total: 12 }),
    );
    expect(reply.parts.choices).toHaveLength(2);
    expect(reply.parts.choicesTotal).toBe(12);
    expect(reply.parts.summary).toContain('I found 12 vendors');
    expect(reply.text).toContain('(10 more not shown;');
    expect(compose(envelope({ type: 'disambiguation', candidates: candidates(2) })).text).not.toContain(
      'more not shown',
    );
  });

  it('show light context (several fields, labelled when needed) and the id when names repeat', () => {
    const reply = compose(
      envelope({
        type: 'disambiguation',
        candidates: [
          { id: 1, display_name: 'Acme', city: 'Calgary', status: 'active', contact_person: 'Jo Lee' },
          { id: 2, display_name: 'Acme', city: 'Calgary', status: 'inactive' },
          { id: 3, display_name: 'Acme West' },
        ],
      }),
    );
    expect(reply.parts.choices?.map((c) => c.context)).toEqual([
      'Calgary, status active, contact Jo Lee, ID 1',
      'Calgary, status inactive, ID 2',
      '',
    ]);
    expect(reply.text).toContain('\n3. Acme West\n');
  });
});

// --- Empty -------------------------------------------------------------------------------------

describe('empty replies', () => {
  it.each([
    [attempts(true, false, false), ['Tried exact match.']],
    [attempts(false, true, false), ['Also tried a partial (fuzzy) match.']],
    [attempts(false, false, true), ['Refreshed schema and retried.']],
    [
      attempts(true, true, true),
      ['Tried exact match.', 'Also tried a partial (fuzzy) match.', 'Refreshed schema and retried.'],
    ],
  ])('list what was tried, one line per true flag (%o)', (tried, lines) => {
    const reply = compose(envelope({ type: 'empty', attempts: tried }));
    expect(reply.parts.whatITried).toEqual(lines);
    expect(reply.text.endsWith(['What I tried:', ...lines.map((l) => `- ${l}`)].join('\n'))).toBe(true);
  });

  it('leave out "What I tried" when nothing was tried', () => {
    const reply = compose(envelope({ type: 'empty', attempts: attempts(false, false, false) }));
    expect(reply.parts.whatITried).toBeUndefined();
    expect(reply.text).not.toContain('What I tried');
  });

  it('recommend a longer or more specific name when no fuzzy match ran', () => {
    const noFuzzy = compose(
      envelope({
        type: 'empty',
        query: { entity_type: 'vendor', entity_name: 'Ac' },
        attempts: attempts(true, false, false),
      }),
    );
    expect(noFuzzy.parts.nextSteps?.[0]).toBe('Try a longer or more specific name than “Ac”.');
    const fuzzy = compose(envelope({ type: 'empty', attempts: attempts(true, true, false) }));
    expect(fuzzy.text).not.toContain('longer or more specific');
  });

  it('count an empty result after a fuzzy attempt', () => {
    expect(compose(envelope({ type: 'empty', attempts: attempts(true, true, false) })).counters).toEqual([
      'empty_with_fuzzy_attempted',
    ]);
    expect(compose(envelope({ type: 'empty', attempts: attempts(true, false, false) })).counters).toEqual([]);
    expect(
      compose(envelope({ type: 'success', rows: vendors(1), attempts: attempts(true, true, false) }))
        .counters,
    ).toEqual([]);
  });

  it.each([
    ['vendor', 'AGENT_CAN_CREATE_VENDOR', 'Vendors → Add New'],
    ['customer', 'AGENT_CAN_CREATE_CUSTOMER', 'Customers → Add New'],
    ['part', 'AGENT_CAN_CREATE_PART', 'Parts → Add New'],
  ])('offer to create a %s when %s is true, else point to %s', (type, variable, path) => {
    const missing = envelope({ type: 'empty', query: { entity_type: type, entity_name: 'Acme Parts' } });
    const allowed = compose(missing, { env: { [variable]: 'true' } });
    expect(allowed.parts.nextSteps).toContain(
      `Want me to create the ${type} “Acme Parts”? Say “create ${type} Acme Parts”.`,
    );
    expect(allowed.text).not.toContain('Add New');
    const manual = compose(missing, { env: { [variable]: 'false' } });
    expect(manual.parts.nextSteps).toContain(`If “Acme Parts” is a new ${type}, add it in ${path}.`);
    expect(manual.text).not.toContain('Want me to create');
    // Another type's capability does not leak.
    const other = compose(missing, {
      env: { AGENT_CAN_CREATE_VENDOR: type === 'vendor' ? 'false' : 'true' },
    });
    expect(other.text).toContain(path);
  });

  it('give purchase orders (no capability) search advice, never an offer to create', () => {
    const reply = compose(
      envelope({
        type: 'empty',
        query: { entity_type: 'purchase_order', order_number: 'PO-1001' },
        attempts: attempts(true, false, false),
      }),
      { config: { canCreateVendor: true, canCreateCustomer: true, canCreatePart: true } },
    );
    expect(reply.text).toBe(
      [
        "I couldn't find purchase order PO-1001.",
        '',
        'Next steps:',
        '- Double-check the order number “PO-1001”.',
        '- Or search by vendor or status instead (for example, “open purchase orders for <vendor name>”).',
        '',
        'What I tried:',
        '- Tried exact match.',
      ].join('\n'),
    );
    expect(reply.telemetry.provided_next_steps).toBe(true);
  });

  it('describe filter-only and identifier lookups', () => {
    expect(
      compose(
        envelope({
          type: 'empty',
          query: { entity_type: 'customer', filters: [{ field: 'city', value: 'Banff' }] },
        }),
      ).parts.summary,
    ).toBe("I couldn't find any customers with city “Banff”.");
    expect(
      compose(envelope({ type: 'empty', query: { entity_type: 'part', part_identifier: 'BP-9' } })).parts
        .summary,
    ).toBe("I couldn't find a part with part identifier “BP-9”.");
  });
});

// --- Errors ------------------------------------------------------------------------------------

describe('error replies', () => {
  const failed = (
    code: string,
    extra: Partial<{ retryable: boolean; message: string }> = {},
    refreshed = false,
  ) =>
    compose(
      envelope({
        type: 'error',
        attempts: attempts(true, false, refreshed),
        error: {
          code,
          message: extra.message ?? 'Something failed',
          ...(extra.retryable === undefined ? {} : { retryable: extra.retryable }),
        },
      }),
    );

  it('report permissions problems and whom to ask', () => {
    for (const code of ['PERMISSION_DENIED', 'access-denied', 'FORBIDDEN', '42501']) {
      const reply = failed(code);
      expect(reply.parts.errorCategory, code).toBe('permissions');
      expect(reply.parts.summary).toBe("You don't have access to vendors, so I couldn't look that up.");
      expect(reply.parts.nextSteps).toEqual(['Ask your administrator to grant you read access to vendors.']);
    }
  });

  it('report a schema change, saying whether a refresh and retry happened', () => {
    const refreshed = failed('SCHEMA_MISMATCH', {}, true);
    expect(refreshed.parts.errorCategory).toBe('schema');
    expect(refreshed.parts.summary).toBe(
      "The database layout has changed: I refreshed my view of it and retried, but still couldn't look up vendors.",
    );
    expect(refreshed.parts.nextSteps).toEqual([
      'The vendor lookup needs updating for the new layout: tell your administrator (error code SCHEMA_MISMATCH).',
    ]);
    const notRefreshed = failed('SCHEMA_MISMATCH', {}, false);
    expect(notRefreshed.parts.summary).toBe(
      "The database layout seems to have changed, so I couldn't look up vendors (I didn't refresh and retry).",
    );
    const refreshFailed = failed('SCHEMA_REFRESH_FAILED');
    expect(refreshFailed.parts.errorCategory).toBe('schema');
    expect(refreshFailed.parts.summary).toContain('refreshing my view of it failed');
  });

  it('report other failures generically, with retry advice that follows retryable', () => {
    const retryable = failed('DATABASE_ERROR', { retryable: true });
    expect(retryable.parts.errorCategory).toBe('system');
    expect(retryable.parts.summary).toBe(
      "Something went wrong while looking up vendors, so I don't have an answer.",
    );
    expect(retryable.parts.nextSteps).toEqual([
      "It's probably temporary: try again in a minute.",
      'If it keeps happening, tell your administrator (error code DATABASE_ERROR).',
    ]);
    expect(failed('DATABASE_ERROR', { retryable: false }).parts.nextSteps).toEqual([
      "Trying again won't help: tell your administrator (error code DATABASE_ERROR).",
    ]);
    expect(failed('DATABASE_ERROR').parts.nextSteps?.[0]).toBe('Try again in a moment.');
    expect(failed('TIMEOUT').parts.nextSteps?.[0]).toBe("It's probably temporary: try again in a minute.");
    expect(failed('INVALID_INPUT').parts.summary).toBe(
      "I couldn't run that vendor lookup: the request was incomplete or not in a form the lookup accepts.",
    );
    expect(errorCategoryOf('whatever')).toBe('system');
  });

  it('never show the tool’s message or a free-text code (raw database text)', () => {
    const leaks = [
      ['SCHEMA_MISMATCH', 'relation "vendormaster" does not exist'],
      ['PERMISSION_DENIED', 'permission denied for table customers'],
      ['DATABASE_ERROR', 'duplicate key value violates unique constraint "vendors_pkey"'],
      ['relation "vendormaster" does not exist', 'relation "vendormaster" does not exist'],
    ] as const;
    for (const [code, message] of leaks) {
      const reply = failed(code, { message });
      expect(reply.text).not.toContain(message);
      expect(reply.text).not.toContain('vendormaster');
      expect(reply.text).not.toContain('customers_pkey');
      expect(JSON.stringify(reply)).not.toContain(message);
    }
  });
});

// --- Data is text, not markup --------------------------------------------------------------------

describe('text from a tool or a database', () => {
  // A mention that still pings: what a chat platform would turn into a notification.
  const live = /@(everyone|here)\b|<[@#][!&]?\d+>/iu;

  it('never carries a live mention, wherever it appears in the reply', () => {
    const hostile = '@everyone look <@123> <@!45> <@&678> in <#9> @here';
    const success = compose(
      envelope({
        type: 'success',
        query: { entity_type: 'vendor', entity_name: '@here Acme' },
        rows: [
          { vendor_name: hostile, '<@&1> @everyone': 'x' },
          { vendor_name: 'B', '<@&1> @everyone': '<@2>' },
        ],
      }),
    );
    const single = compose(envelope({ type: 'success', rows: [{ note: hostile }] }));
    const choices = compose(
      envelope({
        type: 'disambiguation',
        candidates: [
          { id: 1, display_name: '@everyone', city: '<@&5>' },
          { id: 2, display_name: 'Acme <@77>', city: '@here' },
        ],
      }),
    );
    const empty = compose(
      envelope({ type: 'empty', query: { entity_type: 'vendor', entity_name: '<@1> @everyone' } }),
    );
    for (const reply of [success, single, choices, empty]) {
      expect(reply.text).not.toMatch(live);
      expect(JSON.stringify(reply.parts.summary)).not.toMatch(live);
      for (const row of reply.parts.table?.rows ?? []) for (const cell of row) expect(cell).not.toMatch(live);
      for (const column of reply.parts.table?.columns ?? []) expect(column).not.toMatch(live);
      for (const c of reply.parts.choices ?? []) expect(`${c.label} ${c.context}`).not.toMatch(live);
    }
    // It still reads the same to a person.
    expect(single.text.replace(/\u200b/gu, '')).toContain('@everyone look <@123> <@!45>');
    expect(choices.parts.choices?.[0]?.label.replace(/\u200b/gu, '')).toBe('@everyone');
  });

  it('keeps a table aligned when a cell had a mention neutralised', () => {
    const reply = compose(
      envelope({
        type: 'success',
        rows: [
          { handle: '@here', n: 1 },
          { handle: 'plain', n: 22 },
        ],
      }),
    );
    const lines = reply.text.split('\n').filter((l) => /^(Handle|-|@|plain)/u.test(l));
    const widths = lines.map((l) => [...l.replace(/\u200b/gu, '')].length);
    expect(new Set(widths).size).toBe(1);
  });

  it('clips column names as well as values', () => {
    const longKey = `${'very_long_column_name_'.repeat(20)}end`;
    const reply = compose(
      envelope({
        type: 'success',
        rows: [
          { [longKey]: 'v1', id: 1 },
          { [longKey]: 'v2', id: 2 },
        ],
      }),
    );
    const column = reply.parts.table?.columns[0] ?? '';
    expect(column.length).toBeLessThanOrEqual(40);
    expect(column.endsWith('…')).toBe(true);
    expect(reply.parts.table?.keys[0]).toBe(longKey);
    for (const line of reply.text.split('\n')) expect(line.length).toBeLessThan(120);
    const single = compose(envelope({ type: 'success', rows: [{ [longKey]: 'v' }] }));
    expect(single.text.length).toBeLessThan(200);
  });
});

// --- Telemetry ---------------------------------------------------------------------------------

describe('telemetry', () => {
  it('is the seed’s record: mode, attempts, candidates count, whether next steps were offered', () => {
    const reply = compose(
      envelope({ type: 'disambiguation', candidates: candidates(3), attempts: attempts(true, true, false) }),
    );
    expect(reply.telemetry).toStrictEqual({
      response_mode: 'disambiguation',
      attempts: { exact: true, fuzzy: true, schema_refreshed: false },
      candidates_count: 3,
      provided_next_steps: false,
    });
    expect(compose(envelope({ type: 'empty' })).telemetry.provided_next_steps).toBe(true);
  });
});

// --- Malformed envelopes -----------------------------------------------------------------------

describe('malformed envelopes', () => {
  const circular: Record<string, unknown> = { type: 'success' };
  circular.self = circular;
  const hostile = Object.defineProperty({}, 'type', {
    enumerable: true,
    get() {
      throw new Error('boom');
    },
  });
  const shapes: [string, unknown][] = [
    ['undefined', undefined],
    ['null', null],
    ['a number', 42],
    ['a string', '{"type":"success"}'],
    ['an array', [1, 2, 3]],
    ['an empty object', {}],
    ['circular', circular],
    ['a getter that throws', hostile],
    ['an unknown type', { ...envelope({}), type: 'found' }],
    ['attempts missing', { type: 'empty', source: 'database', query: { entity_type: 'vendor' } }],
    ['rows not an array', { ...envelope({ type: 'success' }), rows: 'vendor_name=SECRET' }],
    ['a candidate without a name', { ...envelope({ type: 'disambiguation' }), candidates: [{ id: 1 }] }],
    ['an error without a code', { ...envelope({ type: 'error' }), error: { message: 'password=SECRET' } }],
  ];

  it.each(shapes)('%s: a clear error reply, no throw', (_name, input) => {
    let reply: ComposedReply | undefined;
    expect(() => {
      reply = compose(input);
    }).not.toThrow();
    if (!reply) throw new Error('no reply');
    expect(reply.text).toMatch(/^I couldn't read the lookup result \(.+\), so I don't have an answer\./u);
    expect(reply.text).not.toContain('SECRET');
    expect(reply.parts.severity).toBe('error');
    expect(reply.parts.errorCategory).toBe('system');
    expect(reply.telemetry.response_mode).toBe('error');
    expect(composeTelemetrySchema.safeParse(reply.telemetry).success).toBe(true);
    expect(reply.counters.length).toBe(1);
  });

  it('name the first problems and how many more', () => {
    const reply = compose({ type: 'nope', attempts: { exact: 1 } });
    expect(reply.parts.summary).toBe(
      "I couldn't read the lookup result (type should be one of success, disambiguation, empty, error; source should be one of database, doc, action; query is missing; and 3 more problems), so I don't have an answer.",
    );
    expect(reply.counters).toEqual(['envelope_invalid']);
  });

  it('keep well-formed attempts in the telemetry of a bad envelope', () => {
    expect(compose({ type: 'bad', attempts: attempts(true, true, false) }).telemetry.attempts).toEqual(
      attempts(true, true, false),
    );
  });
});

// --- Properties --------------------------------------------------------------------------------

describe('compose (property)', () => {
  const checkReply = (reply: ComposedReply) => {
    expect(reply.text.trim().length).toBeGreaterThan(0);
    expect(composeTelemetrySchema.safeParse(reply.telemetry).success).toBe(true);
    expect(reply.telemetry.provided_next_steps).toBe((reply.parts.nextSteps?.length ?? 0) > 0);
  };

  it('never throws on arbitrary JSON and always returns text and a valid telemetry record', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        checkReply(compose(value));
      }),
      { numRuns: fuzzRuns(300) },
    );
  });

  it('answers every well-formed envelope in its own mode', () => {
    const text = fc.string({ maxLength: 30 });
    const anyEnvelope = fc.record(
      {
        type: fc.constantFrom('success', 'disambiguation', 'empty', 'error'),
        source: fc.constantFrom('database', 'doc', 'action'),
        query: fc.record(
          {
            entity_type: fc.oneof(
              fc.constantFrom('vendor', 'customer', 'part', 'purchase_order', 'po'),
              text,
            ),
            entity_name: text,
            order_number: text,
            filters: fc.array(
              fc.record({
                field: text,
                value: fc.oneof(text, fc.integer(), fc.boolean(), fc.constant(null)),
              }),
            ),
          },
          { requiredKeys: ['entity_type'] },
        ),
        rows: fc.array(fc.dictionary(text, fc.jsonValue({ maxDepth: 2 })), { minLength: 1, maxLength: 8 }),
        total_rows: fc.nat(100),
        candidates: fc.array(fc.record({ id: fc.oneof(fc.nat(), text), display_name: text, city: text }), {
          minLength: 1,
          maxLength: 8,
        }),
        candidates_total: fc.nat(100),
        match: fc.constantFrom('exact', 'fuzzy'),
        attempts: fc.record({ exact: fc.boolean(), fuzzy: fc.boolean(), schema_refreshed: fc.boolean() }),
        error: fc.record({
          code: fc.oneof(
            fc.constantFrom('PERMISSION_DENIED', 'SCHEMA_MISMATCH', 'TIMEOUT'),
            text.filter((s) => s.length > 0),
          ),
          message: text.map((t) => `DBTEXT<${t}>`),
          retryable: fc.boolean(),
        }),
      },
      { requiredKeys: ['type', 'source', 'query', 'rows', 'candidates', 'attempts', 'error'] },
    );
    fc.assert(
      fc.property(
        anyEnvelope,
        fc.integer({ min: 1, max: 10 }),
        fc.integer({ min: 1, max: 10 }),
        (input, d, t) => {
          const reply = compose(input, { config: { disambiguationLimit: d, tablePreviewLimit: t } });
          checkReply(reply);
          expect(reply.telemetry.response_mode).toBe(input.type);
          expect(reply.counters).not.toContain('envelope_invalid');
          expect(reply.counters).not.toContain('compose_failed');
          if (reply.parts.choices) expect(reply.parts.choices.length).toBeLessThanOrEqual(d);
          if (reply.parts.table) expect(reply.parts.table.shown).toBeLessThanOrEqual(t);
          expect(reply.text).not.toContain('DBTEXT');
        },
      ),
      { numRuns: fuzzRuns(300) },
    );
  });
});
