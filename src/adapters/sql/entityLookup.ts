import { z } from 'zod';
import type {
  EnvelopeAttempts,
  EnvelopeCandidate,
  EnvelopeQuery,
  ToolResultEnvelope,
} from '../../composer/envelope.js';
import { type Logger, silentLogger } from '../../logging/logger.js';
import {
  alternatesOf,
  buildEntityRegistry,
  type ColumnSpec,
  type EntityMapping,
  type EntityRegistry,
  entityTypeKey,
  keyOf,
  normaliseOrderNumberText,
} from './entityMappings.js';
import {
  classifySqlError,
  escapeLike,
  type Queryable,
  quoteIdent,
  sqlErrorCode,
  sqlErrorText,
} from './sqlSupport.js';

/** One equality filter on a whitelisted field. */
export interface LookupFilter {
  field: string;
  value: string | number | boolean;
}

/** What a caller (usually a model's tool call) asks the lookup for. */
export interface EntityLookupInput {
  /** `vendor`, `customer`, `part`, `purchase_order` or an alias (`supplier`, `po`…). */
  entity_type: string;
  /** A name to find: matched exactly (any case), then word by word. */
  entity_name?: string | null | undefined;
  /** An order number, matched exactly after normalising (`po-1001` → `PO-1001`). */
  order_number?: string | null | undefined;
  /** Equality filters on whitelisted fields: `[{ field, value }]` or `{ field: value }`. */
  filters?: LookupFilter[] | Record<string, string | number | boolean> | null;
  /** The record's id (a disambiguation candidate's `id`): matched exactly on the id column. */
  id?: string | number | null;
}

/** Options of {@link createEntityLookup}. */
export interface EntityLookupOptions {
  /** Where the entities live: a `pg` Pool, PGlite, or anything with `query(text, params)`. */
  db: Queryable;
  /** Mappings added to, or replacing (same key), the default vendor/customer/part/PO mappings. */
  entities?: Readonly<Record<string, EntityMapping>>;
  /** Raw database errors are logged here (warn), never put in an envelope. */
  logger?: Logger;
  /** Most candidates a disambiguation lists (default 25); `candidates_total` counts them all. */
  candidateLimit?: number;
  /** Most rows a filter-only listing returns (default 50); `total_rows` counts them all. */
  rowLimit?: number;
}

/** The entity lookup tool. */
export interface EntityLookup {
  /** Looks an entity up; resolves to an envelope for every outcome, bad input and failures included. */
  lookup(input: EntityLookupInput): Promise<ToolResultEnvelope>;
  /** Forgets the cached schema (columns are read again on the next lookup). */
  forgetSchema(): void;
}

/** Shortest `entity_name` (trimmed, in characters) for which the fuzzy step runs. */
export const fuzzyMinimumLength = 3;
/** Most distinct words of a name the fuzzy step matches. */
const maxFuzzyWords = 12;
const totalKey = '__troupe_total';

// --- Input -------------------------------------------------------------------------------------

const noNul = (s: string) => !s.includes('\u0000');
const nameText = (max: number) =>
  z
    .string({ error: (issue) => (issue.input === undefined ? 'is required' : 'expected text') })
    .trim()
    .min(1, 'must not be blank')
    .max(max, `must be at most ${max} characters`)
    .refine(noNul, 'must not contain NUL characters');

const filterValue = z.union(
  [nameText(200), z.number().finite(), z.boolean()],
  'expected text, a number or true/false',
);
const filterList = z
  .array(z.object({ field: nameText(63), value: filterValue }), 'expected a list of { field, value }')
  .max(10, 'at most 10 filters');

const inputSchema = z.object(
  {
    entity_type: nameText(63),
    entity_name: nameText(200).nullish(),
    order_number: nameText(64).nullish(),
    id: z.union([z.number().int().safe(), nameText(64)]).nullish(),
    // `{ status: 'open' }` is accepted as shorthand for `[{ field: 'status', value: 'open' }]`.
    filters: z
      .preprocess(
        (v) =>
          typeof v === 'object' &&
          v !== null &&
          !Array.isArray(v) &&
          Object.getPrototypeOf(v) === Object.prototype
            ? Object.entries(v).map(([field, value]) => ({ field, value }))
            : v,
        filterList,
      )
      .nullish(),
  },
  'expected an object with entity_type',
);

interface ParsedInput {
  type: string;
  mapping: EntityMapping;
  name: string | undefined;
  orderNumber: string | undefined;
  id: string | number | undefined;
  filters: LookupFilter[];
  query: EnvelopeQuery;
}

type Parsed = { ok: true; value: ParsedInput } | { ok: false; message: string; query: EnvelopeQuery };

function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .slice(0, 3)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : 'input'}: ${issue.message}`)
    .join('; ');
}

function parseInput(raw: unknown, registry: EntityRegistry): Parsed {
  const rawType =
    typeof raw === 'object' &&
    raw !== null &&
    typeof (raw as { entity_type?: unknown }).entity_type === 'string'
      ? (raw as { entity_type: string }).entity_type.trim().slice(0, 63)
      : '';
  const fallbackQuery: EnvelopeQuery = { entity_type: rawType || 'unknown' };
  const checked = inputSchema.safeParse(raw);
  if (!checked.success)
    return { ok: false, message: describeIssues(checked.error.issues), query: fallbackQuery };
  const input = checked.data;
  const type = registry.aliases.get(entityTypeKey(input.entity_type));
  const mapping = type === undefined ? undefined : registry.mappings.get(type);
  if (type === undefined || mapping === undefined) {
    const known = [...registry.mappings.keys()].join(', ');
    return {
      ok: false,
      message: `entity_type: unknown entity type "${input.entity_type}"; expected one of ${known}`,
      query: fallbackQuery,
    };
  }
  const query: EnvelopeQuery = { entity_type: type };
  const filters = input.filters ?? [];
  const allowed = Object.keys(mapping.filters ?? {});
  for (const [index, filter] of filters.entries()) {
    if (!Object.hasOwn(mapping.filters ?? {}, filter.field))
      return {
        ok: false,
        message: `filters.${index}.field: ${mapping.label} cannot be filtered by "${filter.field}"; allowed: ${
          allowed.length > 0 ? allowed.join(', ') : 'none'
        }`,
        query,
      };
  }
  let orderNumber: string | undefined;
  if (input.order_number != null) {
    if (mapping.orderNumber === undefined)
      return { ok: false, message: `order_number: ${mapping.label} have no order number`, query };
    orderNumber = (mapping.normaliseOrderNumber ?? normaliseOrderNumberText)(input.order_number);
    query.order_number = orderNumber;
  }
  const id = input.id ?? undefined;
  if (id !== undefined) query.id = id;
  // An id or an order number is matched exactly on its own; a name given with it is not used.
  const name = orderNumber === undefined && id === undefined ? (input.entity_name ?? undefined) : undefined;
  if (name !== undefined) query.entity_name = name;
  if (filters.length > 0) query.filters = filters;
  if (name === undefined && orderNumber === undefined && id === undefined && filters.length === 0)
    return { ok: false, message: 'entity_name: give entity_name, order_number, id or filters', query };
  return { ok: true, value: { type, mapping, name, orderNumber, id, filters, query } };
}

// --- Schema ------------------------------------------------------------------------------------

interface Column {
  /** Key in rows and candidates (the spec's first name). */
  key: string;
  /** The column's actual name in the database. */
  name: string;
  /** `information_schema` data type, when the schema was read. */
  type: string | undefined;
}

interface ResolvedEntity {
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

type TableColumns = ReadonlyMap<string, ReadonlyMap<string, string>>;

/** Thrown inside a lookup when the schema still lacks what the mapping needs after a refresh. */
class SchemaMismatch extends Error {}

const schemaQuery = `select table_name, column_name, data_type
from information_schema.columns
where table_schema = coalesce($1::text, current_schema()) and table_name = any($2::text[])`;

async function readTableColumns(db: Queryable, mapping: EntityMapping): Promise<TableColumns> {
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
function resolveEntity(mapping: EntityMapping, tables: TableColumns | undefined): ResolvedEntity {
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

// --- SQL ---------------------------------------------------------------------------------------

interface Statement {
  text: string;
  params: unknown[];
}

/** Collects parameters and hands back their `$n` placeholders. */
class Params {
  readonly values: unknown[] = [];
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

const textTypes = /^(date|time|timestamp|interval)/u;

function selectList(entity: ResolvedEntity): string {
  return entity.output
    .map((c) => {
      const column = quoteIdent(c.name);
      // Dates and times as text: exactly what is stored, with no time-zone shift on the way.
      const value = c.type !== undefined && textTypes.test(c.type) ? `cast(${column} as text)` : column;
      return `${value} as ${quoteIdent(c.key)}`;
    })
    .join(', ');
}

function filterClauses(entity: ResolvedEntity, filters: readonly LookupFilter[], params: Params): string[] {
  return filters.map((filter) => {
    const column = entity.filters.get(filter.field);
    if (!column) throw new SchemaMismatch(`filter column for ${filter.field}`);
    return `lower(cast(${quoteIdent(column.name)} as text)) = lower(${params.add(String(filter.value))})`;
  });
}

function statement(
  entity: ResolvedEntity,
  where: readonly string[],
  orderBy: readonly string[],
  limit: number,
  params: Params,
): Statement {
  const text = [
    `select ${selectList(entity)}, cast(count(*) over () as integer) as ${quoteIdent(totalKey)}`,
    `from ${entity.table}`,
    `where ${where.length > 0 ? where.join(' and ') : 'true'}`,
    `order by ${orderBy.join(', ')}`,
    `limit ${Math.trunc(limit)}`,
  ].join('\n');
  return { text, params: params.values };
}

function defaultOrder(entity: ResolvedEntity): string[] {
  const display = quoteIdent(entity.display.name);
  return [`lower(${display})`, quoteIdent(entity.id.name)];
}

/** Exact: a name equal to one search column (any case), or an order number equal to the stored one. */
function exactStatement(entity: ResolvedEntity, input: ParsedInput, limit: number): Statement {
  const params = new Params();
  const where: string[] = [];
  if (input.id !== undefined) {
    where.push(`cast(${quoteIdent(entity.id.name)} as text) = ${params.add(String(input.id))}`);
  } else if (input.orderNumber !== undefined && entity.orderNumber) {
    where.push(`upper(${quoteIdent(entity.orderNumber.name)}) = upper(${params.add(input.orderNumber)})`);
  } else if (input.name !== undefined) {
    const name = params.add(input.name);
    const alternatives = entity.search.map((c) => `lower(${quoteIdent(c.name)}) = lower(${name})`);
    if (entity.orderNumber) {
      const normalise = input.mapping.normaliseOrderNumber ?? normaliseOrderNumberText;
      alternatives.push(
        `upper(${quoteIdent(entity.orderNumber.name)}) = upper(${params.add(normalise(input.name))})`,
      );
    }
    where.push(`(${alternatives.join(' or ')})`);
  }
  where.push(...filterClauses(entity, input.filters, params));
  return statement(entity, where, defaultOrder(entity), limit, params);
}

/** The distinct words of a name, at most {@link maxFuzzyWords}. */
function wordsOf(name: string): string[] {
  const seen = new Set<string>();
  const words: string[] = [];
  for (const word of name.split(/\s+/u)) {
    const key = word.toLowerCase();
    if (word.length === 0 || seen.has(key)) continue;
    seen.add(key);
    words.push(word);
    if (words.length === maxFuzzyWords) break;
  }
  return words;
}

/**
 * Fuzzy: every word of the name appears (literally, any case) in some search column; ranked by
 * trigram similarity when pg_trgm is installed, else shortest and then alphabetical first.
 */
function fuzzyStatement(
  entity: ResolvedEntity,
  input: ParsedInput,
  name: string,
  trigramSchema: string | undefined,
  limit: number,
): Statement {
  const params = new Params();
  const where = wordsOf(name).map((word) => {
    const pattern = params.add(`%${escapeLike(word)}%`);
    return `(${entity.search.map((c) => `${quoteIdent(c.name)} ilike ${pattern} escape '\\'`).join(' or ')})`;
  });
  where.push(...filterClauses(entity, input.filters, params));
  const order: string[] = [];
  if (trigramSchema !== undefined) {
    const whole = params.add(name);
    const similarity = entity.search.map(
      (c) => `${quoteIdent(trigramSchema)}.similarity(${quoteIdent(c.name)}, ${whole})`,
    );
    order.push(`${similarity.length === 1 ? similarity[0] : `greatest(${similarity.join(', ')})`} desc`);
  }
  order.push(`length(${quoteIdent(entity.display.name)})`, ...defaultOrder(entity));
  return statement(entity, where, order, limit, params);
}

/** Filters only: every row matching them, as a listing. */
function listingStatement(entity: ResolvedEntity, input: ParsedInput, limit: number): Statement {
  const params = new Params();
  return statement(entity, filterClauses(entity, input.filters, params), defaultOrder(entity), limit, params);
}

const trigramQuery = `select n.nspname as schema
from pg_extension e join pg_namespace n on n.oid = e.extnamespace
where e.extname = 'pg_trgm'`;

// --- Results -----------------------------------------------------------------------------------

/** JSON-safe values: dates as ISO text, big integers as numbers (or text beyond 2^53). */
function plainValue(value: unknown): unknown {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (typeof value === 'bigint')
    return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER)
      ? Number(value)
      : value.toString();
  return value;
}

interface Found {
  rows: Record<string, unknown>[];
  total: number;
}

function found(rows: readonly unknown[]): Found {
  let total = rows.length;
  const plain = rows.map((raw) => {
    const row: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
      if (key === totalKey) total = Math.max(total, Number(value));
      else row[key] = plainValue(value);
    }
    return row;
  });
  return { rows: plain, total };
}

function candidateOf(entity: ResolvedEntity, row: Record<string, unknown>): EnvelopeCandidate {
  const id = row[entity.id.key];
  const display = row[entity.display.key];
  const candidate: EnvelopeCandidate = {
    id: typeof id === 'number' || typeof id === 'string' ? id : String(id),
    display_name: display == null ? String(id) : String(display),
  };
  for (const column of entity.context) {
    const value = row[column.key];
    if (column.key !== entity.id.key && column.key !== entity.display.key && value != null)
      candidate[column.key] = value;
  }
  return candidate;
}

// --- The lookup --------------------------------------------------------------------------------

function safeLimit(value: number | undefined, fallback: number): number {
  return value !== undefined && Number.isInteger(value) && value > 0 ? Math.min(value, 1000) : fallback;
}

/**
 * Creates the entity lookup tool: exact match, then a fuzzy word match, over whitelisted tables and
 * columns, with one schema refresh on drift. Every outcome, failures included, is an envelope.
 */
export function createEntityLookup(options: EntityLookupOptions): EntityLookup {
  const { db } = options;
  const logger = options.logger ?? silentLogger();
  const registry = buildEntityRegistry(options.entities);
  const candidateLimit = safeLimit(options.candidateLimit, 25);
  const rowLimit = safeLimit(options.rowLimit, 50);
  const schemas = new Map<string, ResolvedEntity>();
  // undefined: not known yet; null: not installed; text: the schema holding similarity().
  let trigram: string | null | undefined;

  async function loadSchema(type: string, mapping: EntityMapping): Promise<ResolvedEntity> {
    const tables = await readTableColumns(db, mapping);
    const resolved = resolveEntity(mapping, tables.size > 0 ? tables : undefined);
    schemas.set(type, resolved);
    return resolved;
  }

  async function refreshSchema(type: string, mapping: EntityMapping): Promise<ResolvedEntity> {
    const resolved = resolveEntity(mapping, await readTableColumns(db, mapping));
    schemas.set(type, resolved);
    return resolved;
  }

  async function trigramSchema(): Promise<string | undefined> {
    if (trigram === undefined) {
      try {
        const { rows } = await db.query(trigramQuery, []);
        const first = rows[0] as { schema?: unknown } | undefined;
        trigram = typeof first?.schema === 'string' ? first.schema : null;
        logger.debug({ pg_trgm: trigram ?? false }, 'entity lookup: trigram ranking detected');
      } catch (error) {
        // Not cached: a passing failure should not turn ranking off for good.
        logger.debug(
          { sqlstate: sqlErrorCode(error), error: sqlErrorText(error) },
          'pg_trgm detection failed',
        );
        return undefined;
      }
    }
    return trigram ?? undefined;
  }

  /**
   * Runs one step's statement. On an undefined table or column (or a mapping the cached schema
   * cannot serve) the schema is read again once per lookup and the statement rebuilt and retried.
   */
  async function run(
    input: ParsedInput,
    attempts: EnvelopeAttempts,
    step: string,
    build: (entity: ResolvedEntity) => Statement,
  ): Promise<{ entity: ResolvedEntity; found: Found }> {
    let entity = schemas.get(input.type) ?? (await loadSchema(input.type, input.mapping));
    const attempt = async (): Promise<Found> => {
      if (entity.problem !== undefined) throw new SchemaMismatch(entity.problem);
      const { text, params } = build(entity);
      const { rows } = await db.query(text, params);
      return found(rows);
    };
    try {
      return { entity, found: await attempt() };
    } catch (error) {
      const drift = error instanceof SchemaMismatch || classifySqlError(error).kind === 'schema';
      if (!drift) throw error;
      if (attempts.schema_refreshed) throw new SchemaMismatch(describeDrift(error));
      logger.warn(
        { entity_type: input.type, step, sqlstate: sqlErrorCode(error), error: describeDrift(error) },
        'entity lookup: schema drift, refreshing the schema and retrying',
      );
      attempts.schema_refreshed = true;
      entity = await refreshSchema(input.type, input.mapping);
      try {
        return { entity, found: await attempt() };
      } catch (retryError) {
        if (retryError instanceof SchemaMismatch || classifySqlError(retryError).kind === 'schema')
          throw new SchemaMismatch(describeDrift(retryError));
        throw retryError;
      }
    }
  }

  async function chain(input: ParsedInput, attempts: EnvelopeAttempts): Promise<ToolResultEnvelope> {
    const base = { source: 'database' as const, query: input.query, attempts };
    const listing = input.name === undefined && input.orderNumber === undefined && input.id === undefined;
    attempts.exact = true;
    const exact = await run(input, attempts, 'exact', (entity) =>
      listing ? listingStatement(entity, input, rowLimit) : exactStatement(entity, input, candidateLimit),
    );
    if (exact.found.rows.length === 1 || (listing && exact.found.rows.length > 0))
      return {
        type: 'success',
        ...base,
        rows: exact.found.rows,
        total_rows: exact.found.total,
        match: 'exact',
      };
    if (exact.found.rows.length > 1) return disambiguation(exact.entity, exact.found, 'exact', base);

    const name = input.name;
    if (name === undefined || [...name].length < fuzzyMinimumLength) return { type: 'empty', ...base };
    attempts.fuzzy = true;
    const schema = await trigramSchema();
    let fuzzy: { entity: ResolvedEntity; found: Found };
    try {
      fuzzy = await run(input, attempts, 'fuzzy', (entity) =>
        fuzzyStatement(entity, input, name, schema, candidateLimit),
      );
    } catch (error) {
      if (schema === undefined || classifySqlError(error).kind !== 'undefined_function') throw error;
      // similarity() is gone although pg_trgm was detected: rank without it from now on.
      logger.warn({ sqlstate: sqlErrorCode(error), error: sqlErrorText(error) }, 'similarity() unavailable');
      trigram = null;
      fuzzy = await run(input, attempts, 'fuzzy', (entity) =>
        fuzzyStatement(entity, input, name, undefined, candidateLimit),
      );
    }
    if (fuzzy.found.rows.length === 1)
      return { type: 'success', ...base, rows: fuzzy.found.rows, total_rows: 1, match: 'fuzzy' };
    if (fuzzy.found.rows.length > 1) return disambiguation(fuzzy.entity, fuzzy.found, 'fuzzy', base);
    return { type: 'empty', ...base };
  }

  function disambiguation(
    entity: ResolvedEntity,
    result: Found,
    match: 'exact' | 'fuzzy',
    base: Pick<ToolResultEnvelope, 'source' | 'query' | 'attempts'>,
  ): ToolResultEnvelope {
    return {
      type: 'disambiguation',
      ...base,
      candidates: result.rows.map((row) => candidateOf(entity, row)),
      candidates_total: result.total,
      match,
    };
  }

  function failure(input: ParsedInput, attempts: EnvelopeAttempts, error: unknown): ToolResultEnvelope {
    const base = { type: 'error' as const, source: 'database' as const, query: input.query, attempts };
    const label = input.mapping.label;
    const sqlstate = sqlErrorCode(error);
    const log = { entity_type: input.type, sqlstate, error: sqlErrorText(error) };
    if (error instanceof SchemaMismatch) {
      logger.warn(log, 'entity lookup: schema mismatch after refresh');
      return {
        ...base,
        error: {
          code: 'SCHEMA_MISMATCH',
          message: `Couldn't look up ${label}: the table or column the lookup needs is missing.`,
          retryable: false,
        },
      };
    }
    const { kind } = classifySqlError(error);
    logger.warn(log, `entity lookup: ${kind} database error`);
    if (kind === 'permission')
      return {
        ...base,
        error: { code: 'PERMISSION_DENIED', message: `You don't have access to ${label}.`, retryable: false },
      };
    if (kind === 'unavailable')
      return {
        ...base,
        error: {
          code: 'DATABASE_ERROR',
          message: `The database is unavailable or busy, so ${label} couldn't be looked up; try again shortly.`,
          retryable: true,
        },
      };
    return {
      ...base,
      error: { code: 'DATABASE_ERROR', message: `The database couldn't look up ${label}.`, retryable: false },
    };
  }

  return {
    async lookup(raw) {
      const parsed = parseInput(raw, registry);
      if (!parsed.ok) {
        logger.info({ error: parsed.message }, 'entity lookup: invalid input');
        return {
          type: 'error',
          source: 'database',
          query: parsed.query,
          attempts: { exact: false, fuzzy: false, schema_refreshed: false },
          error: { code: 'INVALID_INPUT', message: parsed.message, retryable: false },
        };
      }
      const attempts: EnvelopeAttempts = { exact: false, fuzzy: false, schema_refreshed: false };
      try {
        return await chain(parsed.value, attempts);
      } catch (error) {
        return failure(parsed.value, attempts, error);
      }
    },
    forgetSchema() {
      schemas.clear();
      trigram = undefined;
    },
  };
}

function describeDrift(error: unknown): string {
  return error instanceof SchemaMismatch ? error.message : sqlErrorText(error);
}
