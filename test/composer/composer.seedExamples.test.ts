/**
 * The four envelope examples of seed 001 ("Envelope examples") compose to these replies, with the
 * default settings. The expected texts are the contract: change them only on purpose.
 */
import { describe, expect, it } from 'vitest';
import { compose, composeTelemetrySchema, parseEnvelope } from '../../src/composer/index.js';

const success = {
  type: 'success',
  source: 'database',
  query: { entity_type: 'vendor', entity_name: 'Parts for Truck Inc' },
  rows: [
    {
      vendor_id: 42,
      vendor_name: 'Parts for Truck Inc',
      contact_person: 'Mira Patel',
      telephone_number: '555-0100',
      email: 'sales@parts.com',
    },
  ],
  total_rows: 1,
  attempts: { exact: true, fuzzy: false, schema_refreshed: false },
};

const disambiguation = {
  type: 'disambiguation',
  source: 'database',
  query: { entity_type: 'vendor', entity_name: 'Parts' },
  candidates: [
    { id: 42, display_name: 'Parts for Truck Inc', city: 'Calgary' },
    { id: 77, display_name: 'Parts 4 Trucks Incorporated', city: 'Edmonton' },
  ],
  attempts: { exact: true, fuzzy: true, schema_refreshed: false },
};

const empty = {
  type: 'empty',
  source: 'database',
  query: { entity_type: 'vendor', entity_name: 'Acme Parts' },
  attempts: { exact: true, fuzzy: true, schema_refreshed: true },
};

const error = {
  type: 'error',
  source: 'database',
  query: { entity_type: 'vendor', entity_name: 'Parts' },
  attempts: { exact: true, fuzzy: false, schema_refreshed: false },
  error: { code: 'PERMISSION_DENIED', message: 'Blocked by row level security' },
};

describe('seed 001 envelope examples', () => {
  it('are all valid envelopes', () => {
    for (const envelope of [success, disambiguation, empty, error])
      expect(parseEnvelope(envelope).ok, envelope.type).toBe(true);
  });

  it('success: one vendor, named as stored, with its details', () => {
    const reply = compose(success);
    expect(reply.text).toBe(
      [
        'Parts for Truck Inc — contact Mira Patel, 555-0100, sales@parts.com',
        '',
        '- Vendor ID: 42',
        '- Vendor name: Parts for Truck Inc',
        '- Contact person: Mira Patel',
        '- Telephone number: 555-0100',
        '- Email: sales@parts.com',
      ].join('\n'),
    );
    expect(reply.parts).toEqual({
      summary: 'Parts for Truck Inc — contact Mira Patel, 555-0100, sales@parts.com',
      table: {
        keys: ['vendor_id', 'vendor_name', 'contact_person', 'telephone_number', 'email'],
        columns: ['Vendor ID', 'Vendor name', 'Contact person', 'Telephone number', 'Email'],
        rows: [['42', 'Parts for Truck Inc', 'Mira Patel', '555-0100', 'sales@parts.com']],
        shown: 1,
        total: 1,
      },
      severity: 'info',
    });
    expect(reply.telemetry).toEqual({
      response_mode: 'success',
      attempts: { exact: true, fuzzy: false, schema_refreshed: false },
      candidates_count: 0,
      provided_next_steps: false,
    });
    expect(reply.counters).toEqual([]);
  });

  it('disambiguation: numbered options with their city, and a prompt', () => {
    const reply = compose(disambiguation);
    expect(reply.text).toBe(
      [
        'I found 2 vendors matching “Parts” — which one did you mean?',
        '',
        '1. Parts for Truck Inc — Calgary',
        '2. Parts 4 Trucks Incorporated — Edmonton',
        '',
        'Reply with a number, or the exact name.',
      ].join('\n'),
    );
    expect(reply.parts.choices).toEqual([
      { number: 1, id: 42, label: 'Parts for Truck Inc', context: 'Calgary' },
      { number: 2, id: 77, label: 'Parts 4 Trucks Incorporated', context: 'Edmonton' },
    ]);
    expect(reply.parts.choicesTotal).toBe(2);
    expect(reply.telemetry).toEqual({
      response_mode: 'disambiguation',
      attempts: { exact: true, fuzzy: true, schema_refreshed: false },
      candidates_count: 2,
      provided_next_steps: false,
    });
    expect(reply.counters).toEqual([]);
  });

  it('empty: next steps (vendor creation off by default) and what I tried', () => {
    const reply = compose(empty);
    expect(reply.text).toBe(
      [
        "I couldn't find a vendor named “Acme Parts”.",
        '',
        'Next steps:',
        '- Check the spelling, or search by another detail such as the city or contact person.',
        '- If “Acme Parts” is a new vendor, add it in Vendors → Add New.',
        '',
        'What I tried:',
        '- Tried exact match.',
        '- Also tried a partial (fuzzy) match.',
        '- Refreshed schema and retried.',
      ].join('\n'),
    );
    expect(reply.parts.severity).toBe('warning');
    expect(reply.telemetry).toEqual({
      response_mode: 'empty',
      attempts: { exact: true, fuzzy: true, schema_refreshed: true },
      candidates_count: 0,
      provided_next_steps: true,
    });
    expect(reply.counters).toEqual(['empty_with_fuzzy_attempted']);
  });

  it('empty with AGENT_CAN_CREATE_VENDOR=true: offers to create the vendor', () => {
    const reply = compose(empty, { env: { AGENT_CAN_CREATE_VENDOR: 'true' } });
    expect(reply.parts.nextSteps).toEqual([
      'Check the spelling, or search by another detail such as the city or contact person.',
      'Want me to create the vendor “Acme Parts”? Say “create vendor Acme Parts”.',
    ]);
  });

  it('error: a permissions reply that says whom to ask, without the tool’s message', () => {
    const reply = compose(error);
    expect(reply.text).toBe(
      [
        "You don't have access to vendors, so I couldn't look that up.",
        '',
        'Next steps:',
        '- Ask your administrator to grant you read access to vendors.',
      ].join('\n'),
    );
    expect(reply.text).not.toContain('row level security');
    expect(reply.parts.severity).toBe('error');
    expect(reply.parts.errorCategory).toBe('permissions');
    expect(reply.telemetry).toEqual({
      response_mode: 'error',
      attempts: { exact: true, fuzzy: false, schema_refreshed: false },
      candidates_count: 0,
      provided_next_steps: true,
    });
  });

  it('every telemetry record has exactly the seed’s shape', () => {
    for (const envelope of [success, disambiguation, empty, error])
      expect(composeTelemetrySchema.safeParse(compose(envelope).telemetry).success).toBe(true);
  });
});
