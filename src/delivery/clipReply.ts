import { clipText } from './clipText.js';

/** A sentence ends at `.`, `!`, `?` or `…`, maybe followed by closing quotes or brackets. */
const SENTENCE_END = /[.!?…]["'”’)\]]*(?=\s|$)/gu;

/**
 * A model reply cut to at most `max` characters: at the last sentence end that keeps at least half
 * of `max`, else at a word boundary with an ellipsis. Replies within `max` are returned unchanged.
 * Runs before preparation, so a runaway reply (megabytes from a looping model) never reaches the
 * transport as thousands of messages.
 */
export function clipReply(text: string, max: number): string {
  if (text.length <= max) return text;
  // One character past the cut shows whether a sentence end at the cut is really one.
  const window = text.slice(0, max + 1);
  let end = -1;
  for (const match of window.matchAll(SENTENCE_END)) {
    const after = match.index + match[0].length;
    if (after <= max) end = after;
  }
  return end >= max / 2 ? text.slice(0, end) : clipText(text, max);
}
