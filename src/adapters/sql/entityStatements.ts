import type { LookupFilter, ParsedInput } from './entityLookupInput.js';
import { normaliseOrderNumberText } from './entityMappings.js';
import { type ResolvedEntity, SchemaMismatch } from './entitySchema.js';
import { escapeLike, quoteIdent } from './sqlSupport.js';

/** Most distinct words of a name the fuzzy step matches. */
const maxFuzzyWords = 12;
/** The column carrying the total count of matching rows, beside each row. */
export const totalKey = '__troupe_total';

/** One SQL statement with its parameters. */
export interface Statement {
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
export function exactStatement(entity: ResolvedEntity, input: ParsedInput, limit: number): Statement {
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
export function fuzzyStatement(
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
export function listingStatement(entity: ResolvedEntity, input: ParsedInput, limit: number): Statement {
  const params = new Params();
  return statement(entity, filterClauses(entity, input.filters, params), defaultOrder(entity), limit, params);
}

/** Which schema holds pg_trgm's similarity(), if it is installed. */
export const trigramQuery = `select n.nspname as schema
from pg_extension e join pg_namespace n on n.oid = e.extnamespace
where e.extname = 'pg_trgm'`;
