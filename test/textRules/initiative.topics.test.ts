/**
 * Initiative topics match as people write them: phrases, plurals and simple inflections, any case,
 * punctuation around them, accents on Latin letters, and scripts written without spaces.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { initiativeScore, topicHits, wordsOf } from '../../src/textRules/initiative.js';
import { fuzzRuns } from '../support/fuzzRuns.js';

const about = (topics: string[], text: string) => topicHits(topics, wordsOf(text));

describe('initiative topics', () => {
  it('match a multi-word topic as a phrase, in order', () => {
    expect(about(['old books'], 'I love old books')).toBe(1);
    expect(about(['steam engines'], 'Steam Engines! So loud.')).toBe(1);
    expect(about(['old books'], 'the books are old')).toBe(0);
    expect(about(['old books'], 'old, dusty books')).toBe(0);
  });

  it('match plurals and simple inflections both ways', () => {
    expect(about(['comet'], 'Comets tonight?')).toBe(1);
    expect(about(['comets'], 'a comet, look')).toBe(1);
    expect(about(['baking'], 'I baked bread')).toBe(1);
    expect(about(['telescopes'], 'my telescope is new')).toBe(1);
  });

  it('do not match a topic inside another word', () => {
    expect(about(['art'], 'what a party')).toBe(0);
    expect(about(['ice'], 'that is nice')).toBe(0);
  });

  it('match across case, Unicode forms and accents on Latin letters', () => {
    expect(about(['café'], 'CAFE later?')).toBe(1);
    expect(about(['cafe'], 'Café later?')).toBe(1);
    expect(about(['naïve art'], 'NAIVE ART show')).toBe(1);
    // A full-width Latin word is the same word once normalised (NFKC).
    expect(about(['jazz'], 'ｊａｚｚ night')).toBe(1);
  });

  it('find a topic written in a script without spaces inside a longer run', () => {
    expect(about(['ジャズ'], 'ジャズが好きです')).toBe(1);
    expect(about(['星'], '今夜は星がきれい')).toBe(1);
    expect(about(['ジャズ'], 'ロックが好き')).toBe(0);
  });

  it('score "I love old books" above zero for an avatar whose topic is "old books"', () => {
    const score = initiativeScore({
      attention: 0,
      lastSpokeAt: 0,
      now: 0,
      windowMs: 1_000,
      topics: ['old books'],
      words: wordsOf('I love old books'),
    });
    expect(score.topic).toBe(1);
  });
});

describe('initiative topics, as a property', () => {
  const word = fc.constantFrom('comet', 'engine', 'book', 'star', 'garden', 'train', 'story', 'river');
  const phrase = fc.array(word, { minLength: 1, maxLength: 3 });
  const filler = fc.array(fc.constantFrom('the', 'a', 'we', 'saw', 'today', 'really', 'and', 'then'), {
    maxLength: 5,
  });
  const styled = (w: string, style: number) =>
    style === 0
      ? w
      : style === 1
        ? w.toUpperCase()
        : style === 2
          ? `${w}s`
          : `${w[0]?.toUpperCase()}${w.slice(1)}`;

  it('a message containing the topic phrase, in any case, plural or with punctuation, is about it', () => {
    fc.assert(
      fc.property(
        phrase,
        filler,
        filler,
        fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 3, maxLength: 3 }),
        fc.constantFrom('', '!', '?', ',', '…'),
        (p, before, after, styles, punct) => {
          const written = p.map((w, i) => styled(w, styles[i] ?? 0)).join(' ');
          const text = `${before.join(' ')} ${written}${punct} ${after.join(' ')}`;
          expect(about([p.join(' ')], text), text).toBe(1);
        },
      ),
      { numRuns: fuzzRuns(300) },
    );
  });

  it('a message without one of the topic’s words is not about it', () => {
    fc.assert(
      fc.property(phrase, filler, (p, other) => {
        const missing = p[p.length - 1] as string;
        const text = [...p.slice(0, -1), ...other].filter((w) => w !== missing).join(' ');
        expect(about([p.join(' ')], text), text).toBe(0);
      }),
      { numRuns: fuzzRuns(300) },
    );
  });
});
