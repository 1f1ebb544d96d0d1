import type { EventLog, LoggedEvent } from '../../../ports/store.js';
import { checkIncrement, checkNumber, decodeJson, encodeJson } from '../jsonValue.js';
import { kept } from './keptText.js';
import { ensureOpen, limitOf, type MemoryState } from './memoryState.js';

interface EventRow {
  seq: number;
  at: number;
  json: string;
}

export class MemoryEvents implements EventLog {
  private readonly streams = new Map<string, EventRow[]>();
  private readonly counters = new Map<string, number>();
  private seq = 0;

  constructor(private readonly state: MemoryState) {}

  async append(stream: string, data: Record<string, unknown>, at: number): Promise<void> {
    ensureOpen(this.state);
    const json = kept(encodeJson(data, `event of stream "${stream}"`));
    checkNumber(at, 'at', `event of stream "${stream}"`);
    const rows = this.streams.get(stream) ?? [];
    rows.push({ seq: ++this.seq, at, json });
    this.streams.set(stream, rows);
  }

  async read(stream: string, options: { afterSeq?: number; limit?: number } = {}): Promise<LoggedEvent[]> {
    ensureOpen(this.state);
    const rows = this.streams.get(stream) ?? [];
    const start = firstAfter(rows, options.afterSeq ?? 0);
    return rows.slice(start, start + limitOf(options.limit)).map((row) => ({
      seq: row.seq,
      stream,
      at: row.at,
      data: decodeJson<Record<string, unknown>>(row.json, `event ${row.seq} of stream "${stream}"`),
    }));
  }

  async increment(counter: string, by = 1): Promise<number> {
    ensureOpen(this.state);
    checkIncrement(counter, by);
    const value = (this.counters.get(counter) ?? 0) + by;
    this.counters.set(counter, value);
    return value;
  }

  async counter(counter: string): Promise<number> {
    ensureOpen(this.state);
    return this.counters.get(counter) ?? 0;
  }
}

/** Index of the first row with `seq > afterSeq` (rows are in seq order). */
function firstAfter(rows: readonly EventRow[], afterSeq: number): number {
  let low = 0;
  let high = rows.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((rows[mid] as EventRow).seq <= afterSeq) low = mid + 1;
    else high = mid;
  }
  return low;
}
