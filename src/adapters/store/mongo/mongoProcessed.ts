import type { Collection } from 'mongodb';
import type { ProcessedIds } from '../../../ports/store.js';
import { checkNumber } from '../jsonValue.js';
import { type Context, checkName } from './mongoContext.js';
import { isDuplicateKey } from './mongoErrors.js';

interface ProcessedRow {
  scope: string;
  id: string;
  at: number;
}

/** Processed ids: a unique index on (scope, id) makes the first insert win across processes. */
export class MongoProcessed implements ProcessedIds {
  private readonly rows: Collection<ProcessedRow>;

  constructor(private readonly ctx: Context) {
    this.rows = ctx.collection<ProcessedRow>('processed');
  }

  async markProcessed(scope: string, id: string, at: number): Promise<boolean> {
    return this.ctx.run(`mark "${scope}/${id}" processed`, async () => {
      checkName('processed scope', scope);
      checkName('processed id', id);
      checkNumber(at, 'at', `processed id "${scope}/${id}"`);
      try {
        await this.rows.insertOne({ scope, id, at });
        return true;
      } catch (error) {
        if (isDuplicateKey(error)) return false;
        throw error;
      }
    });
  }

  async isProcessed(scope: string, id: string): Promise<boolean> {
    return this.ctx.run(`check whether "${scope}/${id}" was processed`, async () => {
      return (await this.rows.findOne({ scope, id }, { projection: { _id: 1 } })) !== null;
    });
  }
}
