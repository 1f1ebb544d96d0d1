/** The longest name a webhook message may show. */
export const MAX_WEBHOOK_USERNAME = 80;

// Discord refuses a webhook name or per-message username containing these words (any case).
const RESERVED = /clyde|discord/giu;
// A Cyrillic letter that looks the same, so "Discordia" still reads as itself.
const LOOKALIKE: Record<string, string> = { c: '\u0441', C: '\u0421' };
// Made once: building a segmenter costs more than segmenting a name.
const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });

/**
 * An avatar's name as Discord accepts it for a webhook message: at most 80 characters (whole
 * graphemes), without "clyde" or "discord" (their `c` becomes a look-alike Cyrillic letter),
 * not one of the reserved names `everyone` / `here`; `fallback` (the avatar id) when nothing is left.
 */
export function webhookUsername(name: string, fallback: string): string {
  const segments = [...graphemes.segment(name.trim())];
  let clipped = '';
  for (const { segment } of segments) {
    if (clipped.length + segment.length > MAX_WEBHOOK_USERNAME) break;
    clipped += segment;
  }
  const safe = clipped.replace(RESERVED, (word) => word.replace(/[cC]/gu, (c) => LOOKALIKE[c] ?? c));
  if (safe === '' || /^(everyone|here)$/iu.test(safe)) return fallback.slice(0, MAX_WEBHOOK_USERNAME);
  return safe;
}
