import { z } from 'zod';
import type { EnvelopeQuery } from '../../composer/envelope.js';
import { zodIssues } from '../../config/zodIssues.js';
import {
  type EntityMapping,
  type EntityRegistry,
  entityTypeKey,
  normaliseOrderNumberText,
} from './entityMappings.js';

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

/** A lookup request after validation: the entity resolved, the search narrowed to one way. */
export interface ParsedInput {
  type: string;
  mapping: EntityMapping;
  name: string | undefined;
  orderNumber: string | undefined;
  id: string | number | undefined;
  filters: LookupFilter[];
  query: EnvelopeQuery;
}

export type Parsed = { ok: true; value: ParsedInput } | { ok: false; message: string; query: EnvelopeQuery };

/** Validates a request and resolves its entity type; a problem comes back as a message a model can act on. */
export function parseInput(raw: unknown, registry: EntityRegistry): Parsed {
  const rawType =
    typeof raw === 'object' &&
    raw !== null &&
    typeof (raw as { entity_type?: unknown }).entity_type === 'string'
      ? (raw as { entity_type: string }).entity_type.trim().slice(0, 63)
      : '';
  const fallbackQuery: EnvelopeQuery = { entity_type: rawType || 'unknown' };
  const checked = inputSchema.safeParse(raw);
  if (!checked.success)
    return { ok: false, message: zodIssues(checked.error, 'input', { limit: 3 }), query: fallbackQuery };
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
