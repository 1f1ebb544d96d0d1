import { alternatesOf, type ColumnSpec, type EntityMapping, keyOf } from './entityMappings.js';
import { type Queryable, quoteIdent, sqlErrorText } from './sqlSupport.js';

/** One column as a lookup uses it. */
export interface Column {
  /** Key in rows and candidates (the spec's first name). */
  key: string;
  /** The column's actual name in the database. */
  name: string;
  /** `information_schema` data type, when the schema was read. */
  type: string | undefined;
}

/** A mapping bound to the tables and columns the database has. */
export interface ResolvedEntity {
  table: string;
  id: Column;
  display: Column;
  search: Column[];
  orderNumber: Column | undefined;
  /** Every column a row carries: id, display, search and context, once each. */
  output: Column[];
  context: Column[];
  filters: ReadonlyMap<string, Column>;
  /** Why the schema cannot serve this mapping (a required table or column is missing). */
  problem: string | undefined;
}

export type TableColumns = ReadonlyMap<string, ReadonlyMap<string, string>>;

/** Thrown inside a lookup when the schema still lacks what the mapping needs after a refresh. */
export class SchemaMismatch extends Error {}

const schemaQuery = `select table_name, column_name, data_type
from information_schema.columns
where table_schema = coalesce($1::text, current_schema()) and table_name = any($2::text[])`;

/** The columns (and their types) of the mapping's candidate tables, by table. */
export async function readTableColumns(db: Queryable, mapping: EntityMapping): Promise<TableColumns> {
  const tables = typeof mapping.table === 'string' ? [mapping.table] : [...mapping.table];
  const { rows } = await db.query(schemaQuery, [mapping.schema ?? null, tables]);
  const byTable = new Map<string, Map<string, string>>();
  for (const row of rows as { table_name: string; column_name: string; data_type: string }[]) {
    const columns = byTable.get(row.table_name) ?? new Map<string, string>();
    columns.set(row.column_name, row.data_type);
    byTable.set(row.table_name, columns);
  }
  return byTable;
}

/**
 * Chooses the table and column alternates the database has. With `columns` unknown (the table is
 * not visible, e.g. for lack of privileges) the first alternates are assumed and the database
 * itself says what is wrong.
 */
export function resolveEntity(mapping: EntityMapping, tables: TableColumns | undefined): ResolvedEntity {
  const tableNames = typeof mapping.table === 'string' ? [mapping.table] : mapping.table;
  const table = tables ? tableNames.find((t) => tables.has(t)) : undefined;
  const columns = table === undefined ? undefined : tables?.get(table);
  const problems: string[] = [];
  if (tables && columns === undefined) problems.push(`table ${tableNames.join(' / ')}`);
  const pick = (spec: ColumnSpec, required: boolean): Column | undefined => {
    const names = alternatesOf(spec);
    if (!columns) return { key: keyOf(spec), name: names[0] ?? '', type: undefined };
    const name = names.find((n) => columns.has(n));
    if (name !== undefined) return { key: keyOf(spec), name, type: columns.get(name) };
    if (required) problems.push(`column ${names.join(' / ')}`);
    return undefined;
  };
  const assumedColumn = (spec: ColumnSpec): Column => ({
    key: keyOf(spec),
    name: keyOf(spec),
    type: undefined,
  });
  const searchSpecs = mapping.search;
  const displaySpec = mapping.display ?? searchSpecs[0] ?? '';
  const id = pick(mapping.id, true) ?? assumedColumn(mapping.id);
  const display = pick(displaySpec, true) ?? assumedColumn(displaySpec);
  const search = searchSpecs.map((spec) => pick(spec, true) ?? assumedColumn(spec));
  const orderNumber =
    mapping.orderNumber === undefined
      ? undefined
      : (pick(mapping.orderNumber, true) ?? assumedColumn(mapping.orderNumber));
  const context = (mapping.context ?? []).flatMap((spec) => pick(spec, false) ?? []);
  const filters = new Map<string, Column>();
  for (const [field, spec] of Object.entries(mapping.filters ?? {})) {
    const column = pick(spec, false);
    if (column) filters.set(field, column);
  }
  const output: Column[] = [];
  for (const column of [id, display, ...search, ...(orderNumber ? [orderNumber] : []), ...context])
    if (!output.some((c) => c.key === column.key)) output.push(column);
  const schemaPrefix = mapping.schema === undefined ? '' : `${quoteIdent(mapping.schema)}.`;
  return {
    table: `${schemaPrefix}${quoteIdent(table ?? tableNames[0] ?? '')}`,
    id,
    display,
    search,
    orderNumber,
    output,
    context,
    filters,
    problem: problems.length > 0 ? `missing ${problems.join(', ')}` : undefined,
  };
}
/** What drifted: the mismatch itself, or the database's own words. */
export function describeDrift(error: unknown): string {
  return error instanceof SchemaMismatch ? error.message : sqlErrorText(error);
}
