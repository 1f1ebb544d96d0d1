/**
 * The words the composer uses for each kind of record: singular and plural nouns, where the
 * stored name lives in a row, the manual "Add New" path and the capability that allows creating
 * one. Unknown entity types get sensible generic words derived from their name.
 */
import type { ComposerConfig } from './composerConfig.js';
import { quoteable } from './formatValue.js';

/** How the composer talks about one entity type. */
export interface EntityVocabulary {
  /** Canonical type: `vendor`, `customer`, `part`, `purchase_order`, or the normalised given type. */
  type: string;
  /** `vendor`, `purchase order`. */
  singular: string;
  /** `vendors`, `purchase orders`. */
  plural: string;
  /** Row columns holding the stored name, in order of preference. */
  nameColumns: readonly string[];
  /** True when the stored name is a number (`PO-1001`): the summary says "Purchase order PO-1001". */
  nameIsNumber: boolean;
  /** The config flag that allows the agent to create one; unset: the agent never offers to. */
  capability?: 'canCreateVendor' | 'canCreateCustomer' | 'canCreatePart';
  /** The manual path in the business application's UI (`Vendors → Add New`). */
  addNewPath?: string;
}

const known = new Map<string, EntityVocabulary>(
  Object.entries({
    vendor: {
      type: 'vendor',
      singular: 'vendor',
      plural: 'vendors',
      nameColumns: ['vendor_name', 'name', 'display_name'],
      nameIsNumber: false,
      capability: 'canCreateVendor',
      addNewPath: 'Vendors → Add New',
    },
    customer: {
      type: 'customer',
      singular: 'customer',
      plural: 'customers',
      nameColumns: ['customer_name', 'name', 'display_name'],
      nameIsNumber: false,
      capability: 'canCreateCustomer',
      addNewPath: 'Customers → Add New',
    },
    part: {
      type: 'part',
      singular: 'part',
      plural: 'parts',
      nameColumns: ['part_description', 'description', 'part_name', 'name', 'display_name', 'part_number'],
      nameIsNumber: false,
      capability: 'canCreatePart',
      addNewPath: 'Parts → Add New',
    },
    purchase_order: {
      type: 'purchase_order',
      singular: 'purchase order',
      plural: 'purchase orders',
      nameColumns: ['purchase_number', 'order_number', 'po_number', 'display_name'],
      nameIsNumber: true,
    },
  } satisfies Record<string, EntityVocabulary>),
);

const aliases = new Map<string, string>(
  Object.entries({
    vendors: 'vendor',
    supplier: 'vendor',
    suppliers: 'vendor',
    customers: 'customer',
    client: 'customer',
    clients: 'customer',
    parts: 'part',
    item: 'part',
    items: 'part',
    purchase_orders: 'purchase_order',
    po: 'purchase_order',
    pos: 'purchase_order',
    order: 'purchase_order',
    orders: 'purchase_order',
  }),
);

/** `Purchase Order` → `purchase_order`. */
function typeKey(text: string): string {
  return text
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/gu, '_');
}

/** The vocabulary for an envelope's `query.entity_type` (aliases such as `supplier` included). */
export function vocabularyFor(entityType: string): EntityVocabulary {
  const key = typeKey(entityType);
  const found = known.get(aliases.get(key) ?? key);
  if (found) return found;
  const words = quoteable(key.replace(/_/gu, ' '), 40);
  const singular = words === '' ? 'record' : words;
  return {
    type: key,
    singular,
    plural: /s$/u.test(singular)
      ? singular
      : /[^aeiou]y$/u.test(singular)
        ? `${singular.slice(0, -1)}ies`
        : `${singular}s`,
    nameColumns: [`${key}_name`, 'name', 'display_name', 'title'],
    nameIsNumber: false,
  };
}

/** Whether `config` allows the agent to create a record of this type (never, without a capability). */
export function canCreate(vocabulary: EntityVocabulary, config: ComposerConfig): boolean {
  return vocabulary.capability !== undefined && config[vocabulary.capability];
}

/** "1 vendor", "3 vendors". */
export function countOf(n: number, vocabulary: EntityVocabulary): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? vocabulary.singular : vocabulary.plural}`;
}
