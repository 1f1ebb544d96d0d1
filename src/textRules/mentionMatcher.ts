/** How people address an avatar: its id (platform mentions), name, emoji and aliases. */
export interface AddressableAvatar {
  id: string;
  name: string;
  emoji?: string | undefined;
  aliases?: string[] | undefined;
}

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
// "Luna" and neither does "Zoë" address "Zo".
const WORD_CHAR = /[\p{L}\p{M}\p{N}_]/u;
// Scripts written without spaces between words: a name there is followed directly by particles
// or honorifics ("さくらさん"), so no word boundary is required on that side.
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}]/u;
// Any whitespace other than single spaces: folded to one space so "Luna   Rose" finds "Luna Rose".
const ODD_SPACE = /\s\s|[^\S ]/u;
const SPACES = /\s+/gu;

interface Name {
  needle: string;
  avatarId: string;
  /** Require a non-word character (or the edge) before / after the needle. */
  boundedBefore: boolean;
  boundedAfter: boolean;
}

const fold = (s: string) => s.normalize('NFC').toLowerCase();

/** A word character? ASCII answered without a regular expression: this runs per candidate hit. */
function isWordChar(ch: string | undefined): boolean {
  if (ch === undefined) return false;
  const c = ch.charCodeAt(0);
  if (c < 128) return (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 95 || (c >= 65 && c <= 90);
  return WORD_CHAR.test(ch);
}

/**
 * Builds a matcher for a roster. Each name, alias and emoji is looked for literally (native
 * `indexOf`, no per-roster regular expression to compile when a channel activates) in the
 * case-folded, NFC-normalised text, and a hit counts only as a whole word: no word character right
 * before or after a name that starts or ends with one. Longer names win over shorter ones at the
 * same place ("Luna Rose" over "Luna"). Never substring-of-a-word or fuzzy matching (the specified
 * implementation did both).
 */
export function createMentionMatcher(roster: readonly AddressableAvatar[]): MentionMatcher {
  const known = new Set(roster.map((a) => a.id));
  const names: Name[] = [];
  for (const avatar of roster) {
    for (const raw of [avatar.name, ...(avatar.aliases ?? []), ...(avatar.emoji ? [avatar.emoji] : [])]) {
      const needle = fold(raw).trim().replace(SPACES, ' ');
      if (needle === '') continue;
      const chars = [...needle];
      const edge = (c: string | undefined) => c !== undefined && isWordChar(c) && !UNSPACED.test(c);
      names.push({
        needle,
        avatarId: avatar.id,
        boundedBefore: edge(chars[0]),
        boundedAfter: edge(chars.at(-1)),
      });
    }
  }
  // Longer first, so a longer name claims its span before a shorter one inside it.
  names.sort((a, b) => b.needle.length - a.needle.length);

  return {
    find(text, options = {}) {
      const found: string[] = [];
      const { authorId } = options;
      if (options.platformMentions)
        for (const id of options.platformMentions) addFound(found, known, authorId, id);
      addFound(found, known, authorId, options.replyToAvatarId);
      if (names.length === 0) return found;

      let folded = fold(text);
      if (ODD_SPACE.test(folded)) folded = folded.replace(SPACES, ' ');
      const hits: Hit[] = [];
      for (const n of names) {
        const at = firstHit(folded, n, hits);
        if (at >= 0) hits.push({ at, end: at + n.needle.length, avatarId: n.avatarId });
      }
      if (hits.length > 1) hits.sort((a, b) => a.at - b.at);
      for (const h of hits) addFound(found, known, authorId, h.avatarId);
      return found;
    },
  };
}

/** A name found in the text: where it starts and ends, and whose it is. */
interface Hit {
  at: number;
  end: number;
  avatarId: string;
}

// The helpers below are plain functions, not closures in `find`: a closure over a loop's `let`
// makes the engine allocate a scope for every turn of the loop (about 1.5 KB per message here).

/** Adds an avatar id to `found` once, never the author's and never one outside the roster. */
function addFound(
  found: string[],
  known: ReadonlySet<string>,
  authorId: string | undefined,
  id: string | undefined,
): void {
  if (id !== undefined && id !== authorId && known.has(id) && !found.includes(id)) found.push(id);
}

/** Where `n` first occurs in `folded` as a whole word outside the spans already hit; -1 if nowhere. */
function firstHit(folded: string, n: Name, hits: readonly Hit[]): number {
  for (let at = folded.indexOf(n.needle); at >= 0; at = folded.indexOf(n.needle, at + 1)) {
    const end = at + n.needle.length;
    if (n.boundedBefore && isWordChar(folded[at - 1])) continue;
    if (n.boundedAfter && isWordChar(folded[end])) continue;
    if (!overlapsHit(hits, at, end)) return at; // else: inside a longer name's hit
  }
  return -1;
}

function overlapsHit(hits: readonly Hit[], at: number, end: number): boolean {
  for (const h of hits) if (at < h.end && end > h.at) return true;
  return false;
}
