import type { EnvelopeAttempts, ToolResultEnvelope } from '../../composer/envelope.js';
import { type Logger, silentLogger } from '../../logging/logger.js';
import { failureEnvelope } from './entityLookupFailure.js';
import { type EntityLookupInput, type ParsedInput, parseInput } from './entityLookupInput.js';
import { buildEntityRegistry, type EntityMapping } from './entityMappings.js';
import { candidateOf, type Found, found } from './entityRows.js';
import {
  describeDrift,
  type ResolvedEntity,
  readTableColumns,
  resolveEntity,
  SchemaMismatch,
} from './entitySchema.js';
import {
  exactStatement,
  fuzzyStatement,
  listingStatement,
  type Statement,
  trigramQuery,
} from './entityStatements.js';
import { classifySqlError, type Queryable, sqlErrorCode, sqlErrorText } from './sqlSupport.js';

export type { EntityLookupInput, LookupFilter } from './entityLookupInput.js';

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

/** What one lookup tool keeps between calls: its database and limits, the schemas read, pg_trgm. */
interface LookupContext {
  db: Queryable;
  logger: Logger;
  candidateLimit: number;
  rowLimit: number;
  schemas: Map<string, ResolvedEntity>;
  // undefined: not known yet; null: not installed; text: the schema holding similarity().
  trigram: string | null | undefined;
}

type EnvelopeBase = Pick<ToolResultEnvelope, 'source' | 'query' | 'attempts'>;

function safeLimit(value: number | undefined, fallback: number): number {
  return value !== undefined && Number.isInteger(value) && value > 0 ? Math.min(value, 1000) : fallback;
}

/**
 * Creates the entity lookup tool: exact match, then a fuzzy word match, over whitelisted tables and
 * columns, with one schema refresh on drift. Every outcome, failures included, is an envelope.
 */
export function createEntityLookup(options: EntityLookupOptions): EntityLookup {
  const registry = buildEntityRegistry(options.entities);
  const context: LookupContext = {
    db: options.db,
    logger: options.logger ?? silentLogger(),
    candidateLimit: safeLimit(options.candidateLimit, 25),
    rowLimit: safeLimit(options.rowLimit, 50),
    schemas: new Map(),
    trigram: undefined,
  };
  return {
    async lookup(raw) {
      const parsed = parseInput(raw, registry);
      if (!parsed.ok) {
        context.logger.info({ error: parsed.message }, 'entity lookup: invalid input');
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
        return await lookupChain(context, parsed.value, attempts);
      } catch (error) {
        return failureEnvelope(context.logger, parsed.value, attempts, error);
      }
    },
    forgetSchema() {
      context.schemas.clear();
      context.trigram = undefined;
    },
  };
}

// --- Schema and pg_trgm, read once and kept ----------------------------------------------------

async function loadSchema(
  context: LookupContext,
  type: string,
  mapping: EntityMapping,
): Promise<ResolvedEntity> {
  const tables = await readTableColumns(context.db, mapping);
  const resolved = resolveEntity(mapping, tables.size > 0 ? tables : undefined);
  context.schemas.set(type, resolved);
  return resolved;
}

async function refreshSchema(
  context: LookupContext,
  type: string,
  mapping: EntityMapping,
): Promise<ResolvedEntity> {
  const resolved = resolveEntity(mapping, await readTableColumns(context.db, mapping));
  context.schemas.set(type, resolved);
  return resolved;
}

async function trigramSchema(context: LookupContext): Promise<string | undefined> {
  if (context.trigram === undefined) {
    try {
      const { rows } = await context.db.query(trigramQuery, []);
      const first = rows[0] as { schema?: unknown } | undefined;
      context.trigram = typeof first?.schema === 'string' ? first.schema : null;
      context.logger.debug({ pg_trgm: context.trigram ?? false }, 'entity lookup: trigram ranking detected');
    } catch (error) {
      // Not cached: a passing failure should not turn ranking off for good.
      context.logger.debug(
        { sqlstate: sqlErrorCode(error), error: sqlErrorText(error) },
        'pg_trgm detection failed',
      );
      return undefined;
    }
  }
  return context.trigram ?? undefined;
}

// --- The steps ---------------------------------------------------------------------------------

/**
 * Runs one step's statement. On an undefined table or column (or a mapping the cached schema
 * cannot serve) the schema is read again once per lookup and the statement rebuilt and retried.
 */
async function runStep(
  context: LookupContext,
  input: ParsedInput,
  attempts: EnvelopeAttempts,
  step: string,
  build: (entity: ResolvedEntity) => Statement,
): Promise<{ entity: ResolvedEntity; found: Found }> {
  let entity = context.schemas.get(input.type) ?? (await loadSchema(context, input.type, input.mapping));
  const attempt = async (): Promise<Found> => {
    if (entity.problem !== undefined) throw new SchemaMismatch(entity.problem);
    const { text, params } = build(entity);
    const { rows } = await context.db.query(text, params);
    return found(rows);
  };
  try {
    return { entity, found: await attempt() };
  } catch (error) {
    const drift = error instanceof SchemaMismatch || classifySqlError(error).kind === 'schema';
    if (!drift) throw error;
    if (attempts.schema_refreshed) throw new SchemaMismatch(describeDrift(error));
    context.logger.warn(
      { entity_type: input.type, step, sqlstate: sqlErrorCode(error), error: describeDrift(error) },
      'entity lookup: schema drift, refreshing the schema and retrying',
    );
    attempts.schema_refreshed = true;
    entity = await refreshSchema(context, input.type, input.mapping);
    try {
      return { entity, found: await attempt() };
    } catch (retryError) {
      if (retryError instanceof SchemaMismatch || classifySqlError(retryError).kind === 'schema')
        throw new SchemaMismatch(describeDrift(retryError));
      throw retryError;
    }
  }
}

/** Exact first (or the listing, for filters alone); the fuzzy step only when that finds nothing. */
async function lookupChain(
  context: LookupContext,
  input: ParsedInput,
  attempts: EnvelopeAttempts,
): Promise<ToolResultEnvelope> {
  const base = { source: 'database' as const, query: input.query, attempts };
  const listing = input.name === undefined && input.orderNumber === undefined && input.id === undefined;
  attempts.exact = true;
  const exact = await runStep(context, input, attempts, 'exact', (entity) =>
    listing
      ? listingStatement(entity, input, context.rowLimit)
      : exactStatement(entity, input, context.candidateLimit),
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
  const fuzzy = await fuzzyStep(context, input, attempts, name);
  if (fuzzy.found.rows.length === 1)
    return { type: 'success', ...base, rows: fuzzy.found.rows, total_rows: 1, match: 'fuzzy' };
  if (fuzzy.found.rows.length > 1) return disambiguation(fuzzy.entity, fuzzy.found, 'fuzzy', base);
  return { type: 'empty', ...base };
}

/** The fuzzy statement, ranked by similarity() when pg_trgm has it, and without when it is gone. */
async function fuzzyStep(
  context: LookupContext,
  input: ParsedInput,
  attempts: EnvelopeAttempts,
  name: string,
): Promise<{ entity: ResolvedEntity; found: Found }> {
  const schema = await trigramSchema(context);
  try {
    return await runStep(context, input, attempts, 'fuzzy', (entity) =>
      fuzzyStatement(entity, input, name, schema, context.candidateLimit),
    );
  } catch (error) {
    if (schema === undefined || classifySqlError(error).kind !== 'undefined_function') throw error;
    // similarity() is gone although pg_trgm was detected: rank without it from now on.
    context.logger.warn(
      { sqlstate: sqlErrorCode(error), error: sqlErrorText(error) },
      'similarity() unavailable',
    );
    context.trigram = null;
    return await runStep(context, input, attempts, 'fuzzy', (entity) =>
      fuzzyStatement(entity, input, name, undefined, context.candidateLimit),
    );
  }
}

function disambiguation(
  entity: ResolvedEntity,
  result: Found,
  match: 'exact' | 'fuzzy',
  base: EnvelopeBase,
): ToolResultEnvelope {
  return {
    type: 'disambiguation',
    ...base,
    candidates: result.rows.map((row) => candidateOf(entity, row)),
    candidates_total: result.total,
    match,
  };
}
