/**
 * The compact table preview of a success reply: the first N rows, over the columns every one of
 * them has (in the first row's order), with formatted, clipped cells; and its monospace rendering.
 */
import type { ReplyTable } from './composedReply.js';
import { formatValue, humanizeKey, missingValue } from './formatValue.js';

/** Longest cell, in characters, before it is clipped with an ellipsis. */
export const maxCellChars = 40;

/**
 * The preview of `rows`: at most `limit` rows over the columns they all share.
 * @param total how many rows matched in all (at least `rows.length` is assumed)
 */
export function buildTablePreview(
  rows: readonly Readonly<Record<string, unknown>>[],
  total: number,
  limit: number,
): ReplyTable {
  const shownRows = rows.slice(0, Math.max(1, limit));
  const first = shownRows[0] ?? {};
  const keys = Object.keys(first).filter((key) => shownRows.every((row) => Object.hasOwn(row, key)));
  // A column holding any fractional number shows all its numbers with two decimals, so they line up.
  const decimal = new Set(
    keys.filter((key) =>
      shownRows.some((row) => typeof row[key] === 'number' && !Number.isInteger(row[key])),
    ),
  );
  return {
    keys,
    columns: keys.map((key) => humanizeKey(key)),
    rows: shownRows.map((row) =>
      keys.map((key) => formatValue(key, row[key], maxCellChars, { fixedDecimals: decimal.has(key) })),
    ),
    shown: shownRows.length,
    total: Math.max(total, rows.length, shownRows.length),
  };
}

// Zero-width characters (the mention breaker) take no column in a monospace block.
const width = (text: string) => [...text.replace(/[\u200b\u2060]/gu, '')].length;
const numeric = /^-?[\d,]+(?:\.\d+)?$/u;

/**
 * The table as aligned monospace lines (header, dashes, one line per row), meant for a code block:
 * numeric columns are right-aligned and backticks become apostrophes so the block cannot break.
 */
export function renderTableLines(table: ReplyTable): string[] {
  const safe = (text: string) => text.replace(/`/gu, "'");
  const header = table.columns.map(safe);
  const body = table.rows.map((row) => row.map(safe));
  const widths = header.map((h, i) => Math.max(width(h), ...body.map((row) => width(row[i] ?? ''))));
  const rightAligned = header.map((_, i) =>
    body.every((row) => {
      const cell = row[i] ?? '';
      return numeric.test(cell) || cell === missingValue;
    }),
  );
  const pad = (text: string, i: number) => {
    const gap = ' '.repeat(Math.max(0, (widths[i] ?? 0) - width(text)));
    return rightAligned[i] ? gap + text : text + gap;
  };
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => pad(cell, i))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)];
}
