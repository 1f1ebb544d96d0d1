/**
 * What a create flow needs from a database: the fields a new record of a kind must have, and the
 * insert itself. Both answer with data or a tool result envelope; the composer validates it.
 */

/** The form of a new record: what must be given, and what may be set. */
export interface RecordForm {
  /** The canonical entity type (`vendor`). */
  entityType: string;
  /** Columns that are NOT NULL without a default (identity and generated columns excluded), in table order. */
  required: string[];
  /** Every column a value may be given for (identity and generated columns excluded), in table order. */
  columns: string[];
  /** The column that holds the record's name (where "create vendor Acme" puts "Acme"), if any. */
  nameColumn: string | undefined;
}

/** The form, or an error envelope saying why there is none (unknown type, unreadable table). */
export type RecordFormResult = { ok: true; form: RecordForm } | { ok: false; envelope: unknown };

/** Creates records: reads their form from the schema, and inserts one. */
export interface RecordCreator {
  /** The form of a new record of `entityType`, read from the database's schema. */
  formFor(entityType: string): Promise<RecordFormResult>;
  /**
   * Inserts one record and resolves to an envelope with `source: "action"`: a success carrying the
   * stored row, or an error with a stable code. Never throws for database failures.
   */
  create(entityType: string, values: Readonly<Record<string, string>>): Promise<unknown>;
}
