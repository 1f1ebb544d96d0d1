/**
 * What a lookup was looking for, in words a reply can quote back: the typed name, the order
 * number or another identifier, and the filters. Everything is made one-line and clipped, since
 * it comes from user input.
 */
import type { EnvelopeFilter, EnvelopeQuery } from './envelope.js';
import { formatValue, labelInSentence, quoteable } from './formatValue.js';

/** The parts of a query a reply mentions. */
export interface LookupTarget {
  /** The name as the user (or the model) typed it, e.g. `Parts`. */
  typedName?: string;
  /** The order number as given, e.g. `PO-1001`. */
  orderNumber?: string;
  /** Another identifier from the query's extra keys (`part_identifier`), with its label. */
  identifier?: { label: string; value: string };
  /** `with status “open” and city “Calgary”`. */
  filters?: string;
}

const nonEmpty = (text: string | undefined) => (text === undefined || text === '' ? undefined : text);

function filterText(filter: EnvelopeFilter): string | undefined {
  const field = quoteable(filter.field, 40);
  if (field === '') return undefined;
  const value =
    typeof filter.value === 'string'
      ? `“${quoteable(filter.value, 40)}”`
      : filter.value === null
        ? 'empty'
        : formatValue(filter.field, filter.value, 40);
  return `${labelInSentence(field)} ${value}`;
}

/** Reads what `query` was looking for. */
export function lookupTarget(query: EnvelopeQuery): LookupTarget {
  const target: LookupTarget = {};
  const typedName = nonEmpty(query.entity_name === undefined ? undefined : quoteable(query.entity_name));
  if (typedName) target.typedName = typedName;
  const orderNumber = nonEmpty(
    query.order_number === undefined ? undefined : quoteable(query.order_number, 40),
  );
  if (orderNumber) target.orderNumber = orderNumber;
  for (const [key, value] of Object.entries(query)) {
    if (['entity_type', 'entity_name', 'order_number', 'filters'].includes(key)) continue;
    if (!/_(identifier|number|code|sku)$/u.test(key)) continue;
    if (typeof value !== 'string' && typeof value !== 'number') continue;
    const text = nonEmpty(quoteable(String(value), 40));
    if (text) {
      target.identifier = { label: labelInSentence(quoteable(key, 40)), value: text };
      break;
    }
  }
  const filters = (query.filters ?? []).map(filterText).filter((f): f is string => f !== undefined);
  if (filters.length > 0) target.filters = `with ${filters.join(' and ')}`;
  return target;
}

/**
 * How a list of results relates to the target: ` matching “Parts”`, ` numbered PO-1001`,
 * ` with part identifier “BP-100”`, then the filters. Empty when the query named nothing.
 * @param partly say "partly matching" (the results came from a fuzzy match)
 */
export function matchingPhrase(target: LookupTarget, partly = false): string {
  let phrase = '';
  if (target.typedName) phrase = ` ${partly ? 'partly matching' : 'matching'} “${target.typedName}”`;
  else if (target.orderNumber) phrase = ` numbered ${target.orderNumber}`;
  else if (target.identifier) phrase = ` with ${target.identifier.label} “${target.identifier.value}”`;
  if (target.filters) phrase += ` ${target.filters}`;
  return phrase;
}
