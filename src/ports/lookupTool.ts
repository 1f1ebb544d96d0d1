import type { RecordCreator } from './recordCreator.js';

/**
 * The lookup tool as the runtime uses it: anything that turns a query into a tool result envelope
 * (the SQL entity lookup is one). The envelope is validated by the composer, not trusted here.
 */
export interface LookupTool {
  /**
   * True when a lookup never leaves the process and always ends (the embedded demo ERP);
   * otherwise it counts as external.
   */
  readonly local?: boolean;
  /** Creates records under the same database role, when the tool can ("create vendor Acme"). */
  readonly creator?: RecordCreator;
  lookup(input: {
    entity_type: string;
    entity_name?: string | undefined;
    order_number?: string | undefined;
    id?: string | number;
  }): Promise<unknown>;
}
