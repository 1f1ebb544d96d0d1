/**
 * Text as the store keeps it (JSON, a memory version's source, a delta's literal text): in one
 * piece. `JSON.stringify` and concatenation give a tree of parts (with room to spare), which a
 * store holding the text for long would keep; reading a character makes V8 join a string into one
 * piece in place (a stored email record takes about a fifth less heap).
 */
export function kept(text: string): string {
  text.charCodeAt(0);
  return text;
}

/**
 * A copy of text cut from a longer string. A slice of 13 characters or more keeps the whole
 * string it was cut from; an old version's delta literal would keep the JSON it came from (twice
 * the delta's worth). Joining two halves and reading a character makes a string of its own.
 */
export function copied(text: string): string {
  const half = text.length >> 1;
  return kept(text.slice(0, half) + text.slice(half));
}
