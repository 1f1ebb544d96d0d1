/**
 * `text` cut to at most `max` characters at a word boundary, ending in an ellipsis (which counts
 * toward `max`); trailing punctuation before the cut is dropped. Text within `max` is returned
 * unchanged. Used for greetings, summaries and excerpts alike.
 */
export function clipText(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, Math.max(1, max - 1));
  const space = cut.lastIndexOf(' ');
  return `${(space > max / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:.—-]+$/u, '')}…`;
}
