/**
 * How the composer writes database values and column names for people: nulls as a dash, yes/no
 * for booleans, grouped numbers (but identifiers as they are), ISO dates without midnight
 * timestamps, one line per value, long text clipped.
 */
import { clipText } from '../delivery/clipText.js';

/** What an absent value (null, undefined) is shown as. */
export const missingValue = '—';

const acronyms = new Map([
  ['id', 'ID'],
  ['po', 'PO'],
  ['sku', 'SKU'],
  ['url', 'URL'],
  ['vat', 'VAT'],
  ['uom', 'UOM'],
]);

/** Longest column name, in characters, before it is clipped (a column name is data too). */
export const maxColumnChars = 40;

/** `vendor_id` → `Vendor ID`, `telephoneNumber` → `Telephone number`; clipped to `maxChars`. */
export function humanizeKey(key: string, maxChars = maxColumnChars): string {
  return clipText(spellKey(key), Math.max(2, maxChars));
}

function spellKey(key: string): string {
  const words = key
    .replace(/([a-z0-9])([A-Z])/gu, '$1 $2')
    .split(/[\s_-]+/u)
    .filter((w) => w !== '')
    .map((w) => acronyms.get(w.toLowerCase()) ?? w.toLowerCase());
  const [first, ...rest] = words;
  if (first === undefined) return oneLine(key) || missingValue;
  return [first.charAt(0).toUpperCase() + first.slice(1), ...rest].join(' ');
}

/** A column name as it reads inside a sentence: `order_date` → `order date`, `vendor_id` → `vendor ID`. */
export function labelInSentence(key: string): string {
  const label = humanizeKey(key);
  return /^[A-Z]{2,}\b/u.test(label) ? label : label.charAt(0).toLowerCase() + label.slice(1);
}

/** Columns whose numbers are identifiers, codes or years: shown without digit grouping. */
function isIdentifierKey(key: string): boolean {
  return /(^|_)(id|number|no|num|code|zip|postcode|postal_code|year|phone|telephone)$|Id$|Number$/iu.test(
    key,
  );
}

const isoDateTime =
  /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}(?::?\d{2})?)?$/u;

function formatDateTime(date: string, time: string, seconds: string | undefined, zone: string | undefined) {
  const midnight = time === '00:00' && (seconds === undefined || seconds === '00');
  if (midnight && (zone === undefined || zone === 'Z' || /^[+-]00:?(00)?$/u.test(zone))) return date;
  const suffix = zone === undefined ? '' : zone === 'Z' ? ' UTC' : ` ${zone}`;
  return `${date} ${time}${suffix}`;
}

/** How to write values: `fixedDecimals` writes whole numbers with two decimals too (`2,469.00`). */
export interface FormatOptions {
  fixedDecimals?: boolean;
}

function formatNumber(key: string, n: number, options: FormatOptions): string {
  if (!Number.isFinite(n)) return String(n);
  if (Number.isInteger(n) && (options.fixedDecimals !== true || isIdentifierKey(key)))
    return isIdentifierKey(key) ? String(n) : n.toLocaleString('en-US');
  return n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
}

function oneLine(text: string): string {
  return text.replace(/\s+/gu, ' ').trim();
}

function raw(key: string, value: unknown, depth: number, options: FormatOptions): string {
  if (value === null || value === undefined) return missingValue;
  if (typeof value === 'string') {
    const match = isoDateTime.exec(value.trim());
    if (match?.[1] && match[2]) return formatDateTime(match[1], match[2], match[3], match[4]);
    return oneLine(value);
  }
  if (typeof value === 'number') return formatNumber(key, value, options);
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) return missingValue;
    return raw(key, value.toISOString(), depth, options);
  }
  if (Array.isArray(value)) {
    if (depth > 0) return '…';
    return value.map((v) => raw(key, v, depth + 1, options)).join(', ');
  }
  if (typeof value === 'object') {
    if (depth > 0) return '…';
    const entries = Object.entries(value as Record<string, unknown>);
    return entries.map(([k, v]) => `${humanizeKey(k)}: ${raw(k, v, depth + 1, options)}`).join(', ');
  }
  return missingValue;
}

/**
 * A value of column `key` as one line of readable text, clipped to `maxChars` at a word boundary.
 * Never throws, whatever the value.
 */
export function formatValue(key: string, value: unknown, maxChars = 80, options: FormatOptions = {}): string {
  const text = raw(key, value, 0, options);
  return clipText(text === '' ? missingValue : text, Math.max(2, maxChars));
}

/**
 * What a user typed, safe to quote back: one line, curly quotes removed, clipped. Empty when
 * nothing usable is left.
 */
export function quoteable(text: string, maxChars = 60): string {
  return clipText(oneLine(text.replace(/[“”"]/gu, '')), maxChars);
}
