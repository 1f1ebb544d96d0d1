/** A lookup the offline model recognised in a plain request. */
export interface LookupIntent {
  entity_type: 'vendor' | 'customer' | 'part' | 'purchase_order';
  entity_name?: string | undefined;
  order_number?: string | undefined;
}

const ORDER = /\b(PO[-\s]?\d{2,})\b/iu;
const TYPE_WORDS: [RegExp, LookupIntent['entity_type']][] = [
  [/\b(?:vendors?|suppliers?)\b/iu, 'vendor'],
  [/\b(?:customers?|clients?)\b/iu, 'customer'],
  [/\b(?:parts?|items?|sku)\b/iu, 'part'],
  [/\b(?:purchase\s+orders?|orders?|po)\b/iu, 'purchase_order'],
];
// "phone number for X", "email of X", "status of PO-1", "find vendor X", "look up X", "contact at X", "details on X"
const ASKS =
  /\b(?:phone(?:\s+number)?|telephone(?:\s+number)?|number|email(?:\s+address)?|e-mail|address|contact(?:\s+person)?|status|details?|info(?:rmation)?|city)\s+(?:for|of|at|on|about)\s+(.+)$|\b(?:find|look\s*up|lookup|search\s+for|show\s+me|who\s+is)\s+(.+)$/iu;

/**
 * Recognises a plain lookup request, so the offline model can answer "phone number for Parts for
 * Truck Inc" or "status of PO-1001" with the lookup tool and no language model. Returns undefined
 * for anything else: ordinary chat must not trigger database lookups.
 */
export function lookupIntent(text: string): LookupIntent | undefined {
  const order = ORDER.exec(text);
  if (order?.[1])
    return { entity_type: 'purchase_order', order_number: order[1].replace(/\s/gu, '-').toUpperCase() };
  const ask = ASKS.exec(text.trim());
  const rawName = ask?.[1] ?? ask?.[2];
  if (!rawName) return undefined;
  // A type word counts before the name ("vendor phone for X") or as its lower-case first word
  // ("customer X"); a capitalised one starts a name ("Parts for Truck Inc").
  const before = text.slice(0, text.length - rawName.length);
  let type: LookupIntent['entity_type'] = 'vendor';
  let name = rawName;
  for (const [word, entity] of TYPE_WORDS) {
    const leading = new RegExp(`^\\s*(?:the\\s+)?${word.source}\\s+`, 'u');
    // "parts for truck inc" is a name: no name starts with a preposition.
    if (leading.test(name) && !/^\s*(?:for|of|and|&|4)\b/iu.test(name.replace(leading, ''))) {
      type = entity;
      name = name.replace(leading, '');
      break;
    }
    if (word.test(before)) {
      type = entity;
      break;
    }
  }
  name = name
    .replace(/^\s*(?:the|a|an)\s+/iu, '')
    .replace(/[?!.]+\s*$/u, '')
    .replace(/\s+/gu, ' ')
    .trim();
  // Mentions of avatars or trailing courtesy do not belong to the name.
  name = name.replace(/\s*,?\s*(?:please|thanks|thank you)$/iu, '').trim();
  if (name.length < 2 || name.split(' ').length > 8) return undefined;
  return { entity_type: type, entity_name: name };
}
