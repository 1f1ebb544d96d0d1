import type { AvatarProfile } from './floorTypes.js';

/** Finds which avatars a message addresses. */
export interface MentionMatcher {
  /**
   * Avatar ids addressed by a message, in order: platform mentions first, then the avatar replied
   * to, then names, aliases and emojis as they appear in the text. Never includes `authorId`.
   */
  find(
    text: string,
    options?: { platformMentions?: readonly string[]; replyToAvatarId?: string; authorId?: string },
  ): string[];
}

// Letters, marks, digits and underscore count as word characters in every script, so "Lunatic"
// does not address "Luna" and neither does "Zoë" address "Zo".
const WORD_BEFORE = '(?<![\\p{L}\\p{M}\\p{N}_])';
const WORD_AFTER = '(?![\\p{L}\\p{M}\\p{N}_])';

// Only the syntax characters: with the `u` flag, escaping anything else (such as `-`) is an error.
const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// Scripts written without spaces between words: a name there is followed directly by particles
// or honorifics ("さくらさん"), so no word boundary is required on that side.
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}]/u;

function namePattern(name: string): string | null {
  const trimmed = name.normalize('NFC').trim();
  if (trimmed === '') return null;
  const body = trimmed.split(/\s+/u).map(escapeRegExp).join('\\s+');
  // Only pad with word boundaries where the name itself starts/ends with a word character.
  const first = [...trimmed][0] ?? '';
  const last = [...trimmed].at(-1) ?? '';
  const before = /[\p{L}\p{M}\p{N}_]/u.test(first) && !UNSPACED.test(first) ? WORD_BEFORE : '';
  const after = /[\p{L}\p{M}\p{N}_]/u.test(last) && !UNSPACED.test(last) ? WORD_AFTER : '';
  return `${before}@?${body}${after}`;
}

/**
 * Builds a matcher for a roster: one compiled, case-insensitive, Unicode-aware regular expression
 * with a capture group per name, so a message is scanned once however many avatars there are.
 * Whole words only: no substring and no fuzzy matching (the seed's implementation fired on both).
 */
export function createMentionMatcher(roster: readonly AvatarProfile[]): MentionMatcher {
  const known = new Set(roster.map((a) => a.id));
  const entries: { pattern: string; avatarId: string; length: number }[] = [];
  for (const avatar of roster) {
    for (const name of [avatar.name, ...(avatar.aliases ?? []), ...(avatar.emoji ? [avatar.emoji] : [])]) {
      const pattern = namePattern(name);
      if (pattern) entries.push({ pattern, avatarId: avatar.id, length: name.length });
    }
  }
  // Longer names first so "Luna Rose" wins over "Luna" at the same position.
  entries.sort((a, b) => b.length - a.length);
  const regex = entries.length > 0 ? new RegExp(entries.map((e) => `(${e.pattern})`).join('|'), 'giu') : null;

  return {
    find(text, options = {}) {
      const found: string[] = [];
      const add = (id: string | undefined) => {
        if (id !== undefined && id !== options.authorId && known.has(id) && !found.includes(id))
          found.push(id);
      };
      for (const id of options.platformMentions ?? []) add(id);
      add(options.replyToAvatarId);
      if (regex) {
        regex.lastIndex = 0;
        const normalized = text.normalize('NFC');
        for (let m = regex.exec(normalized); m !== null; m = regex.exec(normalized)) {
          for (let g = 1; g < m.length; g++) {
            if (m[g] !== undefined) {
              add(entries[g - 1]?.avatarId);
              break;
            }
          }
        }
      }
      return found;
    },
  };
}
