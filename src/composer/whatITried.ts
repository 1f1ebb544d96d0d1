/**
 * The "What I tried" footnote of an empty reply: one sentence, in the specified exact
 * wording, for each attempt flag that is true; false flags are left out.
 */
import type { EnvelopeAttempts } from './envelope.js';

/** The specified sentence for each attempt flag. */
export const attemptSentences = {
  exact: 'Tried exact match.',
  fuzzy: 'Also tried a partial (fuzzy) match.',
  schema_refreshed: 'Refreshed schema and retried.',
} as const satisfies Record<keyof EnvelopeAttempts, string>;

/** The footnote's sentences for `attempts`, in the order exact, fuzzy, schema refresh. */
export function whatITried(attempts: EnvelopeAttempts): string[] {
  const tried: string[] = [];
  if (attempts.exact) tried.push(attemptSentences.exact);
  if (attempts.fuzzy) tried.push(attemptSentences.fuzzy);
  if (attempts.schema_refreshed) tried.push(attemptSentences.schema_refreshed);
  return tried;
}
