/**
 * The tool result envelope an entity lookup returns (seed 001, "Tool result envelope").
 *
 * A local copy of the shape, kept structurally identical to the composer's schema so a lookup
 * result can be handed to `compose()` unchanged.
 */

/** What kind of answer the tool produced. */
export type ToolEnvelopeType = 'success' | 'disambiguation' | 'empty' | 'error';

/** One `{ field, value }` filter, as the tool applied it. */
export interface ToolQueryFilter {
  field: string;
  value: string | number | boolean;
}

/** The normalised inputs the tool used; extra keys are allowed. */
export interface ToolQuery {
  entity_type: string;
  entity_name?: string;
  order_number?: string;
  filters?: ToolQueryFilter[];
  [extra: string]: unknown;
}

/** One disambiguation option: an id, a human-friendly name and light context (city, status…). */
export interface ToolCandidate {
  id: string | number;
  display_name: string;
  [context: string]: unknown;
}

/** Which fallbacks the tool tried. */
export interface ToolAttempts {
  exact: boolean;
  fuzzy: boolean;
  schema_refreshed: boolean;
}

/** A stable code and a message safe to show a user (never raw database text). */
export interface ToolError {
  code: string;
  message: string;
  retryable?: boolean;
}

/** The envelope every read-only data tool returns. */
export interface ToolEnvelope {
  type: ToolEnvelopeType;
  source: 'database' | 'doc' | 'action';
  query: ToolQuery;
  rows?: Record<string, unknown>[];
  total_rows?: number;
  candidates?: ToolCandidate[];
  /** How many candidates matched in all, when more matched than `candidates` holds. */
  candidates_total?: number;
  /** Which step found the answer (success and disambiguation). */
  match?: 'exact' | 'fuzzy';
  attempts: ToolAttempts;
  error?: ToolError;
}
