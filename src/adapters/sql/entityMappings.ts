import { z } from 'zod';
import { zodIssues } from '../../config/zodIssues.js';
import { TroupeError } from '../../ports/troupeError.js';

/**
 * A column the lookup needs, as one name or as alternates in order of preference
 * (`['vendor_name', 'name']`). The first name is the column's key in result rows and candidates,
 * whichever alternate the database actually has.
 */
export type ColumnSpec = string | readonly string[];

/** How one kind of entity is stored: which table, which columns to search, show and filter on. */
export interface EntityMapping {
  /** Plural, human-friendly name used in messages ("You don't have access to customers."). */
  label: string;
  /** Other names a caller may use for `entity_type` (`supplier`, `po`…), case-insensitive. */
  aliases?: readonly string[];
  /** The table, or alternates in order of preference. */
  table: string | readonly string[];
  /** The table's schema; unset: the first schema on the search path. */
  schema?: string;
  /** The primary key, shown as a candidate's `id`. */
  id: ColumnSpec;
  /** Columns an `entity_name` is matched against (exactly, then word by word). */
  search: readonly ColumnSpec[];
  /** The column shown as a candidate's `display_name`; default: the first search column. */
  display?: ColumnSpec;
  /** Light context shown with candidates and rows (city, status…); left out when missing. */
  context?: readonly ColumnSpec[];
  /** Filterable fields (the caller's name → column). Only these fields may be filtered on. */
  filters?: Readonly<Record<string, ColumnSpec>>;
  /** Column holding an order number, matched exactly (never as a substring). */
  orderNumber?: ColumnSpec;
  /** Normalises a caller's order number before the exact match; default: trim and upper-case. */
  normaliseOrderNumber?: (raw: string) => string;
}

/** Upper-cases and removes stray spaces: `" po - 1001 "` → `"PO-1001"`. */
export function normaliseOrderNumberText(raw: string): string {
  return raw
    .trim()
    .toUpperCase()
    .replace(/\s*-\s*/gu, '-')
    .replace(/\s+/gu, ' ');
}

/**
 * Purchase-order numbers: `po-1001`, `PO 1001`, `po#1001` and a bare `1001` all become `PO-1001`;
 * anything else is only trimmed and upper-cased.
 */
export function normalisePurchaseNumber(raw: string): string {
  const text = normaliseOrderNumberText(raw);
  const match = /^(?:PO)?[\s#-]*(\d+)$/u.exec(text);
  return match ? `PO-${match[1]}` : text;
}

/** The entities a lookup knows out of the box, matching the embedded demo ERP. */
export const defaultEntityMappings = {
  vendor: {
    label: 'vendors',
    aliases: ['vendors', 'supplier', 'suppliers'],
    table: ['vendors', 'vendor'],
    id: ['vendor_id', 'id'],
    search: [['vendor_name', 'name']],
    context: ['city', 'contact_person', 'telephone_number', 'email', ['status', 'active']],
    filters: { status: ['status', 'active'], city: 'city' },
  },
  customer: {
    label: 'customers',
    aliases: ['customers', 'client', 'clients'],
    table: ['customers', 'customer'],
    id: ['customer_id', 'id'],
    search: [['customer_name', 'name']],
    context: ['city', 'contact_person', 'telephone_number', 'email'],
    filters: { city: 'city' },
  },
  part: {
    label: 'parts',
    aliases: ['parts', 'item', 'items'],
    table: ['parts', 'part'],
    id: ['part_id', 'part_number'],
    search: ['part_number', ['part_description', 'description']],
    display: ['part_description', 'description'],
    context: ['part_number', 'category', 'unit_price', 'vendor_id'],
    filters: { category: 'category', vendor_id: 'vendor_id' },
  },
  purchase_order: {
    label: 'purchase orders',
    aliases: ['purchase_orders', 'purchase order', 'purchase orders', 'po', 'pos', 'order', 'orders'],
    table: ['purchase_orders', 'purchase_order'],
    id: ['purchase_order_id', 'purchase_number'],
    search: ['purchase_number'],
    context: ['vendor_id', 'status', 'order_date', 'total_amount'],
    filters: { status: 'status', vendor_id: 'vendor_id', order_date: 'order_date' },
    orderNumber: 'purchase_number',
    normaliseOrderNumber: normalisePurchaseNumber,
  },
} as const satisfies Record<string, EntityMapping>;

const identifier = z
  .string()
  .min(1)
  .max(63)
  .refine((s) => !s.includes('\u0000'), 'must not contain NUL');
const columnSpec = z.union([identifier, z.array(identifier).min(1)]);

const mappingSchema = z.object({
  label: z.string().min(1),
  aliases: z.array(z.string().min(1)).optional(),
  table: columnSpec,
  schema: identifier.optional(),
  id: columnSpec,
  search: z.array(columnSpec).min(1),
  display: columnSpec.optional(),
  context: z.array(columnSpec).optional(),
  filters: z.record(z.string().min(1), columnSpec).optional(),
  orderNumber: columnSpec.optional(),
  normaliseOrderNumber: z.custom<(raw: string) => string>((v) => typeof v === 'function').optional(),
});

/** The entity types a lookup knows, with every alias resolved to its canonical type. */
export interface EntityRegistry {
  mappings: ReadonlyMap<string, EntityMapping>;
  /** Lower-cased name or alias (spaces and hyphens as `_`) → canonical type. */
  aliases: ReadonlyMap<string, string>;
}

/** Lower-cases and turns spaces and hyphens into `_`: `Purchase Order` → `purchase_order`. */
export function entityTypeKey(text: string): string {
  return text
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/gu, '_');
}

/**
 * Merges `overrides` over {@link defaultEntityMappings} (same key: replaced) and checks them.
 * @throws TroupeError `TROUPE_SQL_MAPPING_INVALID` for a malformed mapping or a clashing alias.
 */
export function buildEntityRegistry(overrides: Readonly<Record<string, EntityMapping>> = {}): EntityRegistry {
  const merged: Record<string, EntityMapping> = { ...defaultEntityMappings, ...overrides };
  const mappings = new Map<string, EntityMapping>();
  const aliases = new Map<string, string>();
  const problems: string[] = [];
  for (const [type, mapping] of Object.entries(merged)) {
    const checked = mappingSchema.safeParse(mapping);
    if (!checked.success) {
      for (const issue of checked.error.issues)
        problems.push(zodIssues({ issues: [issue] }, type, { prefix: `${type}.` }));
      continue;
    }
    const canonical = entityTypeKey(type);
    mappings.set(canonical, mapping);
    for (const name of [type, ...(mapping.aliases ?? [])]) {
      const key = entityTypeKey(name);
      const owner = aliases.get(key);
      if (owner !== undefined && owner !== canonical)
        problems.push(`${type}: alias "${name}" is already used by ${owner}`);
      else aliases.set(key, canonical);
    }
  }
  if (problems.length > 0)
    throw new TroupeError('TROUPE_SQL_MAPPING_INVALID', `Invalid entity mapping: ${problems.join('; ')}`, {
      details: { problems },
    });
  return { mappings, aliases };
}

/** The alternates of a column spec, in order of preference. */
export function alternatesOf(spec: ColumnSpec): readonly string[] {
  return typeof spec === 'string' ? [spec] : spec;
}

/** The key a column spec has in rows and candidates: its first name. */
export function keyOf(spec: ColumnSpec): string {
  return alternatesOf(spec)[0] ?? '';
}
