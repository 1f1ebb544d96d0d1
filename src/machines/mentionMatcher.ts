import type { AvatarProfile } from './floorTypes.js';

/** Finds which avatars a message addresses. */
export interface MentionMatcher {
  /**
   * Avatar ids addressed by a message, in order: platform mentions first, then the avatar replied
   * to, then names, aliases and emojis as they appear in the text. Never includes `authorId`.
   */
  find(
    text: string,
    options?: {
      platformMentions?: readonly string[] | undefined;
      replyToAvatarId?: string | undefined;
      authorId?: string | undefined;
    },
  ): string[];
}

// Letters, marks, digits and underscore make words in every script, so "Lunatic" does not address
// "Luna" and neither does "Zoë" address "Zo". One process-wide pattern: no per-roster regex to
// compile when a channel is activated.
const WORD = /[\p{L}\p{M}\p{N}_]+/gu;
const WORD_CHAR = /[\p{L}\p{M}\p{N}_]/u;
const WHOLE_WORDS = /^[\p{L}\p{M}\p{N}_]+(?:\s+[\p{L}\p{M}\p{N}_]+)*$/u;
// Scripts written without spaces between words: a name there is followed directly by particles
// or honorifics ("さくらさん"), so it is found inside a longer run of letters.
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}]/u;
const SPACE_ONLY = /^\s+$/u;

interface WordName {
  words: string[];
  avatarId: string;
}
interface OtherName {
  needle: string;
  avatarId: string;
  /** Require a non-word character (or the edge) before / after the needle. */
  boundedBefore: boolean;
  boundedAfter: boolean;
}

const fold = (s: string) => s.normalize('NFC').toLowerCase();

/**
 * Builds a matcher for a roster. Names made of whole words (the usual case) are looked up word by
 * word in a map keyed on their first word, so a message is scanned once whatever the roster size;
 * names with other characters ("C++", "R2-D2 (beta)", emojis, unspaced scripts) are found by a
 * literal search with the same whole-word rule at their word-character edges. Case-insensitive
 * and Unicode-aware; never substring-of-a-word or fuzzy (the seed's implementation did both).
 */
export function createMentionMatcher(roster: readonly AvatarProfile[]): MentionMatcher {
  const known = new Set(roster.map((a) => a.id));
  const byFirstWord = new Map<string, WordName[]>();
  const others: OtherName[] = [];
  for (const avatar of roster) {
    for (const raw of [avatar.name, ...(avatar.aliases ?? []), ...(avatar.emoji ? [avatar.emoji] : [])]) {
      const name = fold(raw).trim();
      if (name === '') continue;
      if (WHOLE_WORDS.test(name) && !UNSPACED.test(name)) {
        const words = name.split(/\s+/u);
        const first = words[0] as string;
        const list = byFirstWord.get(first) ?? [];
        list.push({ words, avatarId: avatar.id });
        // Longer names first, so "Luna Rose" wins over "Luna" at the same place.
        list.sort((a, b) => b.words.length - a.words.length);
        byFirstWord.set(first, list);
      } else {
        const chars = [...name];
        const edgeIsWord = (c: string | undefined) =>
          c !== undefined && WORD_CHAR.test(c) && !UNSPACED.test(c);
        others.push({
          needle: name,
          avatarId: avatar.id,
          boundedBefore: edgeIsWord(chars[0]),
          boundedAfter: edgeIsWord(chars.at(-1)),
        });
      }
    }
  }

  return {
    find(text, options = {}) {
      const found: string[] = [];
      const add = (id: string | undefined) => {
        if (id !== undefined && id !== options.authorId && known.has(id) && !found.includes(id))
          found.push(id);
      };
      for (const id of options.platformMentions ?? []) add(id);
      add(options.replyToAvatarId);
      if (byFirstWord.size === 0 && others.length === 0) return found;

      const folded = fold(text);
      const hits: { at: number; avatarId: string }[] = [];
      if (byFirstWord.size > 0) {
        // Parallel arrays rather than an object per word: this runs on every message.
        const words: string[] = [];
        const starts: number[] = [];
        const ends: number[] = [];
        WORD.lastIndex = 0;
        for (let m = WORD.exec(folded); m !== null; m = WORD.exec(folded)) {
          words.push(m[0]);
          starts.push(m.index);
          ends.push(m.index + m[0].length);
        }
        for (let i = 0; i < words.length; i++) {
          const candidates = byFirstWord.get(words[i] as string);
          if (!candidates) continue;
          for (const c of candidates) {
            if (matchesAt(words, starts, ends, i, c.words, folded)) {
              hits.push({ at: starts[i] as number, avatarId: c.avatarId });
              i += c.words.length - 1;
              break;
            }
          }
        }
      }
      for (const o of others) {
        for (let at = folded.indexOf(o.needle); at >= 0; at = folded.indexOf(o.needle, at + 1)) {
          const before = folded[at - 1];
          const after = folded[at + o.needle.length];
          if (o.boundedBefore && before !== undefined && WORD_CHAR.test(before)) continue;
          if (o.boundedAfter && after !== undefined && WORD_CHAR.test(after)) continue;
          hits.push({ at, avatarId: o.avatarId });
          break;
        }
      }
      if (hits.length > 1) hits.sort((a, b) => a.at - b.at);
      for (const h of hits) add(h.avatarId);
      return found;
    },
  };
}

function matchesAt(
  words: readonly string[],
  starts: readonly number[],
  ends: readonly number[],
  i: number,
  name: readonly string[],
  text: string,
): boolean {
  for (let k = 0; k < name.length; k++) {
    if (words[i + k] !== name[k]) return false;
    // Words of one name are separated by whitespace only ("Luna Rose", not "Luna-Rose").
    if (k > 0 && !SPACE_ONLY.test(text.slice(ends[i + k - 1], starts[i + k]))) return false;
  }
  return true;
}
