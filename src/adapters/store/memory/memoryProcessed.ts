import type { ProcessedIds } from '../../../ports/store.js';
import { checkNumber } from '../jsonValue.js';
import { ensureOpen, type MemoryState } from './memoryState.js';

export class MemoryProcessed implements ProcessedIds {
  private readonly scopes = new Map<string, Set<string>>();

  constructor(private readonly state: MemoryState) {}

  async markProcessed(scope: string, id: string, at: number): Promise<boolean> {
    ensureOpen(this.state);
    checkNumber(at, 'at', `processed id "${scope}/${id}"`);
    const ids = this.scopes.get(scope) ?? new Set<string>();
    this.scopes.set(scope, ids);
    if (ids.has(id)) return false;
    ids.add(id);
    return true;
  }

  async isProcessed(scope: string, id: string): Promise<boolean> {
    ensureOpen(this.state);
    return this.scopes.get(scope)?.has(id) ?? false;
  }
}
