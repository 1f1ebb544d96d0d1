import { stemmer } from 'stemmer';

/** The parts of an initiative score, each from 0 to 1, kept so a decision can be explained. */
export interface InitiativeScore {
  score: number;
  attention: number;
  hunger: number;
  topic: number;
}

const WORD = /[\p{L}\p{N}]+/gu;
const LATIN_MARKS = /(\p{Script=Latin})\p{Mn}+/gu;
const ASCII_WORD = /^[a-z]+$/;

/**
 * A text's words as topic matching compares them, in order: Unicode-normalised (NFKC), lower-case,
 * accents taken off Latin letters (café = cafe; other scripts keep their marks), and English words
 * reduced to their stem with the Porter stemmer (comets = comet, engines = engine). Words of other
 * scripts are compared as written.
 */
export function wordsOf(text: string): string[] {
  // Plain ASCII needs no Unicode normalisation (most chat text): skip three passes over it.
  const folded = !NON_ASCII.test(text)
    ? text.toLowerCase()
    : text.normalize('NFKC').toLowerCase().normalize('NFD').replace(LATIN_MARKS, '$1').normalize('NFC');
  const words = folded.match(WORD) ?? [];
  for (let i = 0; i < words.length; i++) {
    const word = words[i] as string;
    if (ASCII_WORD.test(word)) words[i] = stemOf(word);
  }
  return words;
}

const NON_ASCII = /[^\p{ASCII}]/u;

/** Stems already computed: chat repeats its words, and the floor scans every unaddressed message. */
const stems = new Map<string, string>();
const STEMS_REMEMBERED = 20_000;

function stemOf(word: string): string {
  let stem = stems.get(word);
  if (stem === undefined) {
    stem = stemmer(word);
    if (stems.size >= STEMS_REMEMBERED) stems.clear(); // bounded: start over rather than grow
    stems.set(word, stem);
  }
  return stem;
}

/** Each avatar's topics as word sequences, made once per topics list (rosters are shared and immutable). */
const topicWords = new WeakMap<readonly string[], string[][]>();

function phrasesOf(topics: readonly string[]): string[][] {
  let phrases = topicWords.get(topics);
  if (!phrases) {
    phrases = topics.map(wordsOf).filter((p) => p.length > 0);
    topicWords.set(topics, phrases);
  }
  return phrases;
}

/** Scripts written without spaces between words: a topic in them is found inside a longer run. */
const UNSPACED =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;

/** True when `phrase` occurs in `words` as consecutive words. */
function containsPhrase(words: readonly string[], phrase: readonly string[]): boolean {
  const first = phrase[0];
  if (phrase.length === 1 && first !== undefined && UNSPACED.test(first))
    return words.some((w) => w.includes(first));
  for (
    let i = words.indexOf(first as string);
    i >= 0 && i + phrase.length <= words.length;
    i = words.indexOf(first as string, i + 1)
  ) {
    let j = 1;
    while (j < phrase.length && words[i + j] === phrase[j]) j++;
    if (j === phrase.length) return true;
  }
  return false;
}

/**
 * How many of the topics a message is about: a topic counts when all its words occur in the
 * message next to each other and in order, as {@link wordsOf} writes them ("I love old books"
 * is about "old books"; "the books are old" is not; "Comets!" is about "comet"). A one-word topic
 * in a script written without spaces (Japanese, Chinese, Thai) is found inside a longer run.
 */
export function topicHits(topics: readonly string[] | undefined, words: readonly string[]): number {
  if (!topics || topics.length === 0 || words.length === 0) return 0;
  let hits = 0;
  for (const phrase of phrasesOf(topics)) if (containsPhrase(words, phrase)) hits++;
  return hits;
}

/**
 * Initiative from recency (attention), hunger (time since the avatar last spoke, relative to the
 * active-speaker window) and topic (share of the avatar's topics the message is about, see
 * {@link topicHits}; two topics are enough for a full score).
 */
export function initiativeScore(input: {
  attention: number;
  lastSpokeAt: number | null;
  now: number;
  windowMs: number;
  topics: readonly string[] | undefined;
  /** The message's words, from {@link wordsOf}. */
  words: readonly string[];
}): InitiativeScore {
  const hunger =
    input.lastSpokeAt === null
      ? 1
      : Math.min(1, Math.max(0, input.now - input.lastSpokeAt) / Math.max(1, input.windowMs));
  const topics = input.topics ?? [];
  const hits = topicHits(topics, input.words);
  const topic = topics.length === 0 ? 0 : Math.min(1, hits / Math.min(2, topics.length));
  const attention = Math.min(1, Math.max(0, input.attention));
  return { score: 0.4 * attention + 0.3 * hunger + 0.3 * topic, attention, hunger, topic };
}
