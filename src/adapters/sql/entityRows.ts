import type { EnvelopeCandidate } from '../../composer/envelope.js';
import type { ResolvedEntity } from './entitySchema.js';
import { totalKey } from './entityStatements.js';

/** JSON-safe values: dates as ISO text, big integers as numbers (or text beyond 2^53). */
function plainValue(value: unknown): unknown {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (typeof value === 'bigint')
    return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER)
      ? Number(value)
      : value.toString();
  return value;
}

/** The rows a statement returned, JSON-safe, and how many matched in all. */
export interface Found {
  rows: Record<string, unknown>[];
  total: number;
}

export function found(rows: readonly unknown[]): Found {
  let total = rows.length;
  const plain = rows.map((raw) => {
    const row: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
      if (key === totalKey) total = Math.max(total, Number(value));
      else row[key] = plainValue(value);
    }
    return row;
  });
  return { rows: plain, total };
}

/** A row as a disambiguation candidate: id, display name and the context columns it has. */
export function candidateOf(entity: ResolvedEntity, row: Record<string, unknown>): EnvelopeCandidate {
  const id = row[entity.id.key];
  const display = row[entity.display.key];
  const candidate: EnvelopeCandidate = {
    id: typeof id === 'number' || typeof id === 'string' ? id : String(id),
    display_name: display == null ? String(id) : String(display),
  };
  for (const column of entity.context) {
    const value = row[column.key];
    if (column.key !== entity.id.key && column.key !== entity.display.key && value != null)
      candidate[column.key] = value;
  }
  return candidate;
}
