/**
 * The name a found record is stored under (its `vendor_name`, `part_description`,
 * `purchase_number`…). Replies name records by what the database holds, never by what the user
 * typed, which may be partial or misspelt.
 */
import type { EntityVocabulary } from './entityVocabulary.js';
import { formatValue } from './formatValue.js';

/** The stored name and the column it came from. */
export interface StoredName {
  column: string;
  name: string;
}

function usable(value: unknown): value is string | number {
  return (typeof value === 'string' && value.trim() !== '') || typeof value === 'number';
}

/**
 * The row's stored name: the first of the vocabulary's name columns that holds text or a number,
 * else the first `…_name` column that does. Undefined when the row has none.
 */
export function storedNameOf(
  row: Readonly<Record<string, unknown>>,
  vocabulary: EntityVocabulary,
): StoredName | undefined {
  const column =
    vocabulary.nameColumns.find((key) => Object.hasOwn(row, key) && usable(row[key])) ??
    Object.keys(row).find((key) => /_name$/u.test(key) && usable(row[key]));
  if (column === undefined) return undefined;
  return { column, name: formatValue(column, row[column], 80) };
}
