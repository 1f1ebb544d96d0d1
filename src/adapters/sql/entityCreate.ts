import type { ToolResultEnvelope } from '../../composer/envelope.js';
import { type Logger, silentLogger } from '../../logging/logger.js';
import type { RecordCreator, RecordForm, RecordFormResult } from '../../ports/recordCreator.js';
import { alternatesOf, buildEntityRegistry, type EntityMapping, entityTypeKey } from './entityMappings.js';
import { classifySqlError, type Queryable, quoteIdent, sqlErrorCode, sqlErrorText } from './sqlSupport.js';

/** Options of {@link createEntityCreator}. */
export interface EntityCreatorOptions {
  /**
   * Where records are inserted. Pass it through `transactional(db, role)` (or `asRole`): each
   * statement then runs in its own transaction under the role, so a refused insert leaves nothing.
   */
  db: Queryable;
  /** Mappings added to, or replacing, the default vendor/customer/part/PO mappings. */
  entities?: Readonly<Record<string, EntityMapping>>;
  /** Raw database errors are logged here (warn), never put in an envelope. */
  logger?: Logger;
}

interface ColumnRow {
  table_name: string;
  column_name: string;
  is_nullable: string;
  column_default: string | null;
  is_identity: string;
  is_generated: string;
}

const columnsQuery = `select table_name, column_name, is_nullable, column_default, is_identity, is_generated
from information_schema.columns
where table_schema = coalesce($1::text, current_schema()) and table_name = any($2::text[])
order by table_name, ordinal_position`;

/** SQLSTATEs of a refused row, as the stable codes an action envelope carries. */
const constraintCodes: Readonly<Record<string, string>> = {
  '23505': 'UNIQUE_VIOLATION',
  '23514': 'CHECK_VIOLATION',
  '23502': 'NOT_NULL_VIOLATION',
  '23503': 'FOREIGN_KEY_VIOLATION',
};

/** Which stable code a failed insert reports. */
function failureCode(error: unknown): { code: string; retryable: boolean } {
  const sqlstate = sqlErrorCode(error) ?? '';
  const constraint = constraintCodes[sqlstate];
  if (constraint) return { code: constraint, retryable: false };
  // 22xxx: a value the column's type does not accept ("abc" for a number).
  if (sqlstate.startsWith('22')) return { code: 'INVALID_INPUT', retryable: false };
  const { kind } = classifySqlError(error);
  if (kind === 'permission') return { code: 'PERMISSION_DENIED', retryable: false };
  if (kind === 'schema') return { code: 'SCHEMA_MISMATCH', retryable: false };
  return { code: 'DATABASE_ERROR', retryable: kind === 'unavailable' };
}

const noAttempts = { exact: false, fuzzy: false, schema_refreshed: false };

/**
 * Creates records of the mapped entity types: the form comes from the table's schema
 * (`information_schema`: NOT NULL columns without a default, identity and generated columns left
 * to the database), and the insert is one parameterised `INSERT … RETURNING *`. Only quoted
 * identifiers read from the schema reach SQL text; every value is a parameter.
 */
export function createEntityCreator(options: EntityCreatorOptions): RecordCreator {
  const registry = buildEntityRegistry(options.entities);
  const logger = options.logger ?? silentLogger();
  const { db } = options;
  const mappingOf = (entityType: string) => {
    const type = registry.aliases.get(entityTypeKey(entityType));
    const mapping = type === undefined ? undefined : registry.mappings.get(type);
    return type === undefined || mapping === undefined ? undefined : { type, mapping };
  };
  const errorEnvelope = (entityType: string, code: string, message: string, retryable: boolean) =>
    ({
      type: 'error',
      source: 'action',
      query: { entity_type: entityType },
      attempts: noAttempts,
      error: { code, message, retryable },
    }) satisfies ToolResultEnvelope;

  const tableOf = async (entityType: string) => {
    const found = mappingOf(entityType);
    if (!found) return undefined;
    const tables = alternatesOf(found.mapping.table);
    const { rows } = await db.query(columnsQuery, [found.mapping.schema ?? null, [...tables]]);
    const byTable = rows as ColumnRow[];
    const table = tables.find((t) => byTable.some((r) => r.table_name === t));
    if (table === undefined) return undefined;
    const columns = byTable.filter((r) => r.table_name === table);
    const schemaPrefix = found.mapping.schema === undefined ? '' : `${quoteIdent(found.mapping.schema)}.`;
    return { ...found, table: `${schemaPrefix}${quoteIdent(table)}`, columns };
  };

  const formOf = (found: NonNullable<Awaited<ReturnType<typeof tableOf>>>): RecordForm => {
    const settable = found.columns.filter((c) => c.is_identity !== 'YES' && c.is_generated === 'NEVER');
    const names = settable.map((c) => c.column_name);
    const display = found.mapping.display ?? found.mapping.search[0];
    return {
      entityType: found.type,
      required: settable
        .filter((c) => c.is_nullable === 'NO' && c.column_default === null)
        .map((c) => c.column_name),
      columns: names,
      nameColumn: display === undefined ? undefined : alternatesOf(display).find((n) => names.includes(n)),
    };
  };

  return {
    async formFor(entityType): Promise<RecordFormResult> {
      try {
        const found = await tableOf(entityType);
        if (found) return { ok: true, form: formOf(found) };
        return {
          ok: false,
          envelope: errorEnvelope(entityType, 'SCHEMA_MISMATCH', 'No table for this kind of record.', false),
        };
      } catch (error) {
        logger.warn({ sqlstate: sqlErrorCode(error), error: sqlErrorText(error) }, 'create: schema not read');
        const { code, retryable } = failureCode(error);
        return {
          ok: false,
          envelope: errorEnvelope(entityType, code, 'The schema could not be read.', retryable),
        };
      }
    },
    async create(entityType, values) {
      try {
        const found = await tableOf(entityType);
        if (!found)
          return errorEnvelope(entityType, 'SCHEMA_MISMATCH', 'No table for this kind of record.', false);
        const form = formOf(found);
        const given = form.columns.filter((c) => values[c] !== undefined);
        const statement =
          given.length === 0
            ? `insert into ${found.table} default values returning *`
            : `insert into ${found.table} (${given.map(quoteIdent).join(', ')}) values (${given
                .map((_, i) => `$${i + 1}`)
                .join(', ')}) returning *`;
        const { rows } = await db.query(
          statement,
          given.map((c) => values[c]),
        );
        const row = rows[0] as Record<string, unknown> | undefined;
        if (!row) return errorEnvelope(entityType, 'DATABASE_ERROR', 'The insert returned no row.', false);
        const name = form.nameColumn === undefined ? undefined : values[form.nameColumn];
        return {
          type: 'success',
          source: 'action',
          query: { entity_type: found.type, ...(name === undefined ? {} : { entity_name: name }) },
          rows: [row],
          total_rows: 1,
          attempts: noAttempts,
        } satisfies ToolResultEnvelope;
      } catch (error) {
        logger.warn({ sqlstate: sqlErrorCode(error), error: sqlErrorText(error) }, 'create: insert failed');
        const { code, retryable } = failureCode(error);
        return errorEnvelope(entityType, code, 'The insert failed.', retryable);
      }
    },
  };
}
