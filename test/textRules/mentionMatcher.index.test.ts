/**
 * The indexed mention matcher gives exactly the answers of the scan it replaced: a copy of that
 * scan (src/textRules/mentionMatcher.ts at the commit before the index, unexported and renamed) is
 * the reference, and seeded random casts and messages (accents, case, punctuation, multi-word
 * names, aliases that prefix other names, emoji, unspaced scripts, names inside words, repeats)
 * must get the same ids in the same order from both.
 */
import { describe, expect, it } from 'vitest';
import { createMentionMatcher as createIndexedMatcher } from '../../src/textRules/mentionMatcher.js';
import { seededRandom } from '../support/seededRandom.js';

// ---- Reference: the previous implementation, verbatim apart from `export` and its name. ----

/** How people address an avatar: its id (platform mentions), name, emoji and aliases. */
interface AddressableAvatar {
  id: string;
  name: string;
  emoji?: string | undefined;
  aliases?: string[] | undefined;
}

/** Finds which avatars a message addresses. */
interface MentionMatcher {
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
function createReferenceMatcher(roster: readonly AddressableAvatar[]): MentionMatcher {
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

// ---- Seeded generation ----

const seeded = seededRandom;

class Gen {
  constructor(private readonly next: () => number) {}
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }
}

// Letters with accents (composed and not), case that changes length or depends on context (final
// sigma, dotted I, sharp s, titlecase digraph), astral letters and digits at either end, a lone
// combining mark.
const WORDS = (
  'luna Luna rose Rosé zoë Zoe zo lu lunatic moon moonie the oracle jean luc a b ab aa mo x_y o’neil r2 d2 ' +
  'Вера вера ΟΔΥΣΣΕΥΣ σ Σ İstanbul straße ǅemal 𝐀lpha 𐐀ee ab𝐀 𐐀 𝟘 e\u0301 \u0301 42 _ ﬁne'
).split(' ');
const UNSPACED_WORDS = 'さくら さん 李 李明 ハナ 元気 สมชาย ครับ 𠀀'.split(' ');
const EMOJI = '🌙 🎷 ☀️ ☀ 👩‍💻 👩 🇫🇷 🇫 ✨ ♥'.split(' ');
const PUNCTUATED = [...`c++ a.i. *star* @bob a|b -x- (luna) . ü. o' #1`.split(' '), 'r2-d2 (beta)'];
const JOINERS = [' ', ' ', ' ', '  ', '-', '.', '', '_', '\u00a0', '\t'];
const SEPARATORS = [
  ' ',
  ' ',
  ' ',
  ' ',
  '  ',
  '\t',
  '\n',
  ' \n ',
  '\u00a0',
  '\u3000',
  ', ',
  '. ',
  '!',
  '?',
  '-',
  '',
  '',
  '_',
  '(',
  ')',
  '「',
  '」',
  '、',
  ' @',
  '*',
  ':',
  '\u0301',
  '🌙',
];

function word(g: Gen): string {
  const r = g.int(10);
  if (r < 6) return g.pick(WORDS);
  if (r < 8) return g.pick(UNSPACED_WORDS);
  if (r < 9) return g.pick(EMOJI);
  return g.pick(PUNCTUATED);
}

/** A random astral emoji or CJK pair: enough distinct needles for the large-roster path. */
function rareNeedle(g: Gen): string {
  if (g.chance(0.5)) return String.fromCodePoint(0x1f300 + g.int(0x300));
  return String.fromCodePoint(0x4e00 + g.int(64), 0x4e00 + g.int(64));
}

function spell(g: Gen, text: string): string {
  const r = g.int(8);
  if (r === 0) return text.toUpperCase();
  if (r === 1) return text.toLowerCase();
  if (r === 2) return text.normalize('NFD');
  if (r === 3) return text.replace(/ /g, g.pick(['  ', '\t', '\n', '\u00a0']));
  return text;
}

function nameOf(g: Gen, taken: readonly string[]): string {
  if (taken.length > 0 && g.chance(0.08)) return spell(g, g.pick(taken)); // a name two avatars share
  const words = 1 + (g.chance(0.35) ? 1 + g.int(2) : 0);
  const parts: string[] = [];
  for (let i = 0; i < words; i++) parts.push(word(g));
  let name = parts.join(g.pick(JOINERS));
  if (g.chance(0.1)) name = ` ${name}  `;
  return spell(g, name);
}

function aliasOf(g: Gen, own: string, taken: readonly string[]): string {
  const r = g.int(6);
  const source = r < 2 || taken.length === 0 ? own : g.pick(taken);
  if (r < 4) {
    // A prefix of a name (a word, or a few letters): shorter names inside longer ones.
    const first = source.trim().split(/[\s\-._]+/u)[0] ?? source;
    return g.chance(0.7) ? first : source.slice(0, 1 + g.int(Math.max(1, source.length)));
  }
  if (r === 4) return g.pick(['', '   ', '\t']);
  return nameOf(g, taken);
}

/** Small casts are searched name by name; larger ones through the word index and the others' scan. */
function castOf(g: Gen, kind: number): AddressableAvatar[] {
  const large = kind === 2;
  const size = kind === 0 ? 1 + g.int(12) : 20 + g.int(60);
  const cast: AddressableAvatar[] = [];
  const taken: string[] = [];
  for (let i = 0; i < size; i++) {
    const name = large && g.chance(0.5) ? rareNeedle(g) : nameOf(g, taken);
    const aliases = g.chance(0.4)
      ? Array.from({ length: 1 + g.int(2) }, () => aliasOf(g, name, taken))
      : undefined;
    const emoji = g.chance(large ? 0.9 : 0.4) ? (large ? rareNeedle(g) : g.pick(EMOJI)) : undefined;
    cast.push({ id: `a${i}`, name, ...(aliases ? { aliases } : {}), ...(emoji ? { emoji } : {}) });
    taken.push(name, ...(aliases ?? []), ...(emoji ? [emoji] : []));
  }
  return cast;
}

/** Something the cast answers to, as a person might write it. */
function mentionIn(g: Gen, cast: readonly AddressableAvatar[]): string {
  const a = g.pick(cast);
  const labels = [a.name, ...(a.aliases ?? []), ...(a.emoji ? [a.emoji] : [])];
  return spell(g, g.pick(labels));
}

function messageOf(g: Gen, cast: readonly AddressableAvatar[]): string {
  const pieces = 1 + g.int(10);
  let text = '';
  for (let i = 0; i < pieces; i++) {
    const r = g.int(20);
    let piece: string;
    if (r < 9) piece = mentionIn(g, cast);
    else if (r < 15) piece = word(g);
    else if (r < 18)
      piece = mentionIn(g, cast) + word(g); // glued: a name inside a longer word
    else piece = word(g) + mentionIn(g, cast);
    text += (i === 0 ? '' : g.pick(SEPARATORS)) + piece;
  }
  if (g.chance(0.1)) text = `${text} ${text}`; // every name twice
  return g.chance(0.15) ? spell(g, text) : text;
}

function optionsOf(g: Gen, cast: readonly AddressableAvatar[]) {
  if (g.chance(0.5)) return undefined;
  const id = () => (g.chance(0.85) ? g.pick(cast).id : 'ghost');
  return {
    ...(g.chance(0.5) ? { platformMentions: Array.from({ length: g.int(4) }, id) } : {}),
    ...(g.chance(0.4) ? { replyToAvatarId: id() } : {}),
    ...(g.chance(0.6) ? { authorId: id() } : {}),
  };
}

// ---- Tests ----

describe('the indexed mention matcher answers like the scan it replaced', () => {
  it('on seeded random casts and messages', () => {
    const g = new Gen(seeded(20_240_611));
    let calls = 0;
    let withNames = 0;
    let largeCalls = 0;
    for (let c = 0; c < 3_000; c++) {
      const kind = c % 3;
      const cast = castOf(g, kind);
      const reference = createReferenceMatcher(cast);
      const indexed = createIndexedMatcher(cast);
      for (let m = 0; m < 8; m++) {
        const text = messageOf(g, cast);
        const options = optionsOf(g, cast);
        const expected = reference.find(text, options);
        const actual = indexed.find(text, options);
        if (actual.join('\u0000') !== expected.join('\u0000'))
          expect({ cast, text, options, actual }).toEqual({ cast, text, options, actual: expected });
        calls++;
        if (reference.find(text).length > 1) withNames++;
        if (kind > 0) largeCalls++;
      }
    }
    expect(calls).toBe(24_000);
    // The generator really exercises the matching: many messages name several avatars.
    expect(withNames).toBeGreaterThan(5_000);
    expect(largeCalls).toBe(16_000);
  });

  it('on the hand-written cases of mentionMatcher.test.ts and a few traps', () => {
    const cast: AddressableAvatar[] = [
      { id: 'luna', name: 'Luna', aliases: ['Moonie', 'the oracle', 'Lu'] },
      { id: 'luna-rose', name: 'Luna Rose' },
      { id: 'rose', name: 'Rose Luna' },
      { id: 'zoe', name: 'Zoë' },
      { id: 'milo', name: 'Milo', emoji: '🎷' },
      { id: 'moon', name: '🌙' },
      { id: 'sakura', name: 'さくら' },
      { id: 'cpp', name: 'C++' },
      { id: 'jl', name: 'Jean-Luc' },
      { id: 'dup', name: 'LUNA' },
    ];
    const texts = [
      'Luna Rose Luna',
      'Luna Rose, Luna Rose and luna',
      'rose luna rose',
      'Lunatic',
      'さくらさん、🌙🌙',
      'jean-luc and jean luc',
      'c++c++ c++',
      'Zoë'.normalize('NFD'),
      'lu luna lu',
      '🎷milo🎷',
    ];
    const reference = createReferenceMatcher(cast);
    const indexed = createIndexedMatcher(cast);
    for (const text of texts) expect(indexed.find(text)).toEqual(reference.find(text));
  });
});

describe('a large cast', () => {
  // 5,000 avatars with made-up, distinct names (and an alias and emoji each), plus a few known ones.
  const syllables = 'ka lo mi ne ru sa ti vo ze pa qu xe do fi gu'.split(' ');
  const cast: AddressableAvatar[] = [];
  for (let i = 0; cast.length < 5_000; i++) {
    const name = [i, i / 15, i / 225, i / 3375].map((k) => syllables[Math.floor(k) % 15]).join('');
    cast.push({
      id: `id-${i}`,
      name: `${name[0]?.toUpperCase()}${name.slice(1)} ${syllables[i % 7]}`,
      aliases: [`${name}x`],
      emoji: String.fromCodePoint(0x1f400 + (i % 500)),
    });
  }
  cast.splice(4_321, 0, { id: 'luna', name: 'Luna', aliases: ['Moonie'] });
  cast.push({ id: 'luna-rose', name: 'Luna Rose' }, { id: 'sakura', name: 'さくら', emoji: '🌸' });
  const matcher = createIndexedMatcher(cast);

  it('still finds the right avatars, in text order', () => {
    expect(matcher.find('hey luna!')).toEqual(['luna']);
    expect(matcher.find('Luna Rose and Moonie')).toEqual(['luna-rose', 'luna']);
    expect(matcher.find('Lunatic さくらさん')).toEqual(['sakura']);
    expect(matcher.find('ask Kalokaka lo, then 🌸')).toEqual(['id-15', 'sakura']);
    expect(matcher.find('kalokakax? Kalokaka')).toEqual(['id-15']);
    expect(matcher.find('🐁 and Runevolo lo')).toEqual(['id-1', 'id-4999']);
    expect(matcher.find('nobody here', { replyToAvatarId: 'luna', authorId: 'luna' })).toEqual([]);
  });

  it('agrees with the reference there too', () => {
    const reference = createReferenceMatcher(cast);
    for (const text of ['Luna Rose and Moonie', 'Kaloka ka 🌀 Lomika lo', 'さくら🌸 kalokax Luna'])
      expect(matcher.find(text)).toEqual(reference.find(text));
  });
});
