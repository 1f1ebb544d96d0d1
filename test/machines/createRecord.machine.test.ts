import { describe, expect, it } from 'vitest';
import { createMachineStepper } from '../../src/engine/machineStepper.js';
import { createRecordMachine } from '../../src/machines/createRecord.machine.js';
import { columnNamed, createIntent, readCreateReply } from '../../src/textRules/createReply.js';

const stepper = createMachineStepper(createRecordMachine);
const start = (required: string[], values: Record<string, string> = { vendor_name: 'Acme' }) =>
  stepper.initial({ entityType: 'vendor', values, required, at: 0, ttlMs: 1000 });

describe('the create record machine', () => {
  it('asks each required field in order, then confirms; a correction stays in confirming', () => {
    let s = start(['vendor_name', 'city', 'code']);
    expect(s.value).toBe('asking');
    expect(s.context.missing).toEqual(['city', 'code']);
    s = stepper.step(s, { type: 'create.answer', at: 1, text: '  ' });
    expect(s.context.missing).toEqual(['city', 'code']);
    s = stepper.step(s, { type: 'create.answer', at: 2, text: 'Calgary' });
    s = stepper.step(s, { type: 'create.answer', at: 3, text: 'A1' });
    expect(s.value).toBe('confirming');
    s = stepper.step(s, { type: 'create.correct', at: 4, column: 'city', value: 'Banff' });
    expect(s.value).toBe('confirming');
    expect(s.context.values).toEqual({ vendor_name: 'Acme', city: 'Banff', code: 'A1' });
    s = stepper.step(s, { type: 'create.confirm', at: 5 });
    expect(s.value).toBe('inserting');
    expect(stepper.step(s, { type: 'create.inserted', at: 6 }).value).toBe('created');
  });

  it('starts confirming when nothing is missing; no cancels; the deadline expires it', () => {
    expect(start(['vendor_name']).value).toBe('confirming');
    expect(stepper.step(start(['vendor_name']), { type: 'create.cancel', at: 1 }).value).toBe('cancelled');
    expect(stepper.step(start(['vendor_name']), { type: 'create.confirm', at: 1000 }).value).toBe('expired');
    expect(stepper.step(start(['vendor_name', 'city']), { type: 'create.tick', at: 1000 }).value).toBe(
      'expired',
    );
  });
});

describe('reading create requests and replies', () => {
  it('recognises the composer offer and close variants, and nothing else', () => {
    expect(createIntent('create vendor Acme Widgets')).toEqual({
      entityType: 'vendor',
      name: 'Acme Widgets',
    });
    expect(createIntent('Add a new customer called “Foo Bar”.')).toEqual({
      entityType: 'customer',
      name: 'Foo Bar',
    });
    expect(createIntent('create part Brake drum')).toEqual({ entityType: 'part', name: 'Brake drum' });
    expect(createIntent('I want to create something')).toBeUndefined();
    expect(createIntent('find vendor Acme')).toBeUndefined();
  });

  it('reads yes, no, a correction naming a column, or an answer', () => {
    const columns = ['vendor_name', 'city', 'contact_person', 'telephone_number', 'email'];
    expect(readCreateReply('Yes!', columns)).toEqual({ kind: 'yes' });
    expect(readCreateReply('cancel', columns)).toEqual({ kind: 'no' });
    expect(readCreateReply('phone is 555-0100', columns)).toEqual({
      kind: 'correction',
      column: 'telephone_number',
      value: '555-0100',
    });
    expect(readCreateReply('set city to Calgary', columns)).toEqual({
      kind: 'correction',
      column: 'city',
      value: 'Calgary',
    });
    expect(readCreateReply('Red Deer', columns)).toEqual({ kind: 'other', text: 'Red Deer' });
    expect(columnNamed('contact', columns)).toBe('contact_person');
    expect(columnNamed('colour', columns)).toBeUndefined();
  });
});
