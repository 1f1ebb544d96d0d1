import type { ProcessedIds } from '../../../ports/store.js';
import { checkNumber } from '../jsonValue.js';
import type { SqliteConnection } from './sqliteConnection.js';

export class SqliteProcessed implements ProcessedIds {
  constructor(private readonly c: SqliteConnection) {}

  async markProcessed(scope: string, id: string, at: number): Promise<boolean> {
    checkNumber(at, 'at', `processed id "${scope}/${id}"`);
    return this.c.write(
      'processed.markProcessed',
      () =>
        this.c.change(
          'INSERT INTO processed (scope, id, at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
          scope,
          id,
          at,
        ) > 0,
    );
  }

  async isProcessed(scope: string, id: string): Promise<boolean> {
    return this.c.read(
      'processed.isProcessed',
      () =>
        this.c.get('SELECT 1 AS found FROM processed WHERE scope = ? AND id = ?', scope, id) !== undefined,
    );
  }
}
