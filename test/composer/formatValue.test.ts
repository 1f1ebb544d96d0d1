/**
 * How the composer writes database values and column names, rule by rule (the composer's own
 * tests see these only through whole replies).
 */
import { describe, expect, it } from 'vitest';
import {
  formatValue,
  humanizeKey,
  labelInSentence,
  maxColumnChars,
  missingValue,
  quoteable,
} from '../../src/composer/formatValue.js';
import { buildTablePreview, renderTableLines } from '../../src/composer/tablePreview.js';

describe('column names', () => {
  it('read as words, with known acronyms in capitals', () => {
    expect(humanizeKey('vendor_id')).toBe('Vendor ID');
    expect(humanizeKey('telephoneNumber')).toBe('Telephone number');
    expect(humanizeKey('po_number')).toBe('PO number');
    expect(humanizeKey('sku')).toBe('SKU');
    expect(humanizeKey('image_url')).toBe('Image URL');
    expect(humanizeKey('vat-rate')).toBe('VAT rate');
    expect(humanizeKey('uom')).toBe('UOM');
    expect(humanizeKey('SHOUTING_NAME')).toBe('Shouting name');
    expect(humanizeKey('   ')).toBe(missingValue);
    expect(humanizeKey('a\tb')).toBe('A b');
  });

  it('are clipped like values', () => {
    const long = humanizeKey('word_'.repeat(30));
    expect(long.length).toBeLessThanOrEqual(maxColumnChars);
    expect(long.endsWith('…')).toBe(true);
    expect(humanizeKey('word_'.repeat(30), 12).length).toBeLessThanOrEqual(12);
  });

  it('read inside a sentence in lower case, acronyms kept', () => {
    expect(labelInSentence('order_date')).toBe('order date');
    expect(labelInSentence('vendor_id')).toBe('vendor ID');
    expect(labelInSentence('po_number')).toBe('PO number');
    expect(labelInSentence('id')).toBe('ID');
  });
});

describe('values', () => {
  it('write absent values as a dash, booleans as yes and no, big integers as they are', () => {
    expect(formatValue('x', null)).toBe(missingValue);
    expect(formatValue('x', undefined)).toBe(missingValue);
    expect(formatValue('x', '')).toBe(missingValue);
    expect(formatValue('x', true)).toBe('yes');
    expect(formatValue('x', false)).toBe('no');
    expect(formatValue('x', 12345678901234567890n)).toBe('12345678901234567890');
    expect(formatValue('x', Symbol('s'))).toBe(missingValue);
  });

  it('group amounts but not identifiers, codes, years or phone numbers', () => {
    expect(formatValue('amount', 1234567)).toBe('1,234,567');
    expect(formatValue('amount', 1234.5)).toBe('1,234.50');
    expect(formatValue('amount', 1234, 80, { fixedDecimals: true })).toBe('1,234.00');
    for (const key of [
      'vendor_id',
      'vendorId',
      'order_number',
      'orderNumber',
      'zip',
      'year',
      'phone',
      'part_no',
      'code',
    ])
      expect(formatValue(key, 20251234), key).toBe('20251234');
    expect(formatValue('vendor_id', 42, 80, { fixedDecimals: true })).toBe('42');
    expect(formatValue('amount', Number.POSITIVE_INFINITY)).toBe('Infinity');
    // Only a whole word at the end makes an identifier.
    for (const key of ['code_total', 'vendorIdeal', 'totalNumberOfUnits', 'identity_score'])
      expect(formatValue(key, 1234567), key).toBe('1,234,567');
  });

  it('write dates without a midnight time, other times with their zone', () => {
    expect(formatValue('d', '2025-03-01T00:00:00Z')).toBe('2025-03-01');
    expect(formatValue('d', '2025-03-01T00:00:00.000+00:00')).toBe('2025-03-01');
    expect(formatValue('d', '2025-03-01 00:00')).toBe('2025-03-01');
    expect(formatValue('d', '2025-03-01T00:00:00+02:00')).toBe('2025-03-01 00:00 +02:00');
    expect(formatValue('d', '2025-03-01T14:30:05Z')).toBe('2025-03-01 14:30 UTC');
    expect(formatValue('d', '2025-03-01T14:30')).toBe('2025-03-01 14:30');
    expect(formatValue('d', '2025-03-01T00:00:30Z')).toBe('2025-03-01 00:00 UTC');
    expect(formatValue('d', new Date('2025-03-01T00:00:00Z'))).toBe('2025-03-01');
    expect(formatValue('d', new Date(Number.NaN))).toBe(missingValue);
    expect(formatValue('d', '2025-03-01T00:00:00+0000')).toBe('2025-03-01');
    expect(formatValue('d', '2025-03-01T00:00:00-00')).toBe('2025-03-01');
    expect(formatValue('d', '2025-03-01T00:00:00+00:30')).toBe('2025-03-01 00:00 +00:30');
    expect(formatValue('d', '2025-03-01T00:00:00+0030')).toBe('2025-03-01 00:00 +0030');
    expect(formatValue('d', '2025-03-01T10:00:00+05')).toBe('2025-03-01 10:00 +05');
    expect(formatValue('d', ' 2025-03-01T10:00:00Z ')).toBe('2025-03-01 10:00 UTC');
    // Not a timestamp on its own: left as text.
    expect(formatValue('d', 'due 2025-03-01T10:00:00Z')).toBe('due 2025-03-01T10:00:00Z');
    expect(formatValue('d', '2025-03-01T10:00:00Z or later')).toBe('2025-03-01T10:00:00Z or later');
  });

  it('flatten nested values one level deep, on one line', () => {
    expect(formatValue('tags', ['a', 'b', 3])).toBe('a, b, 3');
    expect(formatValue('tags', [['deep'], 'x'])).toBe('…, x');
    expect(formatValue('contact', { first_name: 'Mira', phone: 5550100 })).toBe(
      'First name: Mira, Phone: 5550100',
    );
    expect(formatValue('contact', { inner: { deep: 1 } })).toBe('Inner: …');
    expect(formatValue('note', 'two\nlines\t here ')).toBe('two lines here');
  });

  it('clip at a word boundary with an ellipsis', () => {
    const clipped = formatValue('note', 'alpha beta gamma delta epsilon', 16);
    expect(clipped.length).toBeLessThanOrEqual(16);
    expect(clipped.endsWith('…')).toBe(true);
    expect(formatValue('note', 'abcdef', 1).length).toBeLessThanOrEqual(2);
  });

  it('quote back what a user typed on one line, without quotes, clipped', () => {
    expect(quoteable('  “Acme”\n"Parts" ')).toBe('Acme Parts');
    expect(quoteable('x'.repeat(100)).length).toBeLessThanOrEqual(60);
    expect(quoteable('x'.repeat(100), 10).length).toBeLessThanOrEqual(10);
  });
});

describe('table preview', () => {
  it('keeps the columns every shown row has, in the first row’s order, and at least one row', () => {
    const table = buildTablePreview(
      [
        { b: 1, a: 'x', only_first: true },
        { a: 'y', b: 2.5 },
      ],
      1,
      0,
    );
    expect(table.keys).toEqual(['b', 'a', 'only_first']);
    expect(table.shown).toBe(1);
    expect(table.total).toBe(2);
    const two = buildTablePreview(
      [
        { b: 1, a: 'x', only_first: true },
        { a: 'y', b: 2.5 },
      ],
      2,
      5,
    );
    expect(two.keys).toEqual(['b', 'a']);
    // A column with any fraction shows every number with two decimals.
    expect(two.rows).toEqual([
      ['1.00', 'x'],
      ['2.50', 'y'],
    ]);
  });

  it('right-aligns numeric columns, pads the rest, and turns backticks into apostrophes', () => {
    const lines = renderTableLines({
      keys: ['n', 's'],
      columns: ['N', 'S`s'],
      rows: [
        ['1', 'a`b'],
        ['1,000', missingValue],
      ],
      shown: 2,
      total: 2,
    });
    expect(lines).toEqual(["    N  S's", '-----  ---', "    1  a'b", '1,000  —']);
  });
});

describe('neutralizeParts', () => {
  it('neutralises every reader-facing part and adds no part that was not there', async () => {
    const { neutralizeParts } = await import('../../src/composer/neutralizeParts.js');
    const ping = '@everyone <@1>';
    const safe = '@\u200beveryone <\u200b@1>';
    expect(
      neutralizeParts({
        summary: ping,
        prompt: ping,
        whatITried: [ping],
        nextSteps: [ping],
        choices: [{ number: 1, id: 1, label: ping, context: ping }],
        table: { keys: [ping], columns: [ping], rows: [[ping]], shown: 1, total: 1 },
        severity: 'info',
      }),
    ).toStrictEqual({
      summary: safe,
      prompt: safe,
      whatITried: [safe],
      nextSteps: [safe],
      choices: [{ number: 1, id: 1, label: safe, context: safe }],
      table: { keys: [ping], columns: [safe], rows: [[safe]], shown: 1, total: 1 },
      severity: 'info',
    });
    expect(neutralizeParts({ summary: 'plain', severity: 'error' })).toStrictEqual({
      summary: 'plain',
      severity: 'error',
    });
  });
});
