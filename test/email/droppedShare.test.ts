import { describe, expect, it } from 'vitest';
import { droppedShare, droppedShareByLines } from '../../src/email/droppedShare.js';
import { seededRandom } from '../support/seededRandom.js';

describe('how much of a profile an update dropped', () => {
  const profile = [
    '## Respond',
    '- questions from customers',
    '',
    '## Ignore',
    '- newsletters',
    '- emails like “weekly digest” from news@example.com',
  ].join('\n');

  it('counts the lines the update no longer holds, as a person would', () => {
    expect(droppedShare(profile, `${profile}\n- emails like “status” from ci@example.com`)).toBe(0);
    // The oldest line dropped for a size cap, one added: 1 of 5 non-empty lines gone.
    expect(droppedShare(profile, `${profile.split('\n').slice(1).join('\n')}\n- new`)).toBe(0.2);
    // A rewrite keeps nothing.
    expect(droppedShare(profile, 'Be nice to everyone.')).toBe(1);
    // Indentation and trailing spaces do not make a line new.
    expect(droppedShare(profile, profile.replace('- newsletters', '   - newsletters  '))).toBe(0);
    // A line kept only inside a longer one is gone.
    expect(droppedShare(profile, profile.replace('- newsletters', '- newsletters, except ours'))).toBe(0.2);
    expect(droppedShare('', 'anything')).toBe(0);
  });

  it('gives exactly what counting line by line gives, for any pair of texts', () => {
    const next = seededRandom(13);
    const words = ['- a', '- b', '## S', '', '  ', ' - a ', '- a, b', '\t- b', 'x\u2028', '- noted', '- c'];
    const line = () => words[Math.floor(next() * words.length)] as string;
    const text = (n: number) => Array.from({ length: n }, line).join('\n');
    for (let i = 0; i < 5_000; i++) {
      const before = text(Math.floor(next() * 14));
      const lines = before.split('\n');
      const shape = Math.floor(next() * 5);
      const after =
        shape === 0
          ? `${before}\n${line()}`
          : shape === 1
            ? [...lines.slice(Math.floor(next() * 10)), line()].join('\n')
            : shape === 2
              ? lines.map((l) => (next() < 0.2 ? line() : l)).join('\n')
              : shape === 3
                ? `${line()}\n${before}${next() < 0.5 ? '\n' : ''}`
                : text(Math.floor(next() * 14));
      expect(droppedShare(before, after), JSON.stringify({ before, after })).toBe(
        droppedShareByLines(before, after),
      );
    }
  });
  it('a line only part of which is in the update counts as dropped, wherever the rest of the profile sits', () => {
    const cases: [string, string, number][] = [
      ['a\nb', 'xa\nb', 0.5], // kept lines found, but the first starts mid-line
      ['a\nb', 'a\nbx', 0.5], // … or the last ends mid-line
      ['a\nb', 'xa\nb\na\nb', 0], // a later copy of the whole lines counts
      ['x\nb\nc', 'zx\nb\nc', 1 / 3], // a dropped first line is text before it on its line
      ['x\nb\nc', 'xz\nb\nc', 1 / 3], // … or text after it
      ['x\nb', 'b\n x y', 0.5], // … also on the update's last line
      ['x\nb', 'b\n  x  ', 0], // white space around a kept line does not drop it
    ];
    for (const [before, after, share] of cases) {
      expect(droppedShare(before, after), JSON.stringify({ before, after })).toBe(share);
      expect(droppedShareByLines(before, after)).toBe(share);
    }
  });
});
