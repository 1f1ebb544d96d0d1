import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { splitText } from '../../src/delivery/splitText.js';
import { isTroupeError } from '../../src/ports/troupeError.js';
import { fuzzRuns } from '../support/fuzzRuns.js';

const FENCE_LINE = /^ {0,3}(`{3,}|~{3,})/;

/** Non-whitespace content, fence lines (original or added) left out. */
const content = (text: string): string =>
  text
    .split('\n')
    .filter((line) => !FENCE_LINE.test(line))
    .join('\n')
    .replace(/\s+/g, '');

const fenceLines = (text: string): number => text.split('\n').filter((line) => FENCE_LINE.test(line)).length;

const graphemes = (text: string): string[] =>
  Array.from(new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(text), (s) => s.segment);

describe('splitText: limits and trivial texts', () => {
  it('rejects limits below 20 (or not whole numbers) with TROUPE_TRANSPORT_LIMIT_INVALID', () => {
    for (const limit of [19, 0, -5, 20.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      let caught: unknown;
      try {
        splitText('hello', limit);
      } catch (error) {
        caught = error;
      }
      expect(isTroupeError(caught) && caught.code).toBe('TROUPE_TRANSPORT_LIMIT_INVALID');
    }
    expect(splitText('hello', 20)).toEqual(['hello']);
  });

  it('returns [] for empty or blank text', () => {
    expect(splitText('', 2000)).toEqual([]);
    expect(splitText(' \n\t \r\n ', 2000)).toEqual([]);
    expect(splitText(' '.repeat(5000), 2000)).toEqual([]);
  });

  it('returns a text within the limit unchanged', () => {
    const text = '  Hello **there**\n\n```ts\nconst x = 1;\n```\n';
    expect(splitText(text, 2000)).toEqual([text]);
    expect(splitText('x'.repeat(2000), 2000)).toEqual(['x'.repeat(2000)]);
  });

  it('counts UTF-16 code units, as Discord does', () => {
    const text = '😀'.repeat(1000); // 2000 code units
    expect(splitText(text, 2000)).toEqual([text]);
    const parts = splitText(`${text}😀`, 2000);
    expect(parts).toHaveLength(2);
    expect(parts.map((p) => p.length)).toEqual([2000, 2]);
  });
});

describe('splitText: where it breaks', () => {
  it('prefers a paragraph break over later line breaks', () => {
    const text = 'First paragraph.\n\nSecond one starts\nand goes on\nfor a while longer than fits.';
    expect(splitText(text, 60)).toEqual([
      'First paragraph.',
      'Second one starts\nand goes on\nfor a while longer than fits.',
    ]);
  });

  it('prefers a line break over later sentence ends', () => {
    const text = 'A heading line\nOne. Two. Three. Four. Five. Six. Seven. Eight.';
    expect(splitText(text, 40)[0]).toBe('A heading line');
  });

  it('prefers a sentence end over later spaces', () => {
    const text = 'This is the first sentence. And this second one is quite a bit longer.';
    expect(splitText(text, 50)).toEqual([
      'This is the first sentence.',
      'And this second one is quite a bit longer.',
    ]);
  });

  it('knows sentence ends followed by closing quotes and CJK full stops', () => {
    expect(splitText('He said "Stop!" and then he walked away slowly.', 30)[0]).toBe('He said "Stop!"');
    const cjk = '今日は良い天気です。明日も晴れるでしょう。明後日は雨かもしれません。';
    const parts = splitText(cjk, 20);
    expect(parts[0]).toBe('今日は良い天気です。');
    expect(parts.join('')).toBe(cjk);
  });

  it('falls back to spaces, and trims whitespace at part boundaries', () => {
    const text = 'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu';
    const parts = splitText(text, 25);
    for (const part of parts) {
      expect(part.length).toBeLessThanOrEqual(25);
      expect(part).toBe(part.trim());
    }
    expect(parts.join(' ')).toBe(text);
  });

  it('hard-cuts only a single word longer than the limit', () => {
    const url = `https://example.com/${'a'.repeat(60)}`;
    const parts = splitText(`See ${url} now`, 30);
    expect(parts).toEqual(['See', url.slice(0, 30), url.slice(30, 60), `${url.slice(60)} now`]);
  });

  it('never cuts inside a grapheme cluster (ZWJ emoji, flags, combining accents)', () => {
    const family = '👨‍👩‍👧‍👦'; // 11 code units
    const flag = '🇫🇷';
    const accented = 'e\u0301';
    const word = `${family}${flag}${accented}`.repeat(8);
    const parts = splitText(word, 20);
    for (const part of parts) {
      expect(part.length).toBeLessThanOrEqual(20);
      expect(graphemes(part).every((g) => [family, flag, accented].includes(g))).toBe(true);
    }
    expect(parts.join('')).toBe(word);
  });

  it('never cuts inside a surrogate pair, even within an overlong cluster', () => {
    const math = '𝒳'.repeat(30);
    const parts = splitText(math, 21);
    expect(parts.map((p) => p.length)).toEqual([20, 20, 20]);
    // One cluster of 61 code units: cut between code points, never inside a pair.
    const zalgo = `a${'\u0301'.repeat(30)}${'😀'.repeat(15)}`;
    const cut = splitText(`${zalgo}${zalgo}`, 20);
    for (const part of cut) {
      expect(part.length).toBeLessThanOrEqual(20);
      expect(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/.test(part)).toBe(false);
    }
    expect(cut.join('')).toBe(`${zalgo}${zalgo}`);
  });
});

describe('splitText: code fences', () => {
  const code = Array.from({ length: 12 }, (_, i) => `  const value${i} = compute(${i});`).join('\n');
  const message = `Here is the fix:\n\n\`\`\`ts\n${code}\n\`\`\`\n\nThat should do it.`;

  it('closes a fence at the end of a part and reopens it with the language tag', () => {
    const parts = splitText(message, 120);
    expect(parts.length).toBeGreaterThan(2);
    for (const part of parts) {
      expect(part.length).toBeLessThanOrEqual(120);
      expect(fenceLines(part) % 2).toBe(0);
    }
    expect(parts[0]).toBe('Here is the fix:');
    const middle = parts.slice(1, -1);
    expect(middle.length).toBeGreaterThan(1);
    for (const part of middle) {
      expect(part.startsWith('```ts\n  const')).toBe(true);
      expect(part.endsWith('\n```')).toBe(true);
    }
    expect(parts.at(-1)).toMatch(/^```ts\n {2}const value\d+[\s\S]*\n```\n\nThat should do it\.$/);
    expect(content(parts.join('\n'))).toBe(content(message));
  });

  it('keeps the indentation of a continued code line', () => {
    const parts = splitText(message, 120);
    const reopened = parts.filter((p) => p.startsWith('```ts\n'));
    expect(reopened.length).toBeGreaterThan(0);
    for (const part of reopened) expect(part.split('\n')[1]).toMatch(/^ {2}const value/);
  });

  it('does not treat a blank line inside code as a paragraph break', () => {
    const text = `Intro text here.\n\n\`\`\`js\nfirst();\n\nsecond();\nthird();\n\`\`\``;
    expect(splitText(text, 50)).toEqual(['Intro text here.', '```js\nfirst();\n\nsecond();\nthird();\n```']);
  });

  it('handles tilde fences, longer backtick fences, and an unclosed fence', () => {
    const tilde = `~~~python\n${'print(1)\n'.repeat(8)}~~~`;
    for (const part of splitText(tilde, 40)) {
      expect(part.startsWith('~~~python\n')).toBe(true);
      expect(part.endsWith('\n~~~')).toBe(true);
    }
    const four = `\`\`\`\`md\n${'```inner```\n'.repeat(6)}\`\`\`\``;
    for (const part of splitText(four, 40)) {
      expect(part.startsWith('````md\n')).toBe(true);
      expect(part.endsWith('\n````')).toBe(true);
    }
    const unclosed = `Look:\n\`\`\`sh\n${'echo hello world\n'.repeat(6)}`;
    const parts = splitText(unclosed, 45);
    expect(parts.at(-1)?.startsWith('```sh\n')).toBe(true);
    expect(parts.at(-1)?.endsWith('```')).toBe(false);
    expect(content(parts.join('\n'))).toBe(content(unclosed));
  });

  it('splits a realistic Discord message under 2000', () => {
    const prose = 'This paragraph explains what the function does and why it matters. '.repeat(12);
    const block = `\`\`\`typescript\n${Array.from({ length: 80 }, (_, i) => `export const line${i} = ${i} * factor;`).join('\n')}\n\`\`\``;
    const text = `${prose}\n\n${block}\n\n${prose}`;
    const parts = splitText(text, 2000);
    expect(parts.length).toBeGreaterThan(2);
    for (const part of parts) {
      expect(part.length).toBeLessThanOrEqual(2000);
      expect(fenceLines(part) % 2).toBe(0);
    }
    expect(parts[0]).toBe(prose.trim());
    expect(content(parts.join('\n'))).toBe(content(text));
  });
});

// ---------------------------------------------------------------------------------------------
// Properties

const letters = fc.string({
  unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz'),
  minLength: 1,
  maxLength: 10,
});
const word = fc.oneof(
  { weight: 12, arbitrary: letters },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '👍',
      '👨‍👩‍👧',
      '🇯🇵',
      'e\u0301',
      '日本語',
      'naïve',
      '𝒳𝒴',
      '"quoted,"',
      '(aside)',
    ),
  },
  {
    weight: 1,
    arbitrary: fc.string({ unit: fc.constantFrom('x', 'y', '😀'), minLength: 25, maxLength: 90 }),
  },
);
const sentence = fc
  .tuple(fc.array(word, { minLength: 1, maxLength: 12 }), fc.constantFrom('.', '!', '?', ',', '', '…'))
  .map(([words, end]) => `${words.join(' ')}${end}`);
const paragraph = fc
  .tuple(fc.array(sentence, { minLength: 1, maxLength: 6 }), fc.constantFrom(' ', '\n'))
  .map(([sentences, glue]) => sentences.join(glue));
const codeBlock = fc
  .tuple(
    fc.constantFrom('```', '```ts', '```python', '~~~', '~~~sh', '````'),
    fc.array(fc.tuple(fc.constantFrom('', '  ', '    '), fc.array(letters, { minLength: 0, maxLength: 8 })), {
      minLength: 1,
      maxLength: 10,
    }),
  )
  .map(([open, lines]) => {
    const marker = /^[`~]+/.exec(open)?.[0] ?? '```';
    return `${open}\n${lines.map(([indent, words]) => indent + words.join(' ')).join('\n')}\n${marker}`;
  });
const markdown = fc
  .tuple(
    fc.array(fc.oneof({ weight: 3, arbitrary: paragraph }, { weight: 1, arbitrary: codeBlock }), {
      minLength: 1,
      maxLength: 8,
    }),
    fc.constantFrom('\n\n', '\n', '\n\n\n', ' \n \n'),
    fc.constantFrom('', ' ', '\n\n'),
  )
  .map(([blocks, glue, edge]) => `${edge}${blocks.join(glue)}${edge}`);
const limit = fc.integer({ min: 20, max: 200 });

describe('splitText: properties', () => {
  it('every part fits, none is empty or padded, and the content comes back in order', () => {
    fc.assert(
      fc.property(markdown, limit, (text, max) => {
        const parts = splitText(text, max);
        if (text.length <= max) {
          expect(parts).toEqual([text]);
          return;
        }
        expect(parts.length).toBeGreaterThan(0);
        for (const part of parts) {
          expect(part.length).toBeLessThanOrEqual(max);
          expect(part.trim()).not.toBe('');
          expect(part).toBe(part.trim());
          expect(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/.test(part)).toBe(false);
        }
        expect(parts.map(content).join('')).toBe(content(text));
      }),
      { numRuns: fuzzRuns(400) },
    );
  });

  it('leaves every part with balanced code fences when the text had them balanced', () => {
    fc.assert(
      fc.property(markdown, limit, (text, max) => {
        for (const part of splitText(text, max)) expect(fenceLines(part) % 2).toBe(0);
      }),
      { numRuns: fuzzRuns(300) },
    );
  });

  it('is idempotent: a part, split again, is itself', () => {
    fc.assert(
      fc.property(markdown, limit, (text, max) => {
        for (const part of splitText(text, max)) expect(splitText(part, max)).toEqual([part]);
      }),
      { numRuns: fuzzRuns(300) },
    );
  });

  it('never splits a grapheme cluster shorter than the limit', () => {
    fc.assert(
      fc.property(fc.array(word, { minLength: 1, maxLength: 60 }), limit, (words, max) => {
        const text = words.join('');
        const whole = new Set(graphemes(text));
        for (const part of splitText(text, max)) {
          for (const g of graphemes(part)) expect(whole.has(g)).toBe(true);
        }
      }),
      { numRuns: fuzzRuns(300) },
    );
  });

  it('keeps any text (arbitrary Unicode, no fences) within the limit and whole', () => {
    const noFences = fc.string({ unit: 'grapheme', maxLength: 600 }).map((s) => s.replace(/[`~]/g, 'q'));
    fc.assert(
      fc.property(noFences, limit, (text, max) => {
        const parts = splitText(text, max);
        for (const part of parts) {
          expect(part.length).toBeLessThanOrEqual(max);
          expect(part.trim()).not.toBe('');
        }
        expect(parts.join('').replace(/\s+/g, '')).toBe(text.replace(/\s+/g, ''));
      }),
      { numRuns: fuzzRuns(300) },
    );
  });
});
