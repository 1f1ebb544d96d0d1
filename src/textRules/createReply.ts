/** "create vendor Acme Widgets": what kind of record to create, and its name. */
export interface CreateIntent {
  entityType: 'vendor' | 'customer' | 'part';
  name: string;
}

const CREATE =
  /^(?:please\s+)?(?:create|add|make|register|set\s+up)\s+(?:a\s+|an\s+|the\s+)?(?:new\s+)?(vendors?|suppliers?|customers?|clients?|parts?|items?)\b\s*(?:called|named)?\s*[“"']?(.+?)[”"']?[.!]*$/iu;

const TYPES: Record<string, CreateIntent['entityType']> = {
  vendor: 'vendor',
  supplier: 'vendor',
  customer: 'customer',
  client: 'customer',
  part: 'part',
  item: 'part',
};

/**
 * Recognises a request to create a record, in the words the composer's offer uses ("create vendor
 * Acme Widgets") and close variants ("add a new customer called Foo"). Undefined otherwise.
 */
export function createIntent(text: string): CreateIntent | undefined {
  const match = CREATE.exec(text.trim());
  const word = match?.[1]?.toLowerCase().replace(/s$/u, '');
  const name = match?.[2]?.replace(/\s+/gu, ' ').trim();
  const entityType = word === undefined ? undefined : TYPES[word];
  if (!entityType || !name || name.length > 120) return undefined;
  return { entityType, name };
}

/** How a reply during a create flow reads. */
export type CreateReply =
  | { kind: 'yes' }
  | { kind: 'no' }
  | { kind: 'correction'; column: string; value: string }
  | { kind: 'other'; text: string };

const YES =
  /^(?:y|yes|yep|yeah|sure|ok|okay|confirm(?:ed)?|go(?:\s+ahead)?|do\s+it|create\s+it|correct)[.!]*$/iu;
const NO = /^(?:n|no|nope|cancel|stop|never\s*mind|don'?t|abort|forget\s+it)[.!]*$/iu;
const CORRECTION =
  /^(?:no[,.]?\s+)?(?:(?:set|change)\s+)?(?:the\s+)?(.+?)\s+(?:is|=|:|to|should\s+be)\s+(.+?)$/iu;

/** Words people use for columns whose names say it differently. */
const SYNONYMS: Record<string, string[]> = {
  phone: ['telephone', 'phone'],
  tel: ['telephone', 'phone'],
  mail: ['email'],
  'e-mail': ['email'],
  contact: ['contact'],
  price: ['price'],
  description: ['description'],
  name: ['name'],
  number: ['number'],
};

/** The column a person's word for a field names ("phone" → `telephone_number`), if exactly one does. */
export function columnNamed(words: string, columns: readonly string[]): string | undefined {
  const key = words
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/gu, '_');
  const exact = columns.find((c) => c.toLowerCase() === key);
  if (exact) return exact;
  const parts = key.split('_');
  const wanted = parts.flatMap((p) => SYNONYMS[p] ?? [p]);
  const hits = columns.filter((c) => {
    const columnParts = c.toLowerCase().split('_');
    return parts.every((p) => (SYNONYMS[p] ?? [p]).some((w) => columnParts.includes(w)));
  });
  if (hits.length === 1) return hits[0];
  // "phone" may name telephone_number and phone_ext alike: the shorter name is the field itself.
  const byLength = [...hits].sort((a, b) => a.length - b.length);
  return wanted.length > 0 && byLength[0] !== undefined && byLength[0].length < (byLength[1]?.length ?? 0)
    ? byLength[0]
    : undefined;
}

/**
 * Reads a reply in a create flow: yes, no, a correction of one field ("phone is 555-0100",
 * "set city to Calgary") naming one of `columns`, or anything else (an answer to the question asked).
 */
export function readCreateReply(text: string, columns: readonly string[]): CreateReply {
  const trimmed = text.trim();
  if (YES.test(trimmed)) return { kind: 'yes' };
  if (NO.test(trimmed)) return { kind: 'no' };
  const correction = CORRECTION.exec(trimmed);
  if (correction?.[1] && correction[2]) {
    const column = columnNamed(correction[1], columns);
    const value = correction[2].replace(/^[“"']|[”"']$/gu, '').trim();
    if (column && value !== '') return { kind: 'correction', column, value };
  }
  return { kind: 'other', text: trimmed };
}
