import type { EventLog, LoggedEvent } from '../../../ports/store.js';
import { checkIncrement, checkNumber, decodeJson, encodeJson } from '../jsonValue.js';
import { limitOf, type SqliteConnection } from './sqliteConnection.js';

export class SqliteEvents implements EventLog {
  constructor(private readonly c: SqliteConnection) {}

  async append(stream: string, data: Record<string, unknown>, at: number): Promise<void> {
    const json = encodeJson(data, `event of stream "${stream}"`);
    checkNumber(at, 'at', `event of stream "${stream}"`);
    return this.c.write('events.append', () => {
      this.c.change('INSERT INTO events (stream, at, data) VALUES (?, ?, ?)', stream, at, json);
    });
  }

  async read(stream: string, options: { afterSeq?: number; limit?: number } = {}): Promise<LoggedEvent[]> {
    return this.c.read('events.read', () =>
      this.c
        .all(
          'SELECT seq, at, data FROM events WHERE stream = ? AND seq > ? ORDER BY seq LIMIT ?',
          stream,
          options.afterSeq ?? 0,
          limitOf(options.limit),
        )
        .map((row) => ({
          seq: Number(row.seq),
          stream,
          at: Number(row.at),
          data: decodeJson<Record<string, unknown>>(
            row.data,
            `event ${String(row.seq)} of stream "${stream}"`,
          ),
        })),
    );
  }

  async increment(counter: string, by = 1): Promise<number> {
    checkIncrement(counter, by);
    return this.c.write('events.increment', () =>
      Number(
        this.c.get(
          `INSERT INTO counters (name, value) VALUES (?, ?)
            ON CONFLICT (name) DO UPDATE SET value = counters.value + excluded.value RETURNING value`,
          counter,
          by,
        )?.value,
      ),
    );
  }

  async counter(counter: string): Promise<number> {
    return this.c.read('events.counter', () =>
      Number(this.c.get('SELECT value FROM counters WHERE name = ?', counter)?.value ?? 0),
    );
  }
}
