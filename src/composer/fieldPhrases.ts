/**
 * Short phrases that describe one field of a record inside a sentence: `Calgary`,
 * `contact Mira Patel`, `status open`, `order date 2024-03-01`. Used for the one-line summary of
 * a single found record and for the context of disambiguation options.
 */
import { formatValue, labelInSentence } from './formatValue.js';

/** Fields whose value speaks for itself (a city, a phone number, an address). */
const plainFields = new Set([
  'city',
  'town',
  'state',
  'province',
  'region',
  'country',
  'address',
  'email',
  'email_address',
  'telephone',
  'telephone_number',
  'phone',
  'phone_number',
  'mobile',
  'website',
]);

/** Fields that name a person to contact. */
const contactFields = new Set(['contact', 'contact_person', 'contact_name']);

/** True for an identifier column (`id`, `vendor_id`, `vendorId`): not worth a phrase. */
export function isIdColumn(key: string): boolean {
  return /^id$|_id$|[a-z]Id$/u.test(key);
}

/**
 * A phrase for field `key` holding `value`, or undefined when the value is absent or blank.
 * @param maxChars longest value shown before it is clipped
 */
export function fieldPhrase(key: string, value: unknown, maxChars = 60): string | undefined {
  if (value === null || value === undefined || (typeof value === 'string' && value.trim() === ''))
    return undefined;
  const text = formatValue(key, value, maxChars);
  const normalised = key.toLowerCase();
  if (plainFields.has(normalised)) return text;
  if (contactFields.has(normalised)) return `contact ${text}`;
  return `${labelInSentence(key)} ${text}`;
}
