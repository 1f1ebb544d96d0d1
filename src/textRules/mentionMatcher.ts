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
  /** Place in claiming order (longer first, then roster order); set once the names are sorted. */
  rank: number;
}

/**
 * The roster's needles, indexed so a message costs about the same whatever the roster's size.
 * Needles that start and end with a word character (bounded on both sides) can only match a whole
 * run of words, so they are looked up by the text's word runs; the rest (emoji, unspaced scripts,
 * punctuation at an edge) are looked up at every position that starts one of them.
 */
interface NameIndex {
  count: number;
  /** A small roster's names, in claiming order: searched one by one, with no index (set alone). */
  few: Name[] | undefined;
  words: Map<string, Name[]>;
  /** Each word-run prefix of a multi-word needle: a lookup extends a run only while one continues. */
  prefixes: Set<string>;
  /** The names not indexed by words, in claiming order. */
  others: Name[];
  /**
   * Other names searched one by one however many there are: those whose first unit starts needles
   * of more than {@link MAX_LENGTHS} lengths (emoji share one high surrogate), where trying every
   * length at every position cost more than the search it replaced.
   */
  scanned: Name[];
  otherNeedles: Map<string, Name[]>;
  /** The lengths of the other needles, longest first, by their first UTF-16 unit. */
  otherLengths: Map<number, number[]>;
  /** The lowest first unit of another needle: text units below it start none. */
  otherMinUnit: number;
}

/** A place where a name occurs as a whole word. */
interface Candidate {
  name: Name;
  at: number;
}

// Up to this many names, native `indexOf` per name beats looking at every text position.
const FEW_NAMES = 32;
/** Needle lengths one first unit may start before its names are searched one by one. */
const MAX_LENGTHS = 8;

const fold = (s: string) => s.normalize('NFC').toLowerCase();

/** A word character? ASCII answered without a regular expression: this runs per candidate hit. */
function isWordChar(ch: string | undefined): boolean {
  if (ch === undefined) return false;
  const c = ch.charCodeAt(0);
  if (c < 128) return (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 95 || (c >= 65 && c <= 90);
  return WORD_CHAR.test(ch);
}

// `isWordChar` of each UTF-16 unit beyond ASCII, filled in as met (0 unknown, 1 no, 2 yes): the
// word index asks it for every unit of every message.
const wordUnits = new Uint8Array(0x10000);

/** `isWordChar` of one UTF-16 unit (a lone surrogate is not a word character, as there). */
function isWordUnit(c: number): boolean {
  if (c < 128) return (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 95 || (c >= 65 && c <= 90);
  let known = wordUnits[c] ?? 0;
  if (known === 0) {
    known = WORD_CHAR.test(String.fromCharCode(c)) ? 2 : 1;
    wordUnits[c] = known;
  }
  return known === 2;
}

/**
 * Builds a matcher for a roster. Each name, alias and emoji is looked for literally (no
 * per-roster regular expression to compile when a channel activates) in the case-folded,
 * NFC-normalised text, and a hit counts only as a whole word: no word character right before or
 * after a name that starts or ends with one. Longer names win over shorter ones at the same place
 * ("Luna Rose" over "Luna"). Never substring-of-a-word or fuzzy matching (the specified
 * implementation did both).
 */
export function createMentionMatcher(roster: readonly AddressableAvatar[]): MentionMatcher {
  const known = new Set(roster.map((a) => a.id));
  const index = indexNames(namesOf(roster));

  return {
    find(text, options = {}) {
      const found: string[] = [];
      const { authorId } = options;
      if (options.platformMentions)
        for (const id of options.platformMentions) addFound(found, known, authorId, id);
      addFound(found, known, authorId, options.replyToAvatarId);
      if (index.count === 0) return found;

      let folded = fold(text);
      if (ODD_SPACE.test(folded)) folded = folded.replace(SPACES, ' ');
      // A small roster: each name searched in turn, in claiming order (no index, no candidates).
      const hits = index.few ? hitsOneByOne(folded, index.few) : claim(candidatesOf(folded, index));
      for (const h of hits) addFound(found, known, authorId, h.avatarId);
      return found;
    },
  };
}

/** Every non-blank name, alias and emoji of the roster, folded, in claiming order (ranked). */
function namesOf(roster: readonly AddressableAvatar[]): Name[] {
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
        rank: 0,
      });
    }
  }
  // Longer first, so a longer name claims its span before a shorter one inside it.
  names.sort((a, b) => b.needle.length - a.needle.length);
  names.forEach((n, i) => {
    n.rank = i;
  });
  return names;
}

function indexNames(names: readonly Name[]): NameIndex {
  const index: NameIndex = {
    count: names.length,
    // A small roster is searched name by name: native `indexOf` is quicker there.
    few: names.length <= FEW_NAMES ? [...names] : undefined,
    words: new Map(),
    prefixes: new Set(),
    others: [],
    scanned: [],
    otherNeedles: new Map(),
    otherLengths: new Map(),
    otherMinUnit: 0x10000,
  };
  if (index.few) return index;
  for (const n of names) {
    const { needle } = n;
    // Bounded by word units at both ends: every hit is a whole run of the text's words.
    const byWords =
      n.boundedBefore &&
      n.boundedAfter &&
      isWordUnit(needle.charCodeAt(0)) &&
      isWordUnit(needle.charCodeAt(needle.length - 1));
    if (byWords) addWordName(index, n);
    else addOtherName(index, n);
  }
  for (const [unit, lengths] of index.otherLengths)
    if (lengths.length > MAX_LENGTHS) index.otherLengths.delete(unit);
  index.scanned = index.others.filter((n) => !index.otherLengths.has(n.needle.charCodeAt(0)));
  return index;
}

function addWordName(index: NameIndex, n: Name): void {
  pushTo(index.words, n.needle, n);
  const { needle } = n;
  for (let i = 1; i < needle.length; i++)
    if (isWordUnit(needle.charCodeAt(i - 1)) && !isWordUnit(needle.charCodeAt(i)))
      index.prefixes.add(needle.slice(0, i));
}

function addOtherName(index: NameIndex, n: Name): void {
  index.others.push(n);
  pushTo(index.otherNeedles, n.needle, n);
  const unit = n.needle.charCodeAt(0);
  const lengths = index.otherLengths.get(unit) ?? [];
  if (!lengths.includes(n.needle.length)) lengths.push(n.needle.length);
  index.otherLengths.set(unit, lengths);
  index.otherMinUnit = Math.min(index.otherMinUnit, unit);
}

function pushTo(map: Map<string, Name[]>, key: string, n: Name): void {
  const list = map.get(key);
  if (list) list.push(n);
  else map.set(key, [n]);
}

/** Every whole-word hit of a word-indexed name: each run of words looked up from each word start. */
function findWordNames(folded: string, index: NameIndex, out: Candidate[]): void {
  if (index.words.size === 0) return;
  const len = folded.length;
  let at = 0;
  while (at < len) {
    if (!isWordUnit(folded.charCodeAt(at))) {
      at++;
      continue;
    }
    const next = runEnd(folded, at);
    for (let end = next; ; ) {
      const key = folded.slice(at, end);
      const names = index.words.get(key);
      if (names) for (const name of names) out.push({ name, at });
      if (!index.prefixes.has(key)) break;
      let start = end;
      while (start < len && !isWordUnit(folded.charCodeAt(start))) start++;
      if (start === len) break;
      end = runEnd(folded, start);
    }
    at = next;
  }
}

/** Where the run of word units starting at `at` ends. */
function runEnd(folded: string, at: number): number {
  let end = at;
  while (end < folded.length && isWordUnit(folded.charCodeAt(end))) end++;
  return end;
}

/** Every whole-word hit of every name of an indexed roster. */
function candidatesOf(folded: string, index: NameIndex): Candidate[] {
  const candidates: Candidate[] = [];
  findWordNames(folded, index, candidates);
  findOtherNames(folded, index, candidates);
  return candidates;
}

/** The spans the names claim, in text order, each name searched in turn (longest first). */
function hitsOneByOne(folded: string, names: readonly Name[]): Hit[] {
  const hits: Hit[] = [];
  for (const n of names) {
    const at = firstHit(folded, n, hits);
    if (at >= 0) hits.push({ at, end: at + n.needle.length, avatarId: n.avatarId });
  }
  if (hits.length > 1) hits.sort((a, b) => a.at - b.at);
  return hits;
}

/** Where `n` first occurs in `folded` as a whole word outside the spans already hit; -1 if nowhere. */
function firstHit(folded: string, n: Name, hits: readonly Hit[]): number {
  for (let at = folded.indexOf(n.needle); at >= 0; at = folded.indexOf(n.needle, at + 1))
    if (isWhole(folded, n, at) && !overlapsHit(hits, at, at + n.needle.length)) return at;
  return -1;
}

/** Every whole-word hit of the names not indexed by words: some one by one, the rest by position. */
function findOtherNames(folded: string, index: NameIndex, out: Candidate[]): void {
  scanEach(folded, index.scanned, out);
  for (let at = 0; at < folded.length; at++) {
    const unit = folded.charCodeAt(at);
    if (unit < index.otherMinUnit) continue;
    const lengths = index.otherLengths.get(unit);
    if (lengths === undefined) continue;
    for (const length of lengths) {
      if (at + length > folded.length) continue;
      const names = index.otherNeedles.get(folded.slice(at, at + length));
      if (names) for (const name of names) if (isWhole(folded, name, at)) out.push({ name, at });
    }
  }
}

/** Finds each of `names` by searching the text for it. */
function scanEach(folded: string, names: readonly Name[], out: Candidate[]): void {
  for (const name of names)
    for (let at = folded.indexOf(name.needle); at >= 0; at = folded.indexOf(name.needle, at + 1))
      if (isWhole(folded, name, at)) out.push({ name, at });
}

/** Whether `n` at `at` is a whole word: no word character against a bounded edge. */
function isWhole(folded: string, n: Name, at: number): boolean {
  if (n.boundedBefore && isWordChar(folded[at - 1])) return false;
  return !(n.boundedAfter && isWordChar(folded[at + n.needle.length]));
}

/**
 * The spans the names claim, in text order: in claiming order, each name takes its first hit that
 * no name before it took (a shorter name inside a longer one's hit is not a mention of its own).
 */
function claim(candidates: Candidate[]): Hit[] {
  const hits: Hit[] = [];
  if (candidates.length === 0) return hits;
  candidates.sort((a, b) => a.name.rank - b.name.rank || a.at - b.at);
  let claimed: Name | undefined;
  for (const { name, at } of candidates) {
    if (name === claimed) continue;
    const end = at + name.needle.length;
    if (overlapsHit(hits, at, end)) continue;
    hits.push({ at, end, avatarId: name.avatarId });
    claimed = name;
  }
  if (hits.length > 1) hits.sort((a, b) => a.at - b.at);
  return hits;
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

function overlapsHit(hits: readonly Hit[], at: number, end: number): boolean {
  for (const h of hits) if (at < h.end && end > h.at) return true;
  return false;
}
