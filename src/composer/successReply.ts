/**
 * The reply to a `success` envelope. One record reads as a sentence built on its stored name
 * ("Parts for Truck Inc — contact Mira Patel, 555-0100, sales@parts.com"); several records get a
 * count ("I found 12 vendors matching “Parts”."). Both carry the table preview.
 */
import type { ReplyParts } from './composedReply.js';
import type { ComposerConfig } from './composerConfig.js';
import { countOf, type EntityVocabulary } from './entityVocabulary.js';
import type { ToolResultEnvelope } from './envelope.js';
import { fieldPhrase, isIdColumn } from './fieldPhrases.js';
import { formatValue } from './formatValue.js';
import { lookupTarget, matchingPhrase } from './lookupTarget.js';
import { storedNameOf } from './storedName.js';
import { buildTablePreview } from './tablePreview.js';

/** Most field phrases in the one-line summary of a single record. */
export const maxSummaryPhrases = 4;

const comparable = (text: string) => text.normalize('NFKC').toLocaleLowerCase('en').replace(/\s+/gu, ' ');
const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

function singleSummary(
  envelope: ToolResultEnvelope,
  row: Readonly<Record<string, unknown>>,
  vocabulary: EntityVocabulary,
): string {
  const target = lookupTarget(envelope.query);
  const stored = storedNameOf(row, vocabulary);
  const phrases = Object.entries(row)
    .filter(([key]) => key !== stored?.column && !vocabulary.nameColumns.includes(key) && !isIdColumn(key))
    .map(([key, value]) => fieldPhrase(key, value))
    .filter((phrase): phrase is string => phrase !== undefined)
    .slice(0, maxSummaryPhrases);
  const details = phrases.length > 0 ? ` — ${phrases.join(', ')}` : '';
  if (stored === undefined)
    return `I found 1 ${vocabulary.singular}${matchingPhrase(target)}${details || '.'}`;
  const typed = target.typedName;
  const closest =
    envelope.match === 'fuzzy' && typed !== undefined && comparable(typed) !== comparable(stored.name)
      ? ` (closest match to “${typed}”)`
      : '';
  const name = vocabulary.nameIsNumber ? `${capitalised(vocabulary.singular)} ${stored.name}` : stored.name;
  if (details !== '') return `${name}${closest}${details}`;
  return vocabulary.nameIsNumber
    ? `I found ${vocabulary.singular} ${stored.name}${closest}.`
    : `I found the ${vocabulary.singular} ${stored.name}${closest}.`;
}

/** "Created the vendor Acme Widgets (id 1000)." — an action's new record, by its stored name. */
function createdSummary(row: Readonly<Record<string, unknown>>, vocabulary: EntityVocabulary): string {
  const stored = storedNameOf(row, vocabulary);
  const idKey = Object.keys(row).find(isIdColumn);
  const id = idKey === undefined ? undefined : row[idKey];
  const idText =
    typeof id === 'number' || typeof id === 'string' ? ` (id ${formatValue(idKey ?? 'id', id, 40)})` : '';
  return stored === undefined
    ? `Created the ${vocabulary.singular}${idText}.`
    : `Created the ${vocabulary.singular} ${stored.name}${idText}.`;
}

/**
 * Summary and table preview for a success. A single record (one row, one in total) gets the
 * natural sentence; otherwise the summary counts every matching row and the table shows the first
 * `config.tablePreviewLimit`.
 */
export function successReply(
  envelope: ToolResultEnvelope,
  vocabulary: EntityVocabulary,
  config: ComposerConfig,
): Pick<ReplyParts, 'summary' | 'table' | 'severity'> {
  const rows = envelope.rows ?? [];
  const total = Math.max(envelope.total_rows ?? rows.length, rows.length);
  const table = buildTablePreview(rows, total, config.tablePreviewLimit);
  const first = rows[0];
  const summary =
    envelope.source === 'action'
      ? createdSummary(first ?? {}, vocabulary)
      : first !== undefined && rows.length === 1 && total === 1
        ? singleSummary(envelope, first, vocabulary)
        : `I found ${countOf(total, vocabulary)}${matchingPhrase(lookupTarget(envelope.query), envelope.match === 'fuzzy')}.`;
  return table.keys.length > 0 ? { summary, table, severity: 'info' } : { summary, severity: 'info' };
}
